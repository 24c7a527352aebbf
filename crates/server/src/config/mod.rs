//! Node configuration: a YAML file with Cassandra's and ScyllaDB's key names
//! (`cassandra.yaml` / `scylla.yaml`), embedded defaults that work with no file, and
//! command-line overrides.
//!
//! Loading ([`Config::load`], [`Config::from_yaml_str`], [`Config::resolve`]):
//! - every key we use is checked; an invalid value is an error naming the key and its line;
//! - a key nobody knows is an error, as in Cassandra, with a "did you mean" hint;
//! - a key of Cassandra's or ScyllaDB's that Cairn does not use (`hinted_handoff_enabled`,
//!   `seed_provider`, …, see [`keys`]) is accepted and listed in one warning, so an
//!   existing `cassandra.yaml` starts a node;
//! - security settings fail closed: an authenticator, authorizer, role manager, encryption
//!   or audit setting that Cairn does not implement is an error naming the key, its line and
//!   what is supported — never accepted and ignored, which would run the node with less
//!   protection than the operator asked for (see [`keys::security_keys`]);
//! - every problem of the file is reported at once.
//!
//! Defaults listen on loopback only and keep data under `./data` (`data/data` and
//! `data/commitlog`), relative to the working directory, like ScyllaDB's `workdir`.
//! Both Cassandra's old key names (`commitlog_sync_period_in_ms: 10000`) and the
//! unit-carrying names of Cassandra 4.1+ (`commitlog_sync_period: 10000ms`,
//! `compaction_throughput: 64MiB/s`) are accepted.

//!
//! This file is the contract: [`Config`] and its parts, the errors, and what a loaded
//! configuration gives the node (directories, the engine's configuration, addresses). The
//! pieces: [`keys`] is the one table of keys (names, aliases, how each sets its field,
//! security and ignored keys) that both loading ([`load`]) and the "did you mean" hint
//! ([`suggest`]) read; `yaml` the YAML tree with lines; `units` Cassandra 4.1's durations,
//! sizes and rates; `settings` the configuration as `system_views.settings` shows it;
//! `encryption` the `client_encryption_options` and `server_encryption_options`; `admin` who
//! may use the REST API and the Prometheus endpoint.

mod admin;
mod encryption;
pub mod keys;
mod load;
mod setters;
mod settings;
mod suggest;
mod units;
mod yaml;

pub use admin::{is_loopback, AdminAccess, AdminFace};
pub use encryption::{
    cipher_suite_name, ClientEncryption, InternodeEncryption, ServerEncryption, TlsMode,
    TlsOptions, TlsProtocol,
};

use cairn_engine::commitlog::SyncMode;
use cairn_engine::{CommitFailurePolicy, DatabaseConfig, DiskFailurePolicy};
use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// One mebibyte, the unit of the old `_in_mb` keys.
const MIB: u64 = 1 << 20;

/// `commitlog_sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitlogSync {
    /// Acknowledge once in memory; sync every `commitlog_sync_period`.
    Periodic,
    /// Acknowledge once durable (concurrent writers share syncs). Cassandra's `group`
    /// mode maps here too.
    Batch,
}

/// `authenticator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authenticator {
    /// No authentication (the default).
    AllowAll,
    /// Username and password (SASL PLAIN), roles in `system_auth`.
    Password,
}

/// `authorizer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authorizer {
    /// Every user may do everything (the default, as in Cassandra).
    AllowAll,
    /// Permissions granted with GRANT are enforced (needs `PasswordAuthenticator`).
    Cassandra,
}

