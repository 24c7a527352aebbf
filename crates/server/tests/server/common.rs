//! A live node for REST, nodetool and metrics tests: an engine in a temporary directory, the
//! REST API and the Prometheus endpoint on free loopback ports, a stall detector.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use cairn_engine::model::{Mutation, Partition};
use cairn_engine::schema::TableSchema;
use cairn_engine::Database;
use cairn_engine::Wait;
use cairn_server::config::{AdminFace, Config, Overrides};
use cairn_server::metrics::MetricsSource;
use cairn_server::rest::guard::Guard;
use cairn_server::rest::{self, AdminBackend, EngineBackend, NodeInfo, RestServer};
use cairn_server::stall::StallDetector;
use std::sync::Arc;

pub use cairn_test_support::kv::{ck, insert, kv_schema, pk};

pub struct Node {
    pub dir: tempfile::TempDir,
    pub db: Arc<Database>,
    pub rt: tokio::runtime::Runtime,
    pub server: Option<RestServer>,
    pub port: u16,
    pub metrics: Option<RestServer>,
    pub metrics_port: u16,
    pub stalls: Arc<StallDetector>,
}

impl Node {
    /// A node with tables ks.t, ks.u and other.v (background compaction off, so each test
    /// decides when sstables merge).
    pub fn start() -> Node {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config::default();
        cfg.apply_overrides(&Overrides {
            data_dir: Some(dir.path().to_path_buf()),
            api_port: Some(0),
            ..Overrides::default()
        });
        let mut dbc = cfg.database_config();
        dbc.commitlog_segment_size = 1 << 20;
        let db = Arc::new(Database::open(dbc).unwrap());
        for (ks, t) in [("ks", "t"), ("ks", "u"), ("other", "v")] {
            db.create_table(schema(ks, t)).unwrap();
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let node = NodeInfo::from_config(&cfg, "11111111-2222-4333-8444-555555555555");
        let backend: Arc<dyn AdminBackend> = Arc::new(EngineBackend::new(db.clone(), node));
        let server = rt
            .block_on(rest::serve(
                cfg.api_addr().unwrap(),
                backend.clone(),
                Guard::open(AdminFace::Api),
            ))
            .unwrap();
        let port = server.local_addr().port();
        let stalls = Arc::new(
            StallDetector::start(rt.handle(), "test runtime", cfg.blocked_reactor_notify, 5)
                .unwrap(),
        );
        let source = MetricsSource::new(backend, Some(stalls.clone()), "scylla");
        let metrics = rt
            .block_on(rest::serve_with(
                "127.0.0.1:0".parse().unwrap(),
                "Prometheus",
                Arc::new(move |req| source.handle(req)),
                Guard::open(AdminFace::Prometheus),
            ))
            .unwrap();
        let metrics_port = metrics.local_addr().port();
        Node {
            dir,
            db,
            rt,
            server: Some(server),
            port,
            metrics: Some(metrics),
            metrics_port,
            stalls,
        }
    }

    pub fn client(&self) -> cairn_nodetool::client::Client {
        cairn_nodetool::client::Client::new("127.0.0.1", self.port)
    }

    /// Writes rows 0..n of partition `a` into ks.`table`.
    pub fn write(&self, table: &str, a: i32, n: i32) {
        let id = self.db.table("ks", table).unwrap().schema().id;
        for b in 0..n {
            self.db
                .apply(
                    vec![Mutation {
                        table: id,
                        key: pk(a),
                        update: insert(b, &format!("value-{a}-{b}"), 1000 + i64::from(b)),
                    }],
                    Wait::Allowed,
                )
                .unwrap();
        }
    }

    /// Applies `update` to partition `a` of ks.`table`.
    pub fn apply(&self, table: &str, a: i32, update: Partition) {
        let id = self.db.table("ks", table).unwrap().schema().id;
        self.db
            .apply(
                vec![Mutation {
                    table: id,
                    key: pk(a),
                    update,
                }],
                Wait::Allowed,
            )
            .unwrap();
    }

    pub fn sstables(&self, table: &str) -> usize {
        self.db.table_stats("ks", table).unwrap().sstable_count
    }

    /// The Prometheus page.
    pub fn scrape(&self) -> String {
        cairn_nodetool::client::Client::new("127.0.0.1", self.metrics_port)
            .get_text("/metrics")
            .unwrap()
    }

    /// Reads partition `a` of ks.`table` through the engine's read entry point.
    pub fn read(&self, table: &str, a: i32) -> usize {
        let t = self.db.table("ks", table).unwrap();
        let cmd = cairn_engine::ReadCommand::all(2_000_000_000, Wait::Allowed);
        t.read(&pk(a), &cmd).unwrap().map_or(0, |p| p.rows.len())
    }

    pub fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
        }
        if let Some(s) = self.metrics.take() {
            self.rt.block_on(s.shutdown());
        }
        self.stalls.stop();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.stop();
    }
}

/// [`kv_schema`] with background compaction off.
pub fn schema(ks: &str, t: &str) -> TableSchema {
    let mut s = kv_schema(ks, t);
    s.options.compaction = vec![
        ("class".into(), "SizeTieredCompactionStrategy".into()),
        ("enabled".into(), "false".into()),
    ];
    s
}
