//! Configuration: defaults, every key, old and new (unit-carrying) names, errors with
//! lines, ignored-key warnings, command-line overrides.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_engine::commitlog::SyncMode;
use cairn_engine::DatabaseConfig;
use cairn_server::config::*;
use std::path::PathBuf;
use std::time::Duration;

const MIB: u64 = 1 << 20;

fn load(text: &str) -> Loaded {
    Config::from_yaml_str(text, "test.yaml").unwrap_or_else(|e| panic!("{e}"))
}

fn problems(text: &str) -> Vec<Problem> {
    Config::from_yaml_str(text, "test.yaml")
        .unwrap_err()
        .problems
}

#[test]
fn defaults_work_with_no_file_and_stay_on_loopback() {
    let c = Config::default();
    assert_eq!(c.native_addr().unwrap().to_string(), "127.0.0.1:9042");
    assert_eq!(c.api_addr().unwrap().to_string(), "127.0.0.1:10000");
    assert_eq!(c.prometheus_addr().unwrap().to_string(), "127.0.0.1:9180");
    assert_eq!(c.listen_address, "127.0.0.1");
    assert_eq!(c.data_dir(), PathBuf::from("data/data"));
    assert_eq!(c.commitlog_dir(), PathBuf::from("data/commitlog"));
    assert_eq!(c.blocked_reactor_notify, Duration::from_millis(25));
    assert_eq!(c.authenticator, Authenticator::AllowAll);
    assert_eq!(c.partitioner, "org.apache.cassandra.dht.Murmur3Partitioner");

    // The engine configuration equals the engine's own defaults for ./data.
    let d = c.database_config();
    let e = DatabaseConfig::new("data");
    assert_eq!(d.data_dir, e.data_dir);
    assert_eq!(d.commitlog_dir, e.commitlog_dir);
    assert_eq!(d.commitlog_sync, e.commitlog_sync);
    assert_eq!(d.commitlog_segment_size, e.commitlog_segment_size);
    assert_eq!(d.commitlog_total_space, e.commitlog_total_space);
    assert_eq!(d.memtable_flush_threshold, e.memtable_flush_threshold);
    assert_eq!(d.memtable_total_space, e.memtable_total_space);
    assert_eq!(d.flush_writers, e.flush_writers);
    assert_eq!(
        d.compaction.concurrent_compactors,
        e.compaction.concurrent_compactors
    );
    assert_eq!(
        d.compaction.throughput_bytes_per_sec,
        e.compaction.throughput_bytes_per_sec
    );

    // An empty file, or one of comments only, is the defaults.
    for text in ["", "# nothing\n", "---\n"] {
        let l = load(text);
        assert_eq!(l.config, Config::default());
        assert!(l.warnings.is_empty());
    }
    let l = Config::resolve(&Overrides::default()).unwrap();
    assert_eq!(l.config, Config::default());
}