/// A node's configuration. Field names follow the YAML keys; sizes are in bytes and
/// periods are [`Duration`]s whatever unit the file used.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `cluster_name`.
    pub cluster_name: String,
    /// `listen_address`: the node's own address (shown in system.local).
    pub listen_address: String,
    /// `broadcast_address` (defaults to `listen_address`).
    pub broadcast_address: Option<String>,
    /// `rpc_address` (alias `native_transport_address`): where CQL listens.
    pub rpc_address: String,
    /// `broadcast_rpc_address` (defaults to `rpc_address`).
    pub broadcast_rpc_address: Option<String>,
    /// `storage_port`: internode messaging, on `listen_address` (Cassandra's 7000).
    pub storage_port: u16,
    /// `seed_provider`'s seeds (`SimpleSeedProvider`), as written; empty without a
    /// `seed_provider`: the node is a cluster of one that listens for no peers.
    pub seeds: Vec<String>,
    /// `native_transport_port`.
    pub native_transport_port: u16,
    /// `start_native_transport`.
    pub start_native_transport: bool,
    /// `native_transport_max_frame_size(_in_mb)`, in bytes.
    pub native_transport_max_frame_size: u64,
    /// `native_transport_max_concurrent_connections` (-1 = unlimited).
    pub native_transport_max_concurrent_connections: i64,
    /// `native_transport_max_concurrent_requests_in_bytes` (-1 = automatic).
    pub native_transport_max_concurrent_requests_in_bytes: i64,
    /// `api_address`: the REST admin API's address (ScyllaDB).
    pub api_address: String,
    /// `api_port` (ScyllaDB: 10000).
    pub api_port: u16,
    /// `prometheus_address`.
    pub prometheus_address: String,
    /// `prometheus_port` (ScyllaDB: 9180).
    pub prometheus_port: u16,
    /// `prometheus_prefix` (ScyllaDB: `scylla`, so dashboards carry over).
    pub prometheus_prefix: String,
    /// `api_authorization`, `api_encryption_options`, `api_allow_unauthenticated`: who may
    /// use the REST API (Cairn's keys, see [`AdminAccess`]).
    pub api_access: AdminAccess,
    /// The same for the Prometheus endpoint (`prometheus_authorization`, …).
    pub prometheus_access: AdminAccess,
    /// `workdir` (ScyllaDB): default parent of the data and commitlog directories.
    pub workdir: PathBuf,
    /// `data_file_directories` (one supported); empty = `workdir/data`.
    pub data_file_directories: Vec<PathBuf>,
    /// `commitlog_directory`; `None` = `workdir/commitlog`.
    pub commitlog_directory: Option<PathBuf>,
    /// `commitlog_sync`.
    pub commitlog_sync: CommitlogSync,
    /// `commitlog_sync_period(_in_ms)`.
    pub commitlog_sync_period: Duration,
    /// `commitlog_segment_size(_in_mb)`, in bytes.
    pub commitlog_segment_size: u64,
    /// `commitlog_total_space(_in_mb)`, in bytes: past it, tables are flushed so that old
    /// segments can be released (Cassandra's default, 8192 MiB).
    pub commitlog_total_space: u64,
    /// `memtable_flush_writers`.
    pub memtable_flush_writers: usize,
    /// `memtable_heap_space(_in_mb)` (also `memtable_total_space_in_mb`): all memtables
    /// together, in bytes.
    pub memtable_heap_space: u64,
    /// `memtable_cleanup_threshold`: a table's memtable is flushed at this fraction of the
    /// memtable space (`None`: a quarter).
    pub memtable_cleanup_threshold: Option<f64>,
    /// `compaction_throughput(_mb_per_sec)`, in MiB/s; 0 = unthrottled.
    pub compaction_throughput_mb_per_sec: u64,
    /// `concurrent_compactors`.
    pub concurrent_compactors: usize,
    /// `disk_access_mode`: `auto` and `mmap` (true, the default) read data files through a
    /// memory map in scans and compactions; `standard` and `mmap_index_only` use `pread`.
    pub map_sequential_reads: bool,
    /// `auto_snapshot`: snapshot a table before DROP TABLE, DROP KEYSPACE and TRUNCATE
    /// delete its data (Cassandra's default, true).
    pub auto_snapshot: bool,
    /// `incremental_backups`: hard-link every flushed or loaded sstable into its table's
    /// `backups/` (default false; `nodetool enablebackup` turns it on at run time).
    pub incremental_backups: bool,
    /// `disk_failure_policy`: what a corrupt sstable or a data file's I/O error does (`stop`,
    /// as Cassandra's shipped `cassandra.yaml` sets it; see `cairn_engine::fault`).
    pub disk_failure_policy: DiskFailurePolicy,
    /// `commit_failure_policy`: what a commitlog write or sync failure does (`stop`).
    pub commit_failure_policy: CommitFailurePolicy,
    /// `authenticator`.
    pub authenticator: Authenticator,
    /// `authorizer`.
    pub authorizer: Authorizer,
    /// `client_encryption_options`: TLS on the native port.
    pub client_encryption: ClientEncryption,
    /// `server_encryption_options`: TLS between nodes.
    pub server_encryption: ServerEncryption,
    /// `audit`, `audit_categories`, `audit_keyspaces`, `audit_tables`,
    /// `audit_unix_socket_path` (ScyllaDB's keys), `audit_queue_records` (Cairn's): the
    /// audit log.
    pub audit: cairn_cql::audit::AuditConfig,
    /// `slow_query_log_timeout(_in_ms)` and `trace_type_query_ttl` (`tracetype_query_ttl`
    /// in seconds): the slow-query log and how long trace rows live.
    pub tracing: cairn_cql::trace::TraceConfig,
    /// `num_tokens`.
    pub num_tokens: u32,
    /// `initial_token` (comma-separated tokens), if set.
    pub initial_token: Option<String>,
    /// `endpoint_snitch` (class name as written).
    pub endpoint_snitch: String,
    /// `partitioner` (only Murmur3Partitioner).
    pub partitioner: String,
    /// `blocked_reactor_notify_ms` (ScyllaDB): the stall detector's threshold.
    pub blocked_reactor_notify: Duration,
    /// `blocked_reactor_reports_per_minute` (ScyllaDB): stall reports logged a minute at most.
    pub blocked_reactor_reports_per_minute: u32,
    /// `permissions_validity(_in_ms)`: how long a role's permissions are cached (0: not).
    pub permissions_validity: Duration,
    /// `read_request_timeout(_in_ms)`.
    pub read_request_timeout: Duration,
    /// `write_request_timeout(_in_ms)`.
    pub write_request_timeout: Duration,
    /// `cas_contention_timeout(_in_ms)`: how long a conditional write or serial read may
    /// keep losing its Paxos round to others.
    pub cas_contention_timeout: Duration,
    /// `range_request_timeout(_in_ms)`.
    pub range_request_timeout: Duration,
    /// `request_timeout(_in_ms)`.
    pub request_timeout: Duration,
    /// `truncate_request_timeout(_in_ms)`.
    pub truncate_request_timeout: Duration,
    /// `tombstone_warn_threshold`.
    pub tombstone_warn_threshold: u64,
    /// `tombstone_failure_threshold`.
    pub tombstone_failure_threshold: u64,
    /// `materialized_views_enabled` (Cassandra 3's `enable_materialized_views`): CREATE
    /// MATERIALIZED VIEW allowed. On by default, as in ScyllaDB (Cassandra's is off).
    pub materialized_views_enabled: bool,
    /// `dynamic_data_masking_enabled`: columns may be masked (`MASKED WITH`, `ALTER … MASKED
    /// WITH`). Off by default, as in Cassandra 5.0.
    pub dynamic_data_masking_enabled: bool,
    /// `batch_size_warn_threshold(_in_kb)`, in bytes.
    pub batch_size_warn_threshold: u64,
    /// `batch_size_fail_threshold(_in_kb)`, in bytes.
    pub batch_size_fail_threshold: u64,
    /// `unlogged_batch_across_partitions_warn_threshold`.
    pub unlogged_batch_across_partitions_warn_threshold: u64,
    /// `row_cache_size(_in_mb)`: the row cache's budget in bytes, shared by every table (0 =
    /// no row cache). Cairn caches rows by default, as ScyllaDB does (Cassandra's default is
    /// 0); the cache grows with use, so an idle node holds none of it.
    pub row_cache_size: u64,
    /// `enable_cache` (ScyllaDB's key): false turns the row cache off whatever its size.
    pub enable_cache: bool,
    /// `index_cache_fraction` (ScyllaDB's key): the share of the row cache's budget that
    /// sstable index pages may take.
    pub index_cache_fraction: f64,
    /// The file the configuration was read from, if any.
    pub source: Option<PathBuf>,
    /// The line of each top-level key the file set (for errors found after loading, such as
    /// an admin face exposed without authentication); a key a command-line flag overrode
    /// is not listed.
    pub key_lines: Vec<(String, usize)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cluster_name: "Test Cluster".into(),
            listen_address: "127.0.0.1".into(),
            broadcast_address: None,
            rpc_address: "127.0.0.1".into(),
            broadcast_rpc_address: None,
            storage_port: 7000,
            seeds: Vec::new(),
            native_transport_port: 9042,
            start_native_transport: true,
            native_transport_max_frame_size: 16 * MIB,
            native_transport_max_concurrent_connections: -1,
            native_transport_max_concurrent_requests_in_bytes: -1,
            api_address: "127.0.0.1".into(),
            api_port: 10000,
            prometheus_address: "127.0.0.1".into(),
            prometheus_port: 9180,
            prometheus_prefix: "scylla".into(),
            api_access: AdminAccess::default(),
            prometheus_access: AdminAccess::default(),
            workdir: PathBuf::from("data"),
            data_file_directories: Vec::new(),
            commitlog_directory: None,
            commitlog_sync: CommitlogSync::Periodic,
            commitlog_sync_period: Duration::from_secs(10),
            commitlog_segment_size: 32 * MIB,
            commitlog_total_space: 8192 * MIB,
            memtable_flush_writers: 2,
            memtable_heap_space: 256 * MIB,
            memtable_cleanup_threshold: None,
            compaction_throughput_mb_per_sec: 0,
            concurrent_compactors: 2,
            map_sequential_reads: true,
            auto_snapshot: true,
            incremental_backups: false,
            disk_failure_policy: DiskFailurePolicy::Stop,
            commit_failure_policy: CommitFailurePolicy::Stop,
            authenticator: Authenticator::AllowAll,
            authorizer: Authorizer::AllowAll,
            client_encryption: ClientEncryption::default(),
            server_encryption: ServerEncryption::default(),
            audit: cairn_cql::audit::AuditConfig::default(),
            tracing: cairn_cql::trace::TraceConfig::default(),
            num_tokens: 16,
            initial_token: None,
            endpoint_snitch: "SimpleSnitch".into(),
            partitioner: "org.apache.cassandra.dht.Murmur3Partitioner".into(),
            blocked_reactor_notify: Duration::from_millis(25),
            blocked_reactor_reports_per_minute: 5,
            permissions_validity: Duration::from_millis(2000),
            read_request_timeout: Duration::from_millis(5000),
            write_request_timeout: Duration::from_millis(2000),
            cas_contention_timeout: Duration::from_millis(1000),
            range_request_timeout: Duration::from_millis(10000),
            request_timeout: Duration::from_millis(10000),
            truncate_request_timeout: Duration::from_millis(60000),
            tombstone_warn_threshold: 1000,
            tombstone_failure_threshold: 100_000,
            materialized_views_enabled: true,
            dynamic_data_masking_enabled: false,
            batch_size_warn_threshold: 5 << 10,
            batch_size_fail_threshold: 50 << 10,
            unlogged_batch_across_partitions_warn_threshold: 10,
            row_cache_size: 256 * MIB,
            enable_cache: true,
            index_cache_fraction: cairn_engine::cache::DEFAULT_INDEX_FRACTION,
            source: None,
            key_lines: Vec::new(),
        }
    }
}

