//! Node configuration: a YAML file with Cassandra's and ScyllaDB's key names
//! (`cassandra.yaml` / `scylla.yaml`), embedded defaults that work with no file, and
//! command-line overrides.
//!
//! Loading ([`Config::load`], [`Config::from_yaml_str`], [`Config::resolve`]):
//! - every key we use is checked; an invalid value is an error naming the key and its line;
//! - a key nobody knows is an error, as in Cassandra, with a "did you mean" hint;
//! - a key of Cassandra's or ScyllaDB's that Cairn does not use (`hinted_handoff_enabled`,
//!   `seed_provider`, …, see [`IGNORED_KEYS`]) is accepted and listed in one warning, so an
//!   existing `cassandra.yaml` starts a node;
//! - security settings fail closed: an authenticator, authorizer, role manager, encryption
//!   or audit setting that Cairn does not implement is an error naming the key, its line and
//!   what is supported — never accepted and ignored, which would run the node with less
//!   protection than the operator asked for (see [`SECURITY_KEYS`]);
//! - every problem of the file is reported at once.
//!
//! Defaults listen on loopback only and keep data under `./data` (`data/data` and
//! `data/commitlog`), relative to the working directory, like ScyllaDB's `workdir`.
//! Both Cassandra's old key names (`commitlog_sync_period_in_ms: 10000`) and the
//! unit-carrying names of Cassandra 4.1+ (`commitlog_sync_period: 10000ms`,
//! `compaction_throughput: 64MiB/s`) are accepted.