#[test]
fn every_key_with_old_names() {
    let l = load(
        r#"
cluster_name: 'Prod Cluster'
listen_address: 127.0.0.2
broadcast_address: 10.1.2.3
rpc_address: localhost
broadcast_rpc_address: 10.1.2.4
native_transport_port: 19042
start_native_transport: false
native_transport_max_frame_size_in_mb: 32
native_transport_max_concurrent_connections: 100
native_transport_max_concurrent_requests_in_bytes: 1000000
api_address: 127.0.0.3
api_port: 10001
prometheus_address: 127.0.0.4
prometheus_port: 9181
prometheus_prefix: cairn
workdir: /var/lib/cairn
data_file_directories:
    - /srv/data
commitlog_directory: /srv/commitlog
commitlog_sync: batch
commitlog_sync_period_in_ms: 2000
commitlog_segment_size_in_mb: 64
commitlog_total_space_in_mb: 2048
memtable_flush_writers: 4
memtable_heap_space_in_mb: 1024
memtable_cleanup_threshold: 0.5
compaction_throughput_mb_per_sec: 16
concurrent_compactors: 3
disk_access_mode: standard
authenticator: PasswordAuthenticator
authorizer: org.apache.cassandra.auth.AllowAllAuthorizer
role_manager: org.apache.cassandra.auth.CassandraRoleManager
num_tokens: 256
initial_token: -9223372036854775808,0
endpoint_snitch: GossipingPropertyFileSnitch
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
blocked_reactor_notify_ms: 1
read_request_timeout_in_ms: 6000
write_request_timeout_in_ms: 3000
range_request_timeout_in_ms: 12000
request_timeout_in_ms: 15000
truncate_request_timeout_in_ms: 70000
tombstone_warn_threshold: 10
tombstone_failure_threshold: 20
batch_size_warn_threshold_in_kb: 6
batch_size_fail_threshold_in_kb: 60
row_cache_size_in_mb: 128
index_cache_fraction: 0.1
"#,
    );
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    let c = l.config;
    assert_eq!(c.cluster_name, "Prod Cluster");
    assert_eq!(c.listen_address, "127.0.0.2");
    assert_eq!(c.broadcast_address.as_deref(), Some("10.1.2.3"));
    assert_eq!(c.rpc_address, "localhost");
    assert_eq!(c.broadcast_rpc_address.as_deref(), Some("10.1.2.4"));
    assert_eq!(c.native_transport_port, 19042);
    assert!(!c.start_native_transport);
    assert_eq!(c.native_transport_max_frame_size, 32 * MIB);
    assert_eq!(c.native_transport_max_concurrent_connections, 100);
    assert_eq!(
        c.native_transport_max_concurrent_requests_in_bytes,
        1_000_000
    );
    assert_eq!(c.api_addr().unwrap().to_string(), "127.0.0.3:10001");
    assert_eq!(c.prometheus_addr().unwrap().to_string(), "127.0.0.4:9181");
    assert_eq!(c.prometheus_prefix, "cairn");
    assert_eq!(c.workdir, PathBuf::from("/var/lib/cairn"));
    assert_eq!(c.data_dir(), PathBuf::from("/srv/data"));
    assert_eq!(c.commitlog_dir(), PathBuf::from("/srv/commitlog"));
    assert_eq!(c.commitlog_sync, CommitlogSync::Batch);
    assert_eq!(c.commitlog_sync_period, Duration::from_secs(2));
    assert_eq!(c.commitlog_segment_size, 64 * MIB);
    assert_eq!(c.memtable_flush_writers, 4);
    assert_eq!(c.memtable_heap_space, 1024 * MIB);
    assert_eq!(c.memtable_cleanup_threshold, Some(0.5));
    assert_eq!(c.compaction_throughput_mb_per_sec, 16);
    assert_eq!(c.concurrent_compactors, 3);
    assert!(!c.map_sequential_reads);
    assert_eq!(c.authenticator, Authenticator::Password);
    assert_eq!(c.authorizer, Authorizer::AllowAll);
    assert_eq!(c.num_tokens, 256);
    assert_eq!(c.initial_token.as_deref(), Some("-9223372036854775808,0"));
    assert_eq!(c.endpoint_snitch, "GossipingPropertyFileSnitch");
    assert_eq!(c.blocked_reactor_notify, Duration::from_millis(1));
    assert_eq!(c.read_request_timeout, Duration::from_millis(6000));
    assert_eq!(c.write_request_timeout, Duration::from_millis(3000));
    assert_eq!(c.range_request_timeout, Duration::from_millis(12000));
    assert_eq!(c.request_timeout, Duration::from_millis(15000));
    assert_eq!(c.truncate_request_timeout, Duration::from_millis(70000));
    assert_eq!(c.tombstone_warn_threshold, 10);
    assert_eq!(c.tombstone_failure_threshold, 20);
    assert_eq!(c.batch_size_warn_threshold, 6 << 10);
    assert_eq!(c.batch_size_fail_threshold, 60 << 10);
    assert_eq!(c.row_cache_size, 128 * MIB);
    assert_eq!(c.database_config().index_cache_fraction, 0.1);

    let d = c.database_config();
    assert_eq!(d.data_dir, PathBuf::from("/srv/data"));
    assert_eq!(d.commitlog_dir, PathBuf::from("/srv/commitlog"));
    assert_eq!(d.commitlog_sync, SyncMode::Batch);
    assert_eq!(d.commitlog_segment_size, 64 * MIB);
    assert_eq!(d.commitlog_total_space, 2048 * MIB);
    assert_eq!(d.memtable_total_space, 1024 << 20);
    assert_eq!(d.memtable_flush_threshold, 512 << 20);
    assert_eq!(d.flush_writers, 4);
    assert_eq!(d.compaction.concurrent_compactors, 3);
    assert_eq!(d.compaction.throughput_bytes_per_sec, 16 * MIB);
    assert!(!d.map_sequential_reads);
}