/// Command-line overrides (`cairn serve` flags); each wins over the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--data-dir DIR`: data under `DIR/data`, commitlog under `DIR/commitlog`, whatever
    /// the file says (so several nodes can run side by side from one file).
    pub data_dir: Option<PathBuf>,
    /// `--native-port N`.
    pub native_port: Option<u16>,
    /// `--api-port N`.
    pub api_port: Option<u16>,
    /// `--metrics-port N`.
    pub metrics_port: Option<u16>,
    /// `--listen-address ADDR`: listen, rpc, api and prometheus addresses at once.
    pub listen_address: Option<String>,
}

/// A loaded configuration and what loading it had to say.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The configuration.
    pub config: Config,
    /// Warnings to log at startup (keys accepted but not used, …).
    pub warnings: Vec<String>,
}

/// One problem of a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line (0 when the problem has no line, e.g. the file is unreadable).
    pub line: usize,
    /// The key concerned (empty for syntax errors).
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// The configuration could not be loaded: every problem found, with lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `<string>`).
    pub source: String,
    /// The problems, in file order.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration {}", self.source)?;
        for p in &self.problems {
            f.write_str("\n  ")?;
            if p.line > 0 {
                write!(f, "line {}: ", p.line)?;
            }
            if !p.key.is_empty() {
                write!(f, "{}: ", p.key)?;
            }
            f.write_str(&p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Applies command-line overrides (not `--config`, which [`Config::resolve`] reads).
    pub fn apply_overrides(&mut self, o: &Overrides) {
        if let Some(dir) = &o.data_dir {
            self.workdir = dir.clone();
            self.data_file_directories.clear();
            self.commitlog_directory = None;
        }
        if let Some(p) = o.native_port {
            self.native_transport_port = p;
        }
        if let Some(p) = o.api_port {
            self.api_port = p;
        }
        if let Some(p) = o.metrics_port {
            self.prometheus_port = p;
        }
        if let Some(a) = &o.listen_address {
            self.listen_address = a.clone();
            self.rpc_address = a.clone();
            self.api_address = a.clone();
            self.prometheus_address = a.clone();
            self.key_lines.retain(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "listen_address"
                        | "rpc_address"
                        | "native_transport_address"
                        | "api_address"
                        | "prometheus_address"
                )
            });
        }
    }

    /// The line of the file where top-level key `key` was set, if the file set it (and no
    /// flag overrode it).
    pub fn key_line(&self, key: &str) -> Option<usize> {
        self.key_lines
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, line)| *line)
    }

    /// Where sstables live (`data_file_directories[0]`, else `workdir/data`).
    pub fn data_dir(&self) -> PathBuf {
        self.data_file_directories
            .first()
            .cloned()
            .unwrap_or_else(|| self.workdir.join("data"))
    }

    /// Where the commitlog lives (`commitlog_directory`, else `workdir/commitlog`).
    pub fn commitlog_dir(&self) -> PathBuf {
        self.commitlog_directory
            .clone()
            .unwrap_or_else(|| self.workdir.join("commitlog"))
    }

    /// The storage engine's configuration.
    pub fn database_config(&self) -> DatabaseConfig {
        let mut d = DatabaseConfig::new(&self.workdir);
        d.data_dir = self.data_dir();
        d.commitlog_dir = self.commitlog_dir();
        d.commitlog_sync = match self.commitlog_sync {
            CommitlogSync::Periodic => SyncMode::Periodic {
                period: self.commitlog_sync_period,
            },
            CommitlogSync::Batch => SyncMode::Batch,
        };
        d.commitlog_segment_size = self.commitlog_segment_size;
        d.commitlog_total_space = self.commitlog_total_space;
        let total = usize::try_from(self.memtable_heap_space).unwrap_or(usize::MAX);
        d.memtable_total_space = total;
        d.memtable_flush_threshold = match self.memtable_cleanup_threshold {
            Some(t) => ((total as f64) * t) as usize,
            None => total / 4,
        }
        .max(1);
        d.flush_writers = self.memtable_flush_writers;
        d.compaction.concurrent_compactors = self.concurrent_compactors;
        d.compaction.throughput_bytes_per_sec =
            self.compaction_throughput_mb_per_sec.saturating_mul(MIB);
        d.compaction.backlog_normalization_bytes = self.memtable_heap_space;
        d.map_sequential_reads = self.map_sequential_reads;
        d.auto_snapshot = self.auto_snapshot;
        d.incremental_backups = self.incremental_backups;
        d.disk_failure_policy = self.disk_failure_policy;
        d.commit_failure_policy = self.commit_failure_policy;
        d.index_cache_fraction = self.index_cache_fraction;
        d.row_cache_bytes = if self.enable_cache {
            usize::try_from(self.row_cache_size).unwrap_or(usize::MAX)
        } else {
            0
        };
        d
    }

    /// The CQL listener's address.
    pub fn native_addr(&self) -> std::io::Result<SocketAddr> {
        socket_addr(&self.rpc_address, self.native_transport_port)
    }

    /// The REST admin API's address.
    pub fn api_addr(&self) -> std::io::Result<SocketAddr> {
        socket_addr(&self.api_address, self.api_port)
    }

    /// The Prometheus endpoint's address.
    pub fn prometheus_addr(&self) -> std::io::Result<SocketAddr> {
        socket_addr(&self.prometheus_address, self.prometheus_port)
    }
}

/// Opens (and recovers) the node's storage engine with every setting of `config`, and
/// logs what startup found.
pub fn open_database(config: &Config) -> cairn_engine::Result<cairn_engine::Database> {
    let db = cairn_engine::Database::open(config.database_config())?;
    let r = db.recovery_report();
    tracing::info!(
        tables = db.tables().len(),
        replayed = r.mutations_replayed,
        segments = r.replay.segments,
        problems = r.replay.problems.len(),
        "storage engine ready: data {}, commitlog {}",
        config.data_dir().display(),
        config.commitlog_dir().display()
    );
    Ok(db)
}

/// Resolves `host:port` (an IP address or a host name) to its first address.
pub fn socket_addr(host: &str, port: u16) -> std::io::Result<SocketAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (host, port).to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("address {host} resolves to nothing"),
        )
    })
}