use cairn_engine::commitlog::SyncMode;
use cairn_engine::DatabaseConfig;
use saphyr_parser::{Event, Parser, ScalarStyle};
use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// Every user may do everything (the default, as in Cassandra). `CassandraAuthorizer`
    /// is refused until permissions are enforced.
    AllowAll,
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
    /// `authenticator`.
    pub authenticator: Authenticator,
    /// `authorizer`.
    pub authorizer: Authorizer,
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
    /// `read_request_timeout(_in_ms)`.
    pub read_request_timeout: Duration,
    /// `write_request_timeout(_in_ms)`.
    pub write_request_timeout: Duration,
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
    /// `batch_size_warn_threshold(_in_kb)`, in bytes.
    pub batch_size_warn_threshold: u64,
    /// `batch_size_fail_threshold(_in_kb)`, in bytes.
    pub batch_size_fail_threshold: u64,
    /// `row_cache_size(_in_mb)`, in bytes (0 = no row cache).
    pub row_cache_size: u64,
    /// The file the configuration was read from, if any.
    pub source: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cluster_name: "Test Cluster".into(),
            listen_address: "127.0.0.1".into(),
            broadcast_address: None,
            rpc_address: "127.0.0.1".into(),
            broadcast_rpc_address: None,
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
            authenticator: Authenticator::AllowAll,
            authorizer: Authorizer::AllowAll,
            num_tokens: 16,
            initial_token: None,
            endpoint_snitch: "SimpleSnitch".into(),
            partitioner: "org.apache.cassandra.dht.Murmur3Partitioner".into(),
            blocked_reactor_notify: Duration::from_millis(25),
            blocked_reactor_reports_per_minute: 5,
            read_request_timeout: Duration::from_millis(5000),
            write_request_timeout: Duration::from_millis(2000),
            range_request_timeout: Duration::from_millis(10000),
            request_timeout: Duration::from_millis(10000),
            truncate_request_timeout: Duration::from_millis(60000),
            tombstone_warn_threshold: 1000,
            tombstone_failure_threshold: 100_000,
            batch_size_warn_threshold: 5 << 10,
            batch_size_fail_threshold: 50 << 10,
            row_cache_size: 0,
            source: None,
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
    /// Reads and checks a YAML file.
    pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source: path.display().to_string(),
            problems: vec![Problem {
                line: 0,
                key: String::new(),
                message: format!("cannot read the file: {e}"),
            }],
        })?;
        let mut loaded = Config::from_yaml_str(&text, &path.display().to_string())?;
        loaded.config.source = Some(path.to_path_buf());
        Ok(loaded)
    }

    /// Parses and checks YAML text; `source` names it in messages.
    pub fn from_yaml_str(text: &str, source: &str) -> Result<Loaded, ConfigError> {
        let fail = |problems| ConfigError {
            source: source.to_string(),
            problems,
        };
        let root = parse_yaml(text).map_err(|p| fail(vec![p]))?;
        let entries = match root {
            None
            | Some(Node {
                value: Value::Null, ..
            }) => Vec::new(),
            Some(Node {
                value: Value::Map(entries),
                ..
            }) => entries,
            Some(n) => {
                return Err(fail(vec![Problem {
                    line: n.line,
                    key: String::new(),
                    message: "the configuration must be a mapping of `key: value` lines".into(),
                }]))
            }
        };
        let mut config = Config::default();
        let mut problems = Vec::new();
        let mut ignored = Vec::new();
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for (key, key_line, node) in &entries {
            if let Some((_, first)) = seen.iter().find(|(k, _)| k == key) {
                problems.push(Problem {
                    line: *key_line,
                    key: key.clone(),
                    message: format!("duplicate key (first set at line {first})"),
                });
                continue;
            }
            seen.push((key, *key_line));
            match apply_key(&mut config, key, node) {
                Ok(Outcome::Used) => {}
                Ok(Outcome::Ignored) => ignored.push(key.clone()),
                Ok(Outcome::Unknown) => {
                    let hint = suggest(key)
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    problems.push(Problem {
                        line: *key_line,
                        key: key.clone(),
                        message: format!(
                            "unknown property{hint}; like Cassandra, Cairn refuses to start \
                             with properties it does not know: remove it or fix its name"
                        ),
                    });
                }
                Err(message) => problems.push(Problem {
                    line: node.line,
                    key: key.clone(),
                    message,
                }),
            }
        }
        if let Some(line) = entries
            .iter()
            .find(|(k, _, _)| k == "memtable_cleanup_threshold")
            .map(|(_, l, _)| *l)
        {
            if let Some(t) = config.memtable_cleanup_threshold {
                if !(t > 0.0 && t <= 1.0) {
                    problems.push(Problem {
                        line,
                        key: "memtable_cleanup_threshold".into(),
                        message: format!("must be in (0, 1], not {t}"),
                    });
                }
            }
        }
        if !problems.is_empty() {
            problems.sort_by_key(|p| p.line);
            return Err(fail(problems));
        }
        let mut warnings = Vec::new();
        if !ignored.is_empty() {
            warnings.push(format!(
                "{source}: these properties are accepted for compatibility but Cairn does not \
                 use them: {}",
                ignored.join(", ")
            ));
        }
        Ok(Loaded { config, warnings })
    }

    /// The startup path: embedded defaults, then the file named by `--config` (if any),
    /// then the other flags.
    pub fn resolve(overrides: &Overrides) -> Result<Loaded, ConfigError> {
        let mut loaded = match &overrides.config {
            Some(path) => Config::load(path)?,
            None => Loaded {
                config: Config::default(),
                warnings: Vec::new(),
            },
        };
        loaded.config.apply_overrides(overrides);
        Ok(loaded)
    }

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
        }
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
        d
    }

    /// The configuration as `system_views.settings` shows it: (name, value) sorted by name,
    /// with Cassandra 4.1's unit-carrying names and values (`commitlog_sync_period:
    /// 10000ms`, `compaction_throughput: 64MiB/s`) and ScyllaDB's names for its own keys.
    pub fn settings(&self) -> Vec<(String, String)> {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let opt = |o: &Option<String>| o.clone().unwrap_or_default();
        let path = |p: &Path| p.display().to_string();
        let mut out: Vec<(&str, String)> = vec![
            ("cluster_name", self.cluster_name.clone()),
            ("listen_address", self.listen_address.clone()),
            ("broadcast_address", opt(&self.broadcast_address)),
            ("rpc_address", self.rpc_address.clone()),
            ("broadcast_rpc_address", opt(&self.broadcast_rpc_address)),
            (
                "native_transport_port",
                self.native_transport_port.to_string(),
            ),
            (
                "start_native_transport",
                self.start_native_transport.to_string(),
            ),
            (
                "native_transport_max_frame_size",
                size(self.native_transport_max_frame_size),
            ),
            (
                "native_transport_max_concurrent_connections",
                self.native_transport_max_concurrent_connections.to_string(),
            ),
            (
                "native_transport_max_concurrent_requests_in_bytes",
                self.native_transport_max_concurrent_requests_in_bytes
                    .to_string(),
            ),
            ("api_address", self.api_address.clone()),
            ("api_port", self.api_port.to_string()),
            ("prometheus_address", self.prometheus_address.clone()),
            ("prometheus_port", self.prometheus_port.to_string()),
            ("prometheus_prefix", self.prometheus_prefix.clone()),
            ("workdir", path(&self.workdir)),
            (
                "data_file_directories",
                format!("[{}]", path(&self.data_dir())),
            ),
            ("commitlog_directory", path(&self.commitlog_dir())),
            (
                "commitlog_sync",
                match self.commitlog_sync {
                    CommitlogSync::Periodic => "periodic",
                    CommitlogSync::Batch => "batch",
                }
                .into(),
            ),
            ("commitlog_sync_period", ms(self.commitlog_sync_period)),
            ("commitlog_segment_size", size(self.commitlog_segment_size)),
            ("commitlog_total_space", size(self.commitlog_total_space)),
            (
                "memtable_flush_writers",
                self.memtable_flush_writers.to_string(),
            ),
            ("memtable_heap_space", size(self.memtable_heap_space)),
            (
                "memtable_cleanup_threshold",
                self.memtable_cleanup_threshold
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
            ),
            (
                "compaction_throughput",
                format!("{}MiB/s", self.compaction_throughput_mb_per_sec),
            ),
            (
                "concurrent_compactors",
                self.concurrent_compactors.to_string(),
            ),
            (
                "disk_access_mode",
                if self.map_sequential_reads {
                    "mmap"
                } else {
                    "standard"
                }
                .into(),
            ),
            (
                "authenticator",
                match self.authenticator {
                    Authenticator::AllowAll => "AllowAllAuthenticator",
                    Authenticator::Password => "PasswordAuthenticator",
                }
                .into(),
            ),
            (
                "authorizer",
                match self.authorizer {
                    Authorizer::AllowAll => "AllowAllAuthorizer",
                }
                .into(),
            ),
            ("role_manager", "CassandraRoleManager".into()),
            ("num_tokens", self.num_tokens.to_string()),
            ("initial_token", opt(&self.initial_token)),
            ("endpoint_snitch", self.endpoint_snitch.clone()),
            ("partitioner", self.partitioner.clone()),
            (
                "blocked_reactor_notify_ms",
                self.blocked_reactor_notify.as_millis().to_string(),
            ),
            (
                "blocked_reactor_reports_per_minute",
                self.blocked_reactor_reports_per_minute.to_string(),
            ),
            ("read_request_timeout", ms(self.read_request_timeout)),
            ("write_request_timeout", ms(self.write_request_timeout)),
            ("range_request_timeout", ms(self.range_request_timeout)),
            ("request_timeout", ms(self.request_timeout)),
            (
                "truncate_request_timeout",
                ms(self.truncate_request_timeout),
            ),
            (
                "tombstone_warn_threshold",
                self.tombstone_warn_threshold.to_string(),
            ),
            (
                "tombstone_failure_threshold",
                self.tombstone_failure_threshold.to_string(),
            ),
            (
                "batch_size_warn_threshold",
                size(self.batch_size_warn_threshold),
            ),
            (
                "batch_size_fail_threshold",
                size(self.batch_size_fail_threshold),
            ),
            ("row_cache_size", size(self.row_cache_size)),
        ];
        out.sort_by(|a, b| a.0.cmp(b.0));
        out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
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

// ------------------------------------------------------------------------------------------
// Keys.

enum Outcome {
    Used,
    Ignored,
    Unknown,
}

/// Keys Cairn reads (for "did you mean" hints; `apply_key` is the authority).
pub const SUPPORTED_KEYS: &[&str] = &[
    "cluster_name",
    "listen_address",
    "broadcast_address",
    "rpc_address",
    "native_transport_address",
    "broadcast_rpc_address",
    "native_transport_port",
    "start_native_transport",
    "native_transport_max_frame_size_in_mb",
    "native_transport_max_frame_size",
    "native_transport_max_concurrent_connections",
    "native_transport_max_concurrent_requests_in_bytes",
    "api_address",
    "api_port",
    "prometheus_address",
    "prometheus_port",
    "prometheus_prefix",
    "workdir",
    "data_file_directories",
    "commitlog_directory",
    "commitlog_sync",
    "commitlog_sync_period_in_ms",
    "commitlog_sync_period",
    "commitlog_segment_size_in_mb",
    "commitlog_segment_size",
    "commitlog_total_space_in_mb",
    "commitlog_total_space",
    "memtable_flush_writers",
    "memtable_heap_space_in_mb",
    "memtable_heap_space",
    "memtable_total_space_in_mb",
    "memtable_cleanup_threshold",
    "compaction_throughput_mb_per_sec",
    "compaction_throughput",
    "concurrent_compactors",
    "disk_access_mode",
    "authenticator",
    "authorizer",
    "num_tokens",
    "initial_token",
    "endpoint_snitch",
    "partitioner",
    "blocked_reactor_notify_ms",
    "blocked_reactor_reports_per_minute",
    "read_request_timeout_in_ms",
    "read_request_timeout",
    "write_request_timeout_in_ms",
    "write_request_timeout",
    "range_request_timeout_in_ms",
    "range_request_timeout",
    "request_timeout_in_ms",
    "request_timeout",
    "truncate_request_timeout_in_ms",
    "truncate_request_timeout",
    "tombstone_warn_threshold",
    "tombstone_failure_threshold",
    "batch_size_warn_threshold_in_kb",
    "batch_size_warn_threshold",
    "batch_size_fail_threshold_in_kb",
    "batch_size_fail_threshold",
    "row_cache_size_in_mb",
    "row_cache_size",
    // The security keys (see SECURITY_KEYS).
    "role_manager",
    "network_authorizer",
    "cidr_authorizer",
    "internode_authenticator",
    "client_encryption_options",
    "server_encryption_options",
    "transparent_data_encryption_options",
    "jmx_encryption_options",
    "audit_logging_options",
    "audit",
    "native_transport_port_ssl",
    "auth_superuser_name",
    "auth_superuser_salted_password",
];

/// The security-relevant keys and what Cairn supports of each; anything else is refused at
/// start (fail closed). README's "Security settings" lists the same.
pub const SECURITY_KEYS: &[(&str, &str)] = &[
    (
        "authenticator",
        "AllowAllAuthenticator (default) or PasswordAuthenticator",
    ),
    ("authorizer", "AllowAllAuthorizer (default)"),
    ("role_manager", "CassandraRoleManager (default)"),
    ("network_authorizer", "AllowAllNetworkAuthorizer (default)"),
    ("cidr_authorizer", "AllowAllCIDRAuthorizer (default)"),
    (
        "internode_authenticator",
        "AllowAllInternodeAuthenticator (default)",
    ),
    (
        "client_encryption_options",
        "enabled: false and optional: false (no TLS yet)",
    ),
    (
        "server_encryption_options",
        "internode_encryption: none, enabled: false and optional: false (no TLS yet)",
    ),
    ("transparent_data_encryption_options", "enabled: false"),
    (
        "jmx_encryption_options",
        "enabled: false (Cairn has no JMX)",
    ),
    ("audit_logging_options", "enabled: false"),
    ("audit", "none (ScyllaDB's key)"),
    ("native_transport_port_ssl", "not set (no TLS port yet)"),
    (
        "auth_superuser_name",
        "not set (the default superuser is cassandra; change its password with ALTER ROLE)",
    ),
    (
        "auth_superuser_salted_password",
        "not set (the default superuser is cassandra; change its password with ALTER ROLE)",
    ),
];

/// Cassandra and ScyllaDB keys that Cairn accepts and does not use (a single node, no
/// hints, no streaming, no TLS yet, …). They produce one startup warning listing them.
pub const IGNORED_KEYS: &[&str] = &[
    // Cluster membership, gossip, tokens.
    "seed_provider",
    "allocate_tokens_for_keyspace",
    "allocate_tokens_for_local_replication_factor",
    "auto_bootstrap",
    "storage_port",
    "ssl_storage_port",
    "listen_interface",
    "listen_interface_prefer_ipv6",
    "listen_on_broadcast_address",
    "rpc_interface",
    "rpc_interface_prefer_ipv6",
    "rpc_port",
    "rpc_keepalive",
    "start_rpc",
    "rpc_server_type",
    "internode_compression",
    "inter_dc_tcp_nodelay",
    "phi_convict_threshold",
    "dynamic_snitch",
    "dynamic_snitch_update_interval_in_ms",
    "dynamic_snitch_update_interval",
    "dynamic_snitch_reset_interval_in_ms",
    "dynamic_snitch_reset_interval",
    "dynamic_snitch_badness_threshold",
    "streaming_connections_per_host",
    "stream_throughput_outbound_megabits_per_sec",
    "stream_throughput_outbound",
    "inter_dc_stream_throughput_outbound_megabits_per_sec",
    "inter_dc_stream_throughput_outbound",
    "streaming_keep_alive_period_in_secs",
    "streaming_keep_alive_period",
    "streaming_socket_timeout_in_ms",
    "internode_send_buff_size_in_bytes",
    "internode_recv_buff_size_in_bytes",
    "internode_application_send_queue_capacity_in_bytes",
    "internode_application_receive_queue_capacity_in_bytes",
    "internode_tcp_connect_timeout_in_ms",
    "internode_tcp_user_timeout_in_ms",
    "cross_node_timeout",
    "consistent_rangemovement",
    "ring_delay_ms",
    // Hints and batchlog.
    "hinted_handoff_enabled",
    "hinted_handoff_disabled_datacenters",
    "max_hint_window_in_ms",
    "max_hint_window",
    "hinted_handoff_throttle_in_kb",
    "hinted_handoff_throttle",
    "max_hints_delivery_threads",
    "hints_directory",
    "hints_flush_period_in_ms",
    "hints_flush_period",
    "max_hints_file_size_in_mb",
    "max_hints_file_size",
    "max_hints_size_per_host",
    "auto_hints_cleanup_enabled",
    "transfer_hints_on_decommission",
    "hints_compression",
    "hint_window_persistent_enabled",
    "batchlog_replay_throttle_in_kb",
    "batchlog_replay_throttle",
    "batchlog_endpoint_strategy",
    // Auth details we do not model.
    "traverse_auth_from_root",
    "roles_validity_in_ms",
    "roles_validity",
    "roles_update_interval_in_ms",
    "roles_update_interval",
    "roles_cache_active_update",
    "permissions_validity_in_ms",
    "permissions_validity",
    "permissions_update_interval_in_ms",
    "permissions_update_interval",
    "permissions_cache_active_update",
    "credentials_validity_in_ms",
    "credentials_validity",
    "credentials_update_interval_in_ms",
    "credentials_update_interval",
    "credentials_cache_active_update",
    // Directories and files of features we do not have.
    "saved_caches_directory",
    "cdc_raw_directory",
    "local_system_data_file_directory",
    "heap_dump_path",
    "dump_heap_on_uncaught_exception",
    "disk_failure_policy",
    "commit_failure_policy",
    "disk_optimization_strategy",
    "cdc_enabled",
    "cdc_total_space_in_mb",
    "cdc_total_space",
    "cdc_free_space_check_interval_ms",
    "cdc_free_space_check_interval",
    // Caches (the row cache size is read; the rest is JVM-specific).
    "prepared_statements_cache_size_mb",
    "prepared_statements_cache_size",
    "key_cache_size_in_mb",
    "key_cache_size",
    "key_cache_save_period",
    "key_cache_keys_to_save",
    "row_cache_class_name",
    "row_cache_save_period",
    "row_cache_keys_to_save",
    "counter_cache_size_in_mb",
    "counter_cache_size",
    "counter_cache_save_period",
    "counter_cache_keys_to_save",
    "cache_load_timeout_seconds",
    "cache_load_timeout",
    "file_cache_size_in_mb",
    "file_cache_size",
    "buffer_pool_use_heap_if_exhausted",
    "networking_cache_size",
    // Commitlog and memtable knobs we do not have.
    "commitlog_compression",
    "commitlog_sync_batch_window_in_ms",
    "commitlog_sync_group_window_in_ms",
    "commitlog_sync_group_window",
    "periodic_commitlog_sync_lag_block_in_ms",
    "periodic_commitlog_sync_lag_block",
    "commitlog_disk_access_mode",
    "flush_compression",
    "memtable_offheap_space_in_mb",
    "memtable_offheap_space",
    "memtable_allocation_type",
    "memtable",
    "repair_session_max_tree_depth",
    "repair_session_space_in_mb",
    "repair_session_space",
    // Reads, writes, thread pools.
    "concurrent_reads",
    "concurrent_writes",
    "concurrent_counter_writes",
    "concurrent_materialized_view_writes",
    "concurrent_materialized_view_builders",
    "concurrent_validations",
    "trickle_fsync",
    "trickle_fsync_interval_in_kb",
    "trickle_fsync_interval",
    "column_index_size_in_kb",
    "column_index_size",
    "column_index_cache_size_in_kb",
    "column_index_cache_size",
    "sstable_preemptive_open_interval_in_mb",
    "sstable_preemptive_open_interval",
    "compaction_large_partition_warning_threshold_mb",
    "compaction_large_partition_warning_threshold",
    "compaction_tombstone_warning_threshold",
    "snapshot_before_compaction",
    "auto_snapshot",
    "snapshot_links_per_second",
    "incremental_backups",
    "index_summary_capacity_in_mb",
    "index_summary_capacity",
    "index_summary_resize_interval_in_minutes",
    "index_summary_resize_interval",
    "gc_log_threshold_in_ms",
    "gc_log_threshold",
    "gc_warn_threshold_in_ms",
    "gc_warn_threshold",
    "max_value_size_in_mb",
    "max_value_size",
    "counter_write_request_timeout_in_ms",
    "counter_write_request_timeout",
    "cas_contention_timeout_in_ms",
    "cas_contention_timeout",
    "slow_query_log_timeout_in_ms",
    "slow_query_log_timeout",
    "unlogged_batch_across_partitions_warn_threshold",
    "native_transport_max_threads",
    "native_transport_allow_older_protocols",
    "native_transport_idle_timeout_in_ms",
    "native_transport_idle_timeout",
    "native_transport_flush_in_batches_legacy",
    "native_transport_max_concurrent_connections_per_ip",
    "native_transport_max_concurrent_requests_in_bytes_per_ip",
    "native_transport_receive_queue_capacity_in_bytes",
    "native_transport_receive_queue_capacity",
    "native_transport_max_negotiable_protocol_version",
    "native_transport_rate_limiting_enabled",
    "native_transport_max_requests_per_second",
    "ideal_consistency_level",
    "automatic_sstable_upgrade",
    "max_concurrent_automatic_sstable_upgrades",
    "full_query_logging_options",
    "diagnostic_events_enabled",
    "repaired_data_tracking_for_range_reads_enabled",
    "repaired_data_tracking_for_partition_reads_enabled",
    "report_unconfirmed_repaired_data_mismatches",
    "materialized_views_enabled",
    "enable_materialized_views",
    "sasi_indexes_enabled",
    "enable_sasi_indexes",
    "transient_replication_enabled",
    "enable_transient_replication",
    "drop_compact_storage_enabled",
    "enable_drop_compact_storage",
    "user_defined_functions_enabled",
    "enable_user_defined_functions",
    "scripted_user_defined_functions_enabled",
    "enable_scripted_user_defined_functions",
    "user_defined_functions_threads_enabled",
    "windows_timer_interval",
    "trace_type_query_ttl",
    "trace_type_repair_ttl",
    "otc_coalescing_strategy",
    "otc_coalescing_window_us",
    "otc_coalescing_enough_coalesced_messages",
    "otc_backlog_expiration_interval_ms",
    "tracetype_query_ttl",
    "tracetype_repair_ttl",
    "default_keyspace_rf",
    "storage_compatibility_mode",
    "sstable",
    "default_compaction",
    "uuid_sstable_identifiers_enabled",
    "dynamic_data_masking_enabled",
    "stream_entire_sstables",
    "streaming_state_expires",
    "streaming_state_size",
    "streaming_stats_enabled",
    "entire_sstable_stream_throughput_outbound",
    "entire_sstable_inter_dc_stream_throughput_outbound",
    "available_processors",
    "startup_checks",
    "read_thresholds_enabled",
    "client_error_reporting_exclusions",
    // ScyllaDB-specific.
    "api_ui_dir",
    "api_doc_dir",
    "consistent_cluster_management",
    "enable_ipv6_dns_lookup",
    "murmur3_partitioner_ignore_msb_bits",
    "experimental",
    "experimental_features",
    "developer_mode",
    "enable_tablets",
    "tablets_mode_for_new_keyspaces",
    "enable_sstables_mc_format",
    "enable_sstables_md_format",
    "sstable_format",
    "schema_commitlog_segment_size_in_mb",
    "alternator_port",
    "alternator_https_port",
    "alternator_address",
    "alternator_enforce_authorization",
    "alternator_write_isolation",
    "compaction_static_shares",
    "compaction_enforce_min_threshold",
    "compaction_flush_all_tables_before_major_seconds",
    "memtable_flush_static_shares",
    "abort_on_lsa_bad_alloc",
    "abort_on_seastar_bad_alloc",
    "reader_concurrency_semaphore_serialize_limit_multiplier",
    "reader_concurrency_semaphore_kill_limit_multiplier",
    "live_updatable_config_params_changeable_via_cql",
    "maintenance_socket",
    "force_schema_commit_log",
    "enable_cache",
    "enable_commitlog",
    "commitlog_use_o_dsync",
    "commitlog_reuse_segments",
    "commitlog_use_hard_size_limit",
    "max_partition_key_restrictions_per_query",
    "max_clustering_key_restrictions_per_query",
    "rf_rack_valid_keyspaces",
    "strict_allow_filtering",
    "strict_is_not_null_in_views",
    "enable_create_table_with_compact_storage",
    "uninitialized_connections_semaphore_cpu_concurrency",
    "cql_duplicate_bind_variable_names_refer_to_same_variable",
];

/// Applies one top-level key. `Err` carries the message for an invalid value.
fn apply_key(c: &mut Config, key: &str, v: &Node) -> Result<Outcome, String> {
    if matches!(v.value, Value::Null) && key != "data_file_directories" {
        // `key:` with no value keeps the default, as in Cassandra.
        return Ok(if SUPPORTED_KEYS.contains(&key) {
            Outcome::Used
        } else if IGNORED_KEYS.contains(&key) {
            Outcome::Ignored
        } else {
            Outcome::Unknown
        });
    }
    match key {
        "cluster_name" => c.cluster_name = v.string()?,
        "listen_address" => c.listen_address = v.address()?,
        "broadcast_address" => c.broadcast_address = Some(v.address()?),
        "rpc_address" | "native_transport_address" => c.rpc_address = v.address()?,
        "broadcast_rpc_address" => c.broadcast_rpc_address = Some(v.address()?),
        "native_transport_port" => c.native_transport_port = v.port()?,
        "start_native_transport" => c.start_native_transport = v.boolean()?,
        "native_transport_max_frame_size_in_mb" => {
            c.native_transport_max_frame_size = v.int_in(1, 2047)? * MIB
        }
        "native_transport_max_frame_size" => {
            c.native_transport_max_frame_size = v.size_in(1, 2047 * MIB)?
        }
        "native_transport_max_concurrent_connections" => {
            c.native_transport_max_concurrent_connections = v.signed_from(-1)?
        }
        "native_transport_max_concurrent_requests_in_bytes" => {
            c.native_transport_max_concurrent_requests_in_bytes = v.signed_from(-1)?
        }
        "api_address" => c.api_address = v.address()?,
        "api_port" => c.api_port = v.port()?,
        "prometheus_address" => c.prometheus_address = v.address()?,
        "prometheus_port" => c.prometheus_port = v.port()?,
        "prometheus_prefix" => {
            let s = v.string()?;
            if s.is_empty()
                || !s
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
            {
                return Err(format!(
                    "`{s}` is not a valid Prometheus metric prefix (letters, digits, _ and :)"
                ));
            }
            c.prometheus_prefix = s;
        }
        "workdir" => c.workdir = v.path()?,
        "data_file_directories" => {
            let dirs = match &v.value {
                Value::Null => Vec::new(),
                Value::Seq(items) => items
                    .iter()
                    .map(|n| n.path())
                    .collect::<Result<Vec<_>, _>>()?,
                Value::Scalar(..) => vec![v.path()?],
                Value::Map(_) => return Err("expected a list of directories".into()),
            };
            if dirs.len() > 1 {
                return Err(format!(
                    "{} directories given; Cairn supports one data directory",
                    dirs.len()
                ));
            }
            c.data_file_directories = dirs;
        }
        "commitlog_directory" => c.commitlog_directory = Some(v.path()?),
        "commitlog_sync" => {
            c.commitlog_sync = match v.string()?.as_str() {
                "periodic" => CommitlogSync::Periodic,
                "batch" | "group" => CommitlogSync::Batch,
                other => {
                    return Err(format!(
                        "`{other}` is not a commitlog_sync mode (periodic, batch or group)"
                    ))
                }
            }
        }
        "disk_access_mode" => {
            c.map_sequential_reads = match v.string()?.as_str() {
                "auto" | "mmap" => true,
                "standard" | "mmap_index_only" => false,
                other => {
                    return Err(format!(
                    "`{other}` is not a disk_access_mode (auto, mmap, mmap_index_only or standard)"
                ))
                }
            }
        }
        "commitlog_sync_period_in_ms" => {
            c.commitlog_sync_period = Duration::from_millis(v.int_in(1, u32::MAX as u64)?)
        }
        "commitlog_sync_period" => {
            c.commitlog_sync_period = v.duration_min(Duration::from_millis(1))?
        }
        "commitlog_segment_size_in_mb" => c.commitlog_segment_size = v.int_in(1, 2047)? * MIB,
        "commitlog_segment_size" => c.commitlog_segment_size = v.size_in(MIB, 2047 * MIB)?,
        "commitlog_total_space_in_mb" => {
            c.commitlog_total_space = v.int_in(1, 1 << 30)? * MIB;
        }
        "commitlog_total_space" => c.commitlog_total_space = v.size_in(MIB, (1 << 30) * MIB)?,
        "memtable_flush_writers" => c.memtable_flush_writers = v.int_in(1, 64)? as usize,
        "memtable_heap_space_in_mb" | "memtable_total_space_in_mb" => {
            c.memtable_heap_space = v.int_in(1, 1 << 30)? * MIB
        }
        "memtable_heap_space" => c.memtable_heap_space = v.size_in(MIB, u64::MAX)?,
        "memtable_cleanup_threshold" => c.memtable_cleanup_threshold = Some(v.float()?),
        "compaction_throughput_mb_per_sec" => {
            c.compaction_throughput_mb_per_sec = v.int_in(0, 1 << 30)?
        }
        "compaction_throughput" => c.compaction_throughput_mb_per_sec = v.rate_mib()?,
        "concurrent_compactors" => c.concurrent_compactors = v.int_in(1, 64)? as usize,
        "authenticator" => {
            c.authenticator = match class_name(v)?.as_str() {
                "AllowAllAuthenticator" => Authenticator::AllowAll,
                "PasswordAuthenticator" => Authenticator::Password,
                other => return Err(refused(key, &format!("`{other}`"))),
            }
        }
        "authorizer" => {
            c.authorizer = match class_name(v)?.as_str() {
                "AllowAllAuthorizer" => Authorizer::AllowAll,
                other => return Err(refused(key, &format!("`{other}`"))),
            }
        }
        "role_manager" => require_class(key, v, "CassandraRoleManager")?,
        "network_authorizer" => require_class(key, v, "AllowAllNetworkAuthorizer")?,
        "cidr_authorizer" => require_class(key, v, "AllowAllCIDRAuthorizer")?,
        "internode_authenticator" => require_class(key, v, "AllowAllInternodeAuthenticator")?,
        "client_encryption_options"
        | "transparent_data_encryption_options"
        | "jmx_encryption_options"
        | "audit_logging_options" => require_disabled(key, v)?,
        "server_encryption_options" => {
            require_disabled(key, v)?;
            if let Value::Map(entries) = &v.value {
                for (k, line, n) in entries {
                    if k == "internode_encryption" {
                        match n.string()?.as_str() {
                            "none" => {}
                            other => {
                                return Err(refused(
                                    key,
                                    &format!("`internode_encryption: {other}` (line {line})"),
                                ))
                            }
                        }
                    }
                }
            }
        }
        "audit" => match v.string()?.as_str() {
            "none" => {}
            other => return Err(refused(key, &format!("`{other}`"))),
        },
        "native_transport_port_ssl" | "auth_superuser_name" | "auth_superuser_salted_password" => {
            return Err(refused(key, "a value"))
        }
        "num_tokens" => c.num_tokens = v.int_in(1, 16384)? as u32,
        "initial_token" => {
            let s = v.string()?;
            for t in s.split(',') {
                if t.trim().parse::<i64>().is_err() {
                    return Err(format!(
                        "`{}` is not a Murmur3 token (a signed 64-bit integer)",
                        t.trim()
                    ));
                }
            }
            c.initial_token = Some(s);
        }
        "endpoint_snitch" => {
            let s = v.string()?;
            if s.is_empty() {
                return Err("empty snitch class name".into());
            }
            c.endpoint_snitch = s;
        }
        "partitioner" => {
            let s = v.string()?;
            let short = s.rsplit('.').next().unwrap_or(&s);
            if short != "Murmur3Partitioner" {
                return Err(format!(
                    "unsupported partitioner `{s}`: Cairn only supports \
                     org.apache.cassandra.dht.Murmur3Partitioner"
                ));
            }
            c.partitioner = "org.apache.cassandra.dht.Murmur3Partitioner".into();
        }
        "blocked_reactor_notify_ms" => {
            c.blocked_reactor_notify = Duration::from_millis(v.int_in(1, 3_600_000)?)
        }
        "blocked_reactor_reports_per_minute" => {
            c.blocked_reactor_reports_per_minute = v.int_in(0, 1_000_000)? as u32
        }
        "read_request_timeout_in_ms" => c.read_request_timeout = v.millis()?,
        "read_request_timeout" => c.read_request_timeout = v.duration_min(Duration::ZERO)?,
        "write_request_timeout_in_ms" => c.write_request_timeout = v.millis()?,
        "write_request_timeout" => c.write_request_timeout = v.duration_min(Duration::ZERO)?,
        "range_request_timeout_in_ms" => c.range_request_timeout = v.millis()?,
        "range_request_timeout" => c.range_request_timeout = v.duration_min(Duration::ZERO)?,
        "request_timeout_in_ms" => c.request_timeout = v.millis()?,
        "request_timeout" => c.request_timeout = v.duration_min(Duration::ZERO)?,
        "truncate_request_timeout_in_ms" => c.truncate_request_timeout = v.millis()?,
        "truncate_request_timeout" => {
            c.truncate_request_timeout = v.duration_min(Duration::ZERO)?
        }
        "tombstone_warn_threshold" => c.tombstone_warn_threshold = v.int_in(0, u64::MAX)?,
        "tombstone_failure_threshold" => c.tombstone_failure_threshold = v.int_in(0, u64::MAX)?,
        "batch_size_warn_threshold_in_kb" => {
            c.batch_size_warn_threshold = v.int_in(0, 1 << 40)? << 10
        }
        "batch_size_warn_threshold" => c.batch_size_warn_threshold = v.size_in(0, u64::MAX)?,
        "batch_size_fail_threshold_in_kb" => {
            c.batch_size_fail_threshold = v.int_in(0, 1 << 40)? << 10
        }
        "batch_size_fail_threshold" => c.batch_size_fail_threshold = v.size_in(0, u64::MAX)?,
        "row_cache_size_in_mb" => c.row_cache_size = v.int_in(0, 1 << 30)? * MIB,
        "row_cache_size" => c.row_cache_size = v.size_in(0, u64::MAX)?,
        k if IGNORED_KEYS.contains(&k) => return Ok(Outcome::Ignored),
        _ => return Ok(Outcome::Unknown),
    }
    Ok(Outcome::Used)
}

/// The error for a security setting Cairn does not implement: what was asked, that the node
/// refuses to start rather than run without it, and what is supported.
fn refused(key: &str, what: &str) -> String {
    let supported = SECURITY_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, s)| s);
    format!(
        "{what} is a security setting Cairn does not implement yet; rather than run without \
         it, Cairn refuses to start. Supported: {supported}"
    )
}