#[test]
fn new_names_with_units_and_cassandra5_class_maps() {
    let c = load(
        r#"
commitlog_sync: periodic
commitlog_sync_period: 10s
commitlog_segment_size: 16MiB
commitlog_total_space: 1GiB
memtable_heap_space: 2GiB
compaction_throughput: 64MiB/s
native_transport_max_frame_size: 8MiB
read_request_timeout: 1500ms
write_request_timeout: 2s
batch_size_warn_threshold: 5KiB
row_cache_size: 0MiB
authenticator:
  class_name : org.apache.cassandra.auth.PasswordAuthenticator
authorizer:
  class_name: AllowAllAuthorizer
"#,
    )
    .config;
    assert_eq!(c.commitlog_sync, CommitlogSync::Periodic);
    assert_eq!(c.commitlog_sync_period, Duration::from_secs(10));
    assert_eq!(c.commitlog_segment_size, 16 * MIB);
    assert_eq!(c.commitlog_total_space, 1024 * MIB);
    assert_eq!(c.memtable_heap_space, 2048 * MIB);
    assert_eq!(c.compaction_throughput_mb_per_sec, 64);
    assert_eq!(c.native_transport_max_frame_size, 8 * MIB);
    assert_eq!(c.read_request_timeout, Duration::from_millis(1500));
    assert_eq!(c.write_request_timeout, Duration::from_secs(2));
    assert_eq!(c.batch_size_warn_threshold, 5 << 10);
    assert_eq!(c.authenticator, Authenticator::Password);
    assert_eq!(c.authorizer, Authorizer::AllowAll);
    assert_eq!(
        c.database_config().commitlog_sync,
        SyncMode::Periodic {
            period: Duration::from_secs(10)
        }
    );
    assert_eq!(
        load("commitlog_sync: group").config.commitlog_sync,
        CommitlogSync::Batch
    );
    // Empty values keep the defaults, as in Cassandra.
    let c = load("initial_token:\ncluster_name:\ndata_file_directories:\n").config;
    assert_eq!(c.key_line("cluster_name"), Some(2));
    let key_lines = c.key_lines.clone();
    assert_eq!(
        c,
        Config {
            key_lines,
            ..Config::default()
        }
    );
}

#[test]
fn unknown_keys_are_errors_with_their_line() {
    let e = Config::from_yaml_str(
        "cluster_name: x\n\n# a comment\nnative_transport_prot: 9042\nfrobnicate: 1\n",
        "cairn.yaml",
    )
    .unwrap_err();
    assert_eq!(e.problems.len(), 2);
    assert_eq!(e.problems[0].line, 4);
    assert_eq!(e.problems[0].key, "native_transport_prot");
    assert!(e.problems[0].message.contains("unknown property"));
    assert!(e.problems[0]
        .message
        .contains("did you mean `native_transport_port`?"));
    assert_eq!(e.problems[1].line, 5);
    assert_eq!(e.problems[1].key, "frobnicate");
    assert!(!e.problems[1].message.contains("did you mean"));
    let text = e.to_string();
    assert!(
        text.starts_with("invalid configuration cairn.yaml\n"),
        "{text}"
    );
    assert!(
        text.contains("line 4: native_transport_prot: unknown property"),
        "{text}"
    );
}

