//! A native-protocol server with a canned handler, for trying real drivers against the
//! protocol layer before the CQL executor exists.
//!
//! `cargo run -p cairn-server --example dummy_server -- 127.0.0.1:9042`
//!
//! It answers `system.local` with one plausible row, every other `system*` table with no
//! rows, and any other query with a row echoing the query text.

use bytes::Bytes;
use cairn_server::protocol::*;
use std::sync::Arc;

struct Dummy;

fn text(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

fn set_of_text(items: &[&str]) -> Option<Vec<u8>> {
    let mut v = (items.len() as i32).to_be_bytes().to_vec();
    for i in items {
        v.extend_from_slice(&(i.len() as i32).to_be_bytes());
        v.extend_from_slice(i.as_bytes());
    }
    Some(v)
}

fn rows(table: TableSpec, cols: Vec<(&str, ColumnType, Option<Vec<u8>>)>, n: usize) -> Reply {
    let md = Arc::new(ResultMetadata::for_table(
        table,
        cols.iter()
            .map(|(name, t, _)| (name.to_string(), t.clone()))
            .collect(),
    ));
    let mut b = RowsBuilder::new(cols.len());
    for _ in 0..n {
        b.push_row(cols.iter().map(|(_, _, v)| v.as_deref()));
    }
    match b.finish(md) {
        Ok(r) => Response::Result(ResultBody::Rows(r)).into(),
        Err(e) => e.into(),
    }
}

fn local_row() -> Reply {
    use ColumnType::*;
    let host_id = [0x5au8; 16];
    let schema_version = [0x11u8; 16];
    rows(
        TableSpec::new("system", "local"),
        vec![
            ("key", Varchar, text("local")),
            ("bootstrapped", Varchar, text("COMPLETED")),
            ("broadcast_address", Inet, Some(vec![127, 0, 0, 1])),
            ("cluster_name", Varchar, text("cairn")),
            ("cql_version", Varchar, text("3.4.5")),
            ("data_center", Varchar, text("datacenter1")),
            ("host_id", Uuid, Some(host_id.to_vec())),
            ("listen_address", Inet, Some(vec![127, 0, 0, 1])),
            (
                "partitioner",
                Varchar,
                text("org.apache.cassandra.dht.Murmur3Partitioner"),
            ),
            ("rack", Varchar, text("rack1")),
            ("release_version", Varchar, text("3.0.8")),
            ("rpc_address", Inet, Some(vec![127, 0, 0, 1])),
            ("schema_version", Uuid, Some(schema_version.to_vec())),
            ("tokens", Set(Box::new(Varchar)), set_of_text(&["0"])),
        ],
        1,
    )
}

impl Handler for Dummy {
    type Session = ();

    fn new_session(&self, info: &ConnectionInfo) {
        eprintln!(
            "session {} from {} v{} compression {:?} startup {:?}",
            info.id, info.peer, info.version, info.compression, info.startup.options
        );
    }

    async fn handle(&self, request: Request, _ctx: RequestContext<()>) -> Reply {
        match request {
            Request::Query(q) => {
                eprintln!("QUERY {}", q.query);
                let lower = q.query.to_lowercase();
                if lower.contains("system.local") {
                    local_row()
                } else if lower.contains("system") {
                    rows(
                        TableSpec::new("system", "any"),
                        vec![("x", ColumnType::Varchar, None)],
                        0,
                    )
                } else if let Some(ks) = lower.strip_prefix("use ") {
                    Response::Result(ResultBody::SetKeyspace(ks.trim_matches('"').to_string()))
                        .into()
                } else {
                    rows(
                        TableSpec::new("ks", "t"),
                        vec![("echo", ColumnType::Varchar, text(&q.query))],
                        1,
                    )
                }
            }
            Request::Prepare(p) => {
                eprintln!("PREPARE {}", p.query);
                Response::Result(ResultBody::Prepared(Prepared {
                    id: Bytes::from_static(&[7; 16]),
                    metadata: PreparedMetadata::default(),
                    result_metadata: Arc::new(ResultMetadata::default()),
                }))
                .into()
            }
            Request::Execute(_) | Request::Batch(_) => Response::Result(ResultBody::Void).into(),
            _ => CqlError::server("unsupported").into(),
        }
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9042".to_string());
    let server = Server::bind(addr, ServerConfig::default(), Dummy).await?;
    println!("listening on {}", server.local_addr());
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