/// A security class setting (`role_manager`, …) that must name `supported`.
fn require_class(key: &str, v: &Node, supported: &str) -> Result<(), String> {
    let name = class_name(v)?;
    if name == supported {
        return Ok(());
    }
    Err(refused(key, &format!("`{name}`")))
}

/// An options mapping (`client_encryption_options`, …) that must enable nothing: its
/// `enabled` and `optional` flags, when present, are false. Its other entries (keystores,
/// ciphers, …) only matter once enabled.
fn require_disabled(key: &str, v: &Node) -> Result<(), String> {
    let Value::Map(entries) = &v.value else {
        return Err("expected a mapping (e.g. `enabled: false`)".into());
    };
    for (k, line, n) in entries {
        if matches!(k.as_str(), "enabled" | "optional") && n.boolean()? {
            return Err(refused(key, &format!("`{k}: true` (line {line})")));
        }
    }
    Ok(())
}

/// `authenticator: PasswordAuthenticator`, `org.apache.cassandra.auth.PasswordAuthenticator`
/// or Cassandra 5's `{class_name: …, parameters: …}` → the short class name.
fn class_name(v: &Node) -> Result<String, String> {
    let full = match &v.value {
        Value::Map(entries) => {
            let mut name = None;
            for (k, _, n) in entries {
                match k.as_str() {
                    "class_name" => name = Some(n.string()?),
                    "parameters" => {}
                    other => return Err(format!("unexpected `{other}` (class_name, parameters)")),
                }
            }
            name.ok_or("missing class_name")?
        }
        _ => v.string()?,
    };
    Ok(full.rsplit('.').next().unwrap_or(&full).to_string())
}