#[test]
fn invalid_values_are_errors_with_key_and_line() {
    let p = problems(
        "native_transport_port: 70000\n\
         commitlog_sync: sometimes\n\
         partitioner: org.apache.cassandra.dht.RandomPartitioner\n\
         data_file_directories:\n  - /a\n  - /b\n\
         compaction_throughput: 64MB/s\n\
         commitlog_sync_period: 10\n\
         concurrent_compactors: 0\n\
         authenticator: LdapAuthenticator\n\
         start_native_transport: maybe\n\
         memtable_cleanup_threshold: 1.5\n\
         listen_address: [1, 2]\n\
         num_tokens: many\n\
         initial_token: abc\n\
         prometheus_prefix: 'has space'\n\
         commitlog_segment_size: 1KiB\n\
         disk_access_mode: direct\n\
         index_cache_fraction: 1.5\n",
    );
    let got: Vec<(usize, &str)> = p.iter().map(|p| (p.line, p.key.as_str())).collect();
    assert_eq!(
        got,
        [
            (1, "native_transport_port"),
            (2, "commitlog_sync"),
            (3, "partitioner"),
            (5, "data_file_directories"),
            (7, "compaction_throughput"),
            (8, "commitlog_sync_period"),
            (9, "concurrent_compactors"),
            (10, "authenticator"),
            (11, "start_native_transport"),
            (12, "memtable_cleanup_threshold"),
            (13, "listen_address"),
            (14, "num_tokens"),
            (15, "initial_token"),
            (16, "prometheus_prefix"),
            (17, "commitlog_segment_size"),
            (18, "disk_access_mode"),
            (19, "index_cache_fraction"),
        ]
    );
    assert!(
        p[0].message.contains("70000 is out of range"),
        "{}",
        p[0].message
    );
    assert!(p[1].message.contains("periodic, batch or group"));
    assert!(p[2].message.contains("only supports"));
    assert!(p[3].message.contains("supports one data directory"));
    assert!(
        p[15].message.contains("mmap_index_only or standard"),
        "{}",
        p[15].message
    );
    assert!(p[5].message.contains("no unit"), "{}", p[5].message);
    assert!(p[7].message.contains("LdapAuthenticator"));
}

#[test]
fn yaml_syntax_errors_and_duplicates_have_lines() {
    let p = problems("cluster_name: a\nnum_tokens: [1, 2\n");
    assert_eq!(p.len(), 1);
    assert!(p[0].line >= 2, "{p:?}");
    assert!(p[0].message.starts_with("YAML syntax error"));
    let p = problems("num_tokens: 8\ncluster_name: a\nnum_tokens: 9\n");
    assert_eq!(p[0].line, 3);
    assert!(p[0].message.contains("first set at line 1"));
    let p = problems("- a\n- b\n");
    assert!(p[0].message.contains("mapping"));
    let p = problems("base: &x 1\nother: *x\n");
    assert!(!p.is_empty());
    let p = problems("a: 1\n---\nb: 2\n");
    assert!(p[0].message.contains("more than one"));
}

#[test]
fn cassandra_keys_we_do_not_use_are_warnings() {
    let l = load(
        r#"
cluster_name: 'Test Cluster'
num_tokens: 16
hinted_handoff_enabled: true
max_hint_window: 3h
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:7000"
role_manager:
  class_name: CassandraRoleManager
client_encryption_options:
  enabled: false
  keystore: conf/.keystore
concurrent_reads: 32
"#,
    );
    assert_eq!(l.warnings.len(), 1);
    let w = &l.warnings[0];
    for k in [
        "hinted_handoff_enabled",
        "max_hint_window",
        "concurrent_reads",
    ] {
        assert!(w.contains(k), "{k} missing from {w}");
    }
    // Security settings are checked, not ignored: these enable nothing, so they pass.
    assert!(!w.contains("num_tokens"));
    assert!(!w.contains("seed_provider"));
    assert_eq!(l.config.seeds, ["127.0.0.1"]);
    assert!(!w.contains("role_manager"));
    assert!(!w.contains("client_encryption_options"));
    assert_eq!(l.config.num_tokens, 16);
}

#[test]
fn seed_provider_is_simple_seed_provider_only() {
    let l = load(
        "storage_port: 7001\nseed_provider:\n  - class_name: SimpleSeedProvider\n    parameters:\n      - seeds: \"127.0.0.1:7001, 127.0.0.2,[::1]:7000\"\n",
    );
    assert_eq!(l.config.seeds, ["127.0.0.1", "127.0.0.2", "::1"]);
    assert_eq!(l.config.storage_port, 7001);
    assert!(load("seed_provider: []\n").config.seeds.is_empty());
    let p = problems(
        "seed_provider:\n  - class_name: org.example.K8SeedProvider\n    parameters:\n      - seeds: \"a\"\n",
    );
    assert!(
        p[0].message.contains("unsupported seed provider")
            && p[0].message.contains("SimpleSeedProvider"),
        "{p:?}"
    );
    let p = problems("seed_provider:\n  - class_name: SimpleSeedProvider\n");
    assert!(p[0].message.contains("seeds"), "{p:?}");
}

#[test]
fn overrides_win_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.yaml");
    std::fs::write(
        &path,
        "data_file_directories: [/nowhere/data]\ncommitlog_directory: /nowhere/cl\nnative_transport_port: 1\napi_port: 2\nprometheus_port: 3\nhinted_handoff_enabled: true\n",
    )
    .unwrap();
    let only_file = Config::resolve(&Overrides {
        config: Some(path.clone()),
        ..Overrides::default()
    })
    .unwrap();
    assert_eq!(only_file.config.native_transport_port, 1);
    assert_eq!(only_file.config.source.as_deref(), Some(path.as_path()));
    assert_eq!(only_file.warnings.len(), 1);
    let l = Config::resolve(&Overrides {
        config: Some(path),
        data_dir: Some(dir.path().join("node1")),
        native_port: Some(19042),
        api_port: Some(0),
        metrics_port: Some(19180),
        listen_address: Some("127.0.0.5".into()),
    })
    .unwrap();
    let c = l.config;
    assert_eq!(c.data_dir(), dir.path().join("node1/data"));
    assert_eq!(c.commitlog_dir(), dir.path().join("node1/commitlog"));
    assert_eq!(c.native_addr().unwrap().to_string(), "127.0.0.5:19042");
    assert_eq!(c.api_addr().unwrap().to_string(), "127.0.0.5:0");
    assert_eq!(c.prometheus_addr().unwrap().to_string(), "127.0.0.5:19180");
    assert_eq!(c.listen_address, "127.0.0.5");

    let e = Config::resolve(&Overrides {
        config: Some(dir.path().join("missing.yaml")),
        ..Overrides::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("cannot read the file"), "{e}");
}

#[test]
fn opens_a_database_from_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = load("commitlog_segment_size_in_mb: 1\nconcurrent_compactors: 1\n").config;
    c.apply_overrides(&Overrides {
        data_dir: Some(dir.path().to_path_buf()),
        ..Overrides::default()
    });
    let db = open_database(&c).unwrap();
    assert_eq!(db.config().commitlog_segment_size, MIB);
    drop(db);
    assert!(dir.path().join("data").is_dir());
    assert!(dir.path().join("commitlog").is_dir());
    assert_eq!(c.workdir, dir.path());
    assert_eq!(c.native_transport_port, 9042);
}