/// The closest supported or ignored key, if close enough to be a typo.
fn suggest(key: &str) -> Option<&'static str> {
    SUPPORTED_KEYS
        .iter()
        .chain(IGNORED_KEYS)
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 6))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

// ------------------------------------------------------------------------------------------
// A YAML tree with lines, built from saphyr-parser's events.

#[derive(Debug, Clone, PartialEq)]
struct Node {
    line: usize,
    value: Value,
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Null,
    /// Text, and whether it was quoted (a quoted `"null"` is a string).
    Scalar(String, bool),
    Seq(Vec<Node>),
    /// Key, the key's line, value.
    Map(Vec<(String, usize, Node)>),
}

fn syntax(line: usize, message: impl Into<String>) -> Problem {
    Problem {
        line,
        key: String::new(),
        message: message.into(),
    }
}

/// Parses one YAML document (`None` when the text holds none).
fn parse_yaml(text: &str) -> Result<Option<Node>, Problem> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    for item in &mut parser {
        let (event, span) = item.map_err(|e| {
            syntax(
                e.marker().line(),
                format!("YAML syntax error: {}", e.info()),
            )
        })?;
        let line = span.start.line();
        let node = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(syntax(line, "more than one YAML document"));
                }
                continue;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::Alias(_) => {
                return Err(syntax(line, "YAML aliases (*name) are not supported here"))
            }
            Event::SequenceStart(..) => {
                if stack.len() > 64 {
                    return Err(syntax(line, "nested too deeply"));
                }
                stack.push(Frame::Seq(line, Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                if stack.len() > 64 {
                    return Err(syntax(line, "nested too deeply"));
                }
                stack.push(Frame::Map(line, Vec::new(), None));
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq(l, items)) => Node {
                    line: l,
                    value: Value::Seq(items),
                },
                _ => return Err(syntax(line, "unbalanced sequence")),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map(l, entries, None)) => Node {
                    line: l,
                    value: Value::Map(entries),
                },
                _ => return Err(syntax(line, "unbalanced mapping")),
            },
            Event::Scalar(text, style, _, _) => {
                let quoted = !matches!(style, ScalarStyle::Plain);
                let value = if !quoted && matches!(&*text, "" | "~" | "null" | "Null" | "NULL") {
                    Value::Null
                } else {
                    Value::Scalar(text.into_owned(), quoted)
                };
                Node { line, value }
            }
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq(_, items)) => items.push(node),
            Some(Frame::Map(_, entries, pending)) => match pending.take() {
                None => match node.value {
                    Value::Scalar(k, _) => *pending = Some((k, node.line)),
                    Value::Null => *pending = Some((String::new(), node.line)),
                    _ => return Err(syntax(node.line, "mapping keys must be plain names")),
                },
                Some((k, kl)) => entries.push((k, kl, node)),
            },
        }
    }
    Ok(root)
}