/// A security setting Cairn does not implement stops the node with the key, its line and what
/// is supported; the ones that enable nothing, and the defaults, pass.
#[test]
fn security_settings_fail_closed() {
    // One refused value for every security key, in security_keys()' order.
    let text = "cluster_name: c\n\
authenticator: org.apache.cassandra.auth.MutualTlsAuthenticator\n\
authorizer: LdapAuthorizer\n\
role_manager:\n  class_name: LDAPRoleManager\n\
network_authorizer: CassandraNetworkAuthorizer\n\
cidr_authorizer:\n  class_name: CassandraCIDRAuthorizer\n\
internode_authenticator: MyInternodeAuthenticator\n\
client_encryption_options:\n  keystore: conf/.keystore\n  enabled: true\n  require_endpoint_verification: true\n\
server_encryption_options:\n  legacy_ssl_storage_port_enabled: true\n\
transparent_data_encryption_options:\n  enabled: true\n\
jmx_encryption_options:\n  optional: true\n\
audit_logging_options:\n  enabled: true\n\
audit: syslog,table\n\
native_transport_port_ssl: 9142\n\
auth_superuser_name: admin\n\
auth_superuser_salted_password: x\n";
    let p = problems(text);
    let keys: Vec<&str> = p.iter().map(|p| p.key.as_str()).collect();
    let all: Vec<&str> = keys::security_keys().map(|(k, _)| k).collect();
    assert_eq!(keys, all);
    for pr in &p {
        assert!(pr.line > 0, "{pr:?}");
        assert!(
            pr.message.contains("Cairn refuses to start") && pr.message.contains("Supported: "),
            "{pr:?}"
        );
    }
    let says = |i: usize, what: &str| {
        assert!(p[i].message.contains(what), "{what} not in {:?}", p[i]);
    };
    says(0, "PasswordAuthenticator");
    assert_eq!(p[1].line, 3);
    says(1, "`LdapAuthorizer`");
    says(1, "Supported: AllowAllAuthorizer");
    says(2, "`LDAPRoleManager`");
    // A nested option is named with its own line.
    says(6, "`require_endpoint_verification: true` (line 13)");
    says(7, "`legacy_ssl_storage_port_enabled: true` (line 15)");
    says(9, "`optional: true`");
    let shown = Config::from_yaml_str(text, "cairn.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        shown.contains("line 3: authorizer: `LdapAuthorizer` is a security setting"),
        "{shown}"
    );

    // What enables nothing, and every supported value, starts.
    let c = load(
        "authorizer: AllowAllAuthorizer\n\
authenticator: PasswordAuthenticator\n\
role_manager: CassandraRoleManager\n\
network_authorizer: AllowAllNetworkAuthorizer\n\
cidr_authorizer:\n  class_name: AllowAllCIDRAuthorizer\n\
internode_authenticator: org.apache.cassandra.auth.AllowAllInternodeAuthenticator\n\
client_encryption_options:\n  enabled: false\n  optional: false\n  keystore: conf/.keystore\n\
server_encryption_options:\n  internode_encryption: none\n  keystore: conf/.keystore\n\
transparent_data_encryption_options:\n  enabled: false\n  chunk_length_kb: 64\n\
jmx_encryption_options:\n  enabled: false\n\
audit_logging_options:\n  enabled: false\n\
audit: none\n",
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.config.authorizer, Authorizer::AllowAll);
    assert_eq!(c.config.authenticator, Authenticator::Password);
    assert_eq!(Config::default().authorizer, Authorizer::AllowAll);

    // A flag that is not a boolean, or options that are not a mapping, are errors too.
    let p = problems("client_encryption_options:\n  enabled: maybe\naudit_logging_options: on\n");
    assert_eq!(p.len(), 2, "{p:?}");
}

/// `system_views.settings` shows every setting once, sorted, with 4.1's units.
#[test]
fn settings_for_system_views() {
    let c = load("compaction_throughput: 64MiB/s\ncommitlog_sync_period: 10s\nbatch_size_warn_threshold: 5KiB\n").config;
    let s = c.settings();
    let names: Vec<&str> = s.iter().map(|(k, _)| k.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted);
    let get = |k: &str| s.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("compaction_throughput"), Some("64MiB/s"));
    assert_eq!(get("commitlog_sync_period"), Some("10000ms"));
    assert_eq!(get("batch_size_warn_threshold"), Some("5KiB"));
    assert_eq!(get("memtable_heap_space"), Some("256MiB"));
    assert_eq!(get("authorizer"), Some("AllowAllAuthorizer"));
    assert_eq!(get("native_transport_port"), Some("9042"));
}

#[test]
fn snapshot_and_backup_keys() {
    let c = Config::default();
    assert!(
        c.auto_snapshot && !c.incremental_backups,
        "Cassandra's defaults"
    );
    let l = load(
        "auto_snapshot: false\nincremental_backups: true\nsnapshot_before_compaction: false\n",
    );
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    let d = l.config.database_config();
    assert!(!d.auto_snapshot && d.incremental_backups);
    // A snapshot before every compaction is not implemented: refused, not ignored.
    let p = problems("snapshot_before_compaction: true\nauto_snapshot: often\n");
    let got: Vec<(usize, &str)> = p.iter().map(|p| (p.line, p.key.as_str())).collect();
    assert_eq!(
        got,
        [(1, "snapshot_before_compaction"), (2, "auto_snapshot")]
    );
    assert!(p[0].message.contains("not supported"), "{}", p[0].message);
}

/// `server_encryption_options` read into internode TLS: Cassandra's `internode_encryption`
/// policies and `optional`, the client options' files and choices, and refusals naming the
/// option and its line for what Cairn cannot enforce or serve.
#[test]
fn server_encryption_options() {
    let files = "  certificate: /etc/cairn/node.crt\n  private_key: /etc/cairn/node.key\n  truststore: /etc/cairn/ca.pem\n";
    let c = load(&format!(
        "server_encryption_options:\n  internode_encryption: all\n{files}  require_client_auth: true\n  require_endpoint_verification: true\n  protocol: TLSv1.3\n  outbound_keystore_password: x\n  legacy_ssl_storage_port_enabled: false\n  keystore_password: cassandra\n"
    ));
    let s = &c.config.server_encryption;
    assert_eq!(s.internode_encryption, InternodeEncryption::All);
    assert!(s.options.require_client_auth && s.options.require_endpoint_verification);
    assert_eq!(s.options.protocols, vec![TlsProtocol::V1_3]);
    assert!(s.active() && !s.accepts_plaintext());
    // `optional: true` accepts plaintext from every peer (a rolling move to TLS).
    let c = load(&format!(
        "server_encryption_options:\n  internode_encryption: dc\n  optional: true\n  enabled: true\n{files}"
    ));
    let s = &c.config.server_encryption;
    assert_eq!(s.internode_encryption, InternodeEncryption::Dc);
    assert!(s.active() && s.accepts_plaintext());
    // `none` (the default) leaves the storage port in plaintext, or accepts TLS too when
    // asked to be optional.
    let d = Config::default().server_encryption;
    assert!(!d.active() && d.accepts_plaintext());
    let c = load("server_encryption_options:\n  internode_encryption: none\n  optional: true\n  keystore: k.pem\n");
    assert!(c.config.server_encryption.active());

    let refused = |options: &str, says: &[&str]| {
        let text = format!("cluster_name: c\nserver_encryption_options:\n{options}");
        let p = problems(&text);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].key, "server_encryption_options");
        assert_eq!(p[0].line, 3, "{p:?}");
        for s in says {
            assert!(p[0].message.contains(s), "{s} not in {:?}", p[0]);
        }
    };
    refused(
        "  internode_encryption: all\n",
        &["needs the node's certificate and key", "`certificate`"],
    );
    refused(
        "  internode_encryption: rack\n  keystore: k.pem\n",
        &["`internode_encryption: rack` needs `truststore`"],
    );
    refused(
        "  internode_encryption: sometimes\n",
        &["`internode_encryption` (line 3)", "none, all, dc or rack"],
    );
    refused(
        "  enabled: true\n  keystore: k.pem\n",
        &[
            "`enabled: true` with `internode_encryption: none`",
            "Cairn refuses to start",
        ],
    );
    refused(
        &format!("  internode_encryption: all\n{files}  outbound_keystore: out.pem\n"),
        &["`outbound_keystore` (line 7)", "Cairn refuses to start"],
    );
    refused(
        &format!("  internode_encryption: all\n{files}  store_type: JKS\n"),
        &["`store_type: JKS` (line 7)", "reads PEM"],
    );
    refused(
        &format!("  internode_encryption: all\n{files}  protocol: TLSv1.1\n"),
        &["`TLSv1.1`"],
    );
    refused(
        "  internode_encryption: all\n  ssl_storage_port: 7001\n",
        &[
            "unknown option `ssl_storage_port` (line 4)",
            "internode_encryption, outbound_keystore",
        ],
    );
}