enum Frame {
    Seq(usize, Vec<Node>),
    Map(usize, Vec<(String, usize, Node)>, Option<(String, usize)>),
}

impl Node {
    fn scalar(&self) -> Result<&str, String> {
        match &self.value {
            Value::Scalar(s, _) => Ok(s),
            Value::Null => Err("expected a value".into()),
            Value::Seq(_) => Err("expected a single value, not a list".into()),
            Value::Map(_) => Err("expected a single value, not a mapping".into()),
        }
    }

    fn string(&self) -> Result<String, String> {
        self.scalar().map(str::to_string)
    }

    fn path(&self) -> Result<PathBuf, String> {
        let s = self.scalar()?;
        if s.is_empty() {
            return Err("empty path".into());
        }
        Ok(PathBuf::from(s))
    }

    fn boolean(&self) -> Result<bool, String> {
        match self.scalar()?.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Ok(true),
            "false" | "no" | "off" => Ok(false),
            other => Err(format!("`{other}` is not a boolean (true or false)")),
        }
    }

    fn int_in(&self, min: u64, max: u64) -> Result<u64, String> {
        let s = self.scalar()?;
        let n: u64 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a non-negative integer"))?;
        if n < min || n > max {
            return Err(format!("{n} is out of range ({min} to {max})"));
        }
        Ok(n)
    }

    fn signed_from(&self, min: i64) -> Result<i64, String> {
        let s = self.scalar()?;
        let n: i64 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not an integer"))?;
        if n < min {
            return Err(format!("{n} is below the minimum {min}"));
        }
        Ok(n)
    }

    fn float(&self) -> Result<f64, String> {
        let s = self.scalar()?;
        let f: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a number"))?;
        if !f.is_finite() {
            return Err(format!("`{s}` is not a finite number"));
        }
        Ok(f)
    }

    fn port(&self) -> Result<u16, String> {
        Ok(self.int_in(0, 65535)? as u16)
    }

    fn millis(&self) -> Result<Duration, String> {
        Ok(Duration::from_millis(self.int_in(0, u32::MAX as u64)?))
    }

    fn address(&self) -> Result<String, String> {
        let s = self.scalar()?.trim().to_string();
        if s.is_empty() {
            return Err("empty address".into());
        }
        if s.parse::<IpAddr>().is_ok() || s == "localhost" {
            return Ok(s);
        }
        match (s.as_str(), 0u16).to_socket_addrs() {
            Ok(addrs) if !addrs.as_slice().is_empty() => Ok(s),
            _ => Err(format!(
                "`{s}` is neither an IP address nor a host name that resolves"
            )),
        }
    }

    /// Cassandra 4.1 durations: `10000ms`, `10s`, `3h`, `1d`, `500us`…
    fn duration_min(&self, min: Duration) -> Result<Duration, String> {
        let s = self.scalar()?.trim();
        let (num, unit) = split_unit(s);
        let n: u64 = num.parse().map_err(|_| {
            format!("`{s}` is not a duration (a number and a unit: ms, s, m, h, d, us, ns)")
        })?;
        let d = match unit.to_ascii_lowercase().as_str() {
            "ns" => Duration::from_nanos(n),
            "us" | "µs" => Duration::from_micros(n),
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            "d" => Duration::from_secs(n.saturating_mul(86400)),
            "" => return Err(format!("`{s}` has no unit (ms, s, m, h, d, us, ns)")),
            other => return Err(format!("unknown duration unit `{other}` in `{s}`")),
        };
        if d < min {
            return Err(format!("`{s}` is below the minimum {min:?}"));
        }
        Ok(d)
    }

    /// Cassandra 4.1 data sizes: `32MiB`, `1024KiB`, `1GiB`, `512B`.
    fn size_in(&self, min: u64, max: u64) -> Result<u64, String> {
        let s = self.scalar()?.trim();
        let (num, unit) = split_unit(s);
        let n: u64 = num
            .parse()
            .map_err(|_| format!("`{s}` is not a data size (a number and B, KiB, MiB or GiB)"))?;
        let mult = size_unit(unit)
            .ok_or_else(|| format!("unknown or missing size unit in `{s}` (B, KiB, MiB or GiB)"))?;
        let b = n
            .checked_mul(mult)
            .ok_or_else(|| format!("`{s}` is too large"))?;
        if b < min || b > max {
            return Err(format!("`{s}` is out of range ({min} to {max} bytes)"));
        }
        Ok(b)
    }

    /// Cassandra 4.1 rates, in whole MiB/s: `64MiB/s`, `0MiB/s`, `65536KiB/s`.
    fn rate_mib(&self) -> Result<u64, String> {
        let s = self.scalar()?.trim();
        let Some(per_sec) = s.strip_suffix("/s") else {
            return Err(format!("`{s}` is not a rate (e.g. 64MiB/s)"));
        };
        let (num, unit) = split_unit(per_sec);
        let n: u64 = num
            .parse()
            .map_err(|_| format!("`{s}` is not a rate (e.g. 64MiB/s)"))?;
        let mult = size_unit(unit)
            .ok_or_else(|| format!("unknown rate unit in `{s}` (B/s, KiB/s, MiB/s, GiB/s)"))?;
        Ok(n.saturating_mul(mult).div_ceil(MIB))
    }
}