/// `client_encryption_options` read into the TLS settings, with Cassandra's protocol rules;
/// what Cairn cannot serve is an error naming the option and its line.
#[test]
fn client_encryption_options() {
    let c = load(
        "client_encryption_options:\n  enabled: true\n  optional: false\n  certificate: /etc/cairn/node.crt\n  private_key: /etc/cairn/node.key\n  keystore_password: cassandra\n  require_client_auth: true\n  truststore: /etc/cairn/ca.pem\n  truststore_password: x\n  protocol: TLSv1.3\n  accepted_protocols: [TLSv1.2]\n  cipher_suites: [TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS13_AES_128_GCM_SHA256]\n  store_type: PEM\n  algorithm: SunX509\n  require_endpoint_verification: false\n  ssl_context_factory:\n    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory\n",
    );
    let e = &c.config.client_encryption;
    assert!(e.enabled && e.require_client_auth);
    assert_eq!(e.optional, Some(false));
    assert_eq!(e.mode(), TlsMode::Required);
    assert_eq!(
        e.certificate_source(),
        Some(("certificate", std::path::Path::new("/etc/cairn/node.crt")))
    );
    // accepted_protocols, plus `protocol` when it names another version (Cassandra's rule).
    assert_eq!(e.protocols, vec![TlsProtocol::V1_2, TlsProtocol::V1_3]);
    assert_eq!(
        e.cipher_suites.len(),
        2,
        "duplicates by another name collapse"
    );
    assert_eq!(
        cipher_suite_name(e.cipher_suites[1]),
        Some("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
    );

    // Defaults: off, both versions; `optional` unset follows whether the keystore exists.
    let d = ClientEncryption::default();
    assert_eq!(d.mode(), TlsMode::Off);
    assert_eq!(d.protocols, vec![TlsProtocol::V1_3, TlsProtocol::V1_2]);
    let missing =
        load("client_encryption_options:\n  enabled: false\n  keystore: /nonexistent/k.pem\n");
    assert_eq!(missing.config.client_encryption.mode(), TlsMode::Off);
    let dir = tempfile::tempdir().unwrap();
    let ks = dir.path().join("k.pem");
    std::fs::write(&ks, "x").unwrap();
    let present = load(&format!(
        "client_encryption_options:\n  enabled: false\n  keystore: {}\n",
        ks.display()
    ));
    assert_eq!(present.config.client_encryption.mode(), TlsMode::Optional);
    let one =
        load("client_encryption_options:\n  optional: true\n  keystore: k.pem\n  protocol: TLS\n");
    assert_eq!(one.config.client_encryption.mode(), TlsMode::Optional);
    assert_eq!(one.config.client_encryption.protocols.len(), 2);

    let refused = |options: &str, says: &[&str]| {
        let text = format!("cluster_name: c\nclient_encryption_options:\n{options}");
        let p = problems(&text);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].key, "client_encryption_options");
        assert_eq!(p[0].line, 3, "{p:?}");
        for s in says {
            assert!(p[0].message.contains(s), "{s} not in {:?}", p[0]);
        }
    };
    let ks = "  enabled: true\n  keystore: k.pem\n";
    refused(
        &format!("{ks}  protocol: TLSv1.1\n"),
        &[
            "`protocol` (line 5)",
            "`TLSv1.1`",
            "TLSv1.2 and TLSv1.3 only",
        ],
    );
    refused(
        &format!("{ks}  accepted_protocols: [TLSv1.3, SSLv3]\n"),
        &["`accepted_protocols`", "`SSLv3`"],
    );
    refused(
        &format!("{ks}  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n"),
        &[
            "`TLS_RSA_WITH_AES_128_CBC_SHA` is not a cipher suite",
            "TLS_AES_256_GCM_SHA384",
        ],
    );
    refused(
        &format!("{ks}  accepted_protocols: [TLSv1.3]\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n"),
        &["no suite for TLSv1.3"],
    );
    refused(
        &format!("{ks}  store_type: JKS\n"),
        &[
            "`store_type: JKS`",
            "reads PEM",
            "`certificate`",
            "`private_key`",
        ],
    );
    refused(
        &format!("{ks}  require_endpoint_verification: true\n"),
        &["Cairn refuses to start", "Supported: "],
    );
    refused(
        &format!("{ks}  ssl_context_factory:\n    class_name: com.example.Vault\n"),
        &[
            "`ssl_context_factory: com.example.Vault`",
            "Cairn refuses to start",
        ],
    );
    refused(
        &format!("{ks}  keystroe: x\n"),
        &["unknown option `keystroe` (line 5)"],
    );
    refused(
        "  enabled: true\n",
        &["`certificate`", "`private_key`", "`keystore`"],
    );
    refused(
        "  enabled: true\n  certificate: c.pem\n",
        &["needs `private_key`"],
    );
    refused(
        &format!("{ks}  require_client_auth: true\n"),
        &["needs `truststore`"],
    );
    refused(
        "  optional: true\n  keystore: k.pem\n  certificate: c.pem\n  private_key: k.pem\n",
        &["not both"],
    );
}