/// A byte count in Cassandra 4.1's notation, in the largest unit that divides it.
fn size(bytes: u64) -> String {
    match bytes {
        0 => "0MiB".into(),
        b if b % MIB == 0 => format!("{}MiB", b / MIB),
        b if b % 1024 == 0 => format!("{}KiB", b / 1024),
        b => format!("{b}B"),
    }
}

fn split_unit(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

fn size_unit(unit: &str) -> Option<u64> {
    match unit {
        "B" => Some(1),
        "KiB" => Some(1 << 10),
        "MiB" => Some(MIB),
        "GiB" => Some(1 << 30),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_key_is_applied() {
        for key in SUPPORTED_KEYS {
            let mut c = Config::default();
            let node = Node {
                line: 1,
                value: Value::Scalar("not-a-valid-value!!".into(), false),
            };
            // Either used or rejected with a message: never unknown.
            match apply_key(&mut c, key, &node) {
                Ok(Outcome::Unknown) => panic!("{key} is listed but not handled"),
                Ok(Outcome::Ignored) => panic!("{key} is listed as supported and ignored"),
                _ => {}
            }
        }
    }

    #[test]
    fn lists_do_not_overlap() {
        for k in IGNORED_KEYS {
            assert!(!SUPPORTED_KEYS.contains(k), "{k} in both lists");
        }
    }

    #[test]
    fn edit_distance_works() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            suggest("native_transport_prot"),
            Some("native_transport_port")
        );
        assert_eq!(suggest("zzzz"), None);
    }
}
