//! The one table of configuration keys: every key Cairn reads, refuses or accepts without
//! using, with its Cassandra/ScyllaDB aliases, a valid example value, and how it sets the
//! [`Config`] field (the unit and range of the value are in the setter: `_in_mb` names take
//! a plain number of MiB, the unit-carrying names of Cassandra 4.1 a `32MiB`, `10000ms` or
//! `64MiB/s`).
//!
//! Loading ([`super::Config::from_yaml_str`]) and the "did you mean" hint
//! ([`super::suggest`]) both read this table and nothing else, so a key is added in one
//! place. Invariants (tested below): names and aliases are unique; every key loads with its
//! example; security keys ([`Handling::Security`]) fail closed — their setter accepts only
//! what Cairn enforces and refuses the rest with what is supported. Setters longer than a
//! line live in [`super::setters`].

use super::admin::{set_allow_unauthenticated, set_authorization, set_face_encryption, AdminFace};
use super::encryption::{set_client_encryption, set_server_encryption};
use super::setters::{
    refuse_any_value, refuse_permissions_update_interval, require_class, require_disabled,
    set_authenticator, set_authorizer, set_commit_failure_policy, set_commitlog_sync,
    set_data_file_directories, set_disk_access_mode, set_disk_failure_policy, set_endpoint_snitch,
    set_index_cache_fraction, set_initial_token, set_memtable_cleanup_threshold, set_partitioner,
    set_prometheus_prefix, set_seed_provider, set_snapshot_before_compaction, Bad,
};
use super::yaml::Node;
use super::{Config, MIB};
use std::time::Duration;

/// One configuration key.
pub(super) struct Key {
    /// The name as Cassandra (or ScyllaDB, for its own keys) spells it.
    pub(super) name: &'static str,
    /// Other names of the same setting, read the same way.
    pub(super) aliases: &'static [&'static str],
    /// A valid value as written in a file (empty: only `key:` with no value is valid).
    /// Only the test that loads every key reads it; it documents the key's unit here.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) example: &'static str,
    /// `key:` with no value reaches the setter instead of keeping the default.
    pub(super) takes_null: bool,
    /// What loading does with the key.
    pub(super) handling: Handling,
}

/// What loading does with a key.
pub(super) enum Handling {
    /// Read into the configuration.
    Set(Setter),
    /// A security setting: the setter accepts only what Cairn enforces and refuses the rest
    /// ([`Bad::Refused`]) with `supported` in the message.
    Security {
        /// What Cairn supports, for the refusal (README's "Security settings" says the same).
        supported: &'static str,
        /// Checks (and for the authenticator and authorizer, sets) the value.
        set: Setter,
    },
    /// A Cassandra or ScyllaDB key Cairn accepts and does not use (a single node, no hints,
    /// no streaming, …): listed in one startup warning.
    Ignored,
}

/// Reads a key's value into the configuration.
pub(super) type Setter = fn(&mut Config, &Node) -> Result<(), Bad>;

/// The key named `name` (by its name or an alias).
pub(super) fn lookup(name: &str) -> Option<&'static Key> {
    KEYS.iter()
        .find(|k| k.name == name || k.aliases.contains(&name))
}

/// Every name and alias of the table, in table order (the "did you mean" candidates).
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    KEYS.iter()
        .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
}

/// The security-relevant keys and what Cairn supports of each, in table order; anything
/// else is refused at start (fail closed).
pub fn security_keys() -> impl Iterator<Item = (&'static str, &'static str)> {
    KEYS.iter().filter_map(|k| match k.handling {
        Handling::Security { supported, .. } => Some((k.name, supported)),
        _ => None,
    })
}

const fn key(name: &'static str, example: &'static str, set: Setter) -> Key {
    Key {
        name,
        aliases: &[],
        example,
        takes_null: false,
        handling: Handling::Set(set),
    }
}

const fn security(
    name: &'static str,
    supported: &'static str,
    example: &'static str,
    set: Setter,
) -> Key {
    Key {
        name,
        aliases: &[],
        example,
        takes_null: false,
        handling: Handling::Security { supported, set },
    }
}

const fn ignored(name: &'static str) -> Key {
    Key {
        name,
        aliases: &[],
        example: "x",
        takes_null: false,
        handling: Handling::Ignored,
    }
}

impl Key {
    /// The same key under other names too.
    const fn or(mut self, aliases: &'static [&'static str]) -> Key {
        self.aliases = aliases;
        self
    }

    /// `key:` with no value is given to the setter (which then clears the setting).
    const fn null_clears(mut self) -> Key {
        self.takes_null = true;
        self
    }
}

/// A setter that assigns one field from the value node `v`.
macro_rules! field {
    ($f:ident, $v:ident => $e:expr) => {
        |c: &mut Config, $v: &Node| {
            c.$f = $e;
            Ok(())
        }
    };
}

/// The table. Order matters only for "did you mean" ties (the first closest wins).
static KEYS: &[Key] = &[
    key(
        "cluster_name",
        "Test Cluster",
        field!(cluster_name, v => v.string()?),
    ),
    key(
        "listen_address",
        "127.0.0.1",
        field!(listen_address, v => v.address()?),
    ),
    key(
        "broadcast_address",
        "127.0.0.1",
        field!(broadcast_address, v => Some(v.address()?)),
    ),
    key(
        "rpc_address",
        "127.0.0.1",
        field!(rpc_address, v => v.address()?),
    )
    .or(&["native_transport_address"]),
    key(
        "broadcast_rpc_address",
        "127.0.0.1",
        field!(broadcast_rpc_address, v => Some(v.address()?)),
    ),
    key(
        "storage_port",
        "7000",
        field!(storage_port, v => v.port()?),
    ),
    key(
        "seed_provider",
        "[{class_name: org.apache.cassandra.locator.SimpleSeedProvider, parameters: [{seeds: \"127.0.0.1\"}]}]",
        set_seed_provider,
    ),
    key(
        "native_transport_port",
        "9042",
        field!(native_transport_port, v => v.port()?),
    ),
    key(
        "start_native_transport",
        "true",
        field!(start_native_transport, v => v.boolean()?),
    ),
    key(
        "native_transport_max_frame_size_in_mb",
        "16",
        field!(native_transport_max_frame_size, v => v.int_in(1, 2047)? * MIB),
    ),
    key(
        "native_transport_max_frame_size",
        "16MiB",
        field!(native_transport_max_frame_size, v => v.size_in(1, 2047 * MIB)?),
    ),
    key(
        "native_transport_max_concurrent_connections",
        "-1",
        field!(native_transport_max_concurrent_connections, v => v.signed_from(-1)?),
    ),
    key(
        "native_transport_max_concurrent_requests_in_bytes",
        "-1",
        field!(native_transport_max_concurrent_requests_in_bytes, v => v.signed_from(-1)?),
    ),
    key(
        "api_address",
        "127.0.0.1",
        field!(api_address, v => v.address()?),
    ),
    key("api_port", "10000", field!(api_port, v => v.port()?)),
    key(
        "prometheus_address",
        "127.0.0.1",
        field!(prometheus_address, v => v.address()?),
    ),
    key(
        "prometheus_port",
        "9180",
        field!(prometheus_port, v => v.port()?),
    ),
    key("prometheus_prefix", "scylla", set_prometheus_prefix),
    // Who may use the admin faces (Cairn's own keys: see `super::admin`).
    key("api_authorization", "{token_file: /etc/cairn/api.token}", |c, v| {
        set_authorization(c, AdminFace::Api, v)
    }),
    key("api_encryption_options", "{enabled: false}", |c, v| {
        set_face_encryption(c, AdminFace::Api, v)
    }),
    key("api_allow_unauthenticated", "false", |c, v| {
        set_allow_unauthenticated(c, AdminFace::Api, v)
    }),
    key("prometheus_authorization", "{token_file: /etc/cairn/p.token}", |c, v| {
        set_authorization(c, AdminFace::Prometheus, v)
    }),
    key("prometheus_encryption_options", "{enabled: false}", |c, v| {
        set_face_encryption(c, AdminFace::Prometheus, v)
    }),
    key("prometheus_allow_unauthenticated", "false", |c, v| {
        set_allow_unauthenticated(c, AdminFace::Prometheus, v)
    }),
    key("workdir", "/var/lib/cairn", field!(workdir, v => v.path()?)),
    key(
        "data_file_directories",
        "[/var/lib/cairn/data]",
        set_data_file_directories,
    )
    .null_clears(),
    key(
        "commitlog_directory",
        "/var/lib/cairn/commitlog",
        field!(commitlog_directory, v => Some(v.path()?)),
    ),
    key("commitlog_sync", "periodic", set_commitlog_sync),
    key(
        "commitlog_sync_period_in_ms",
        "10000",
        field!(commitlog_sync_period, v => Duration::from_millis(v.int_in(1, u32::MAX as u64)?)),
    ),
    key(
        "commitlog_sync_period",
        "10000ms",
        field!(commitlog_sync_period, v => v.duration_min(Duration::from_millis(1))?),
    ),
    key(
        "commitlog_segment_size_in_mb",
        "32",
        field!(commitlog_segment_size, v => v.int_in(1, 2047)? * MIB),
    ),
    key(
        "commitlog_segment_size",
        "32MiB",
        field!(commitlog_segment_size, v => v.size_in(MIB, 2047 * MIB)?),
    ),
    key(
        "commitlog_total_space_in_mb",
        "8192",
        field!(commitlog_total_space, v => v.int_in(1, 1 << 30)? * MIB),
    ),
    key(
        "commitlog_total_space",
        "8192MiB",
        field!(commitlog_total_space, v => v.size_in(MIB, (1 << 30) * MIB)?),
    ),
    key(
        "memtable_flush_writers",
        "2",
        field!(memtable_flush_writers, v => v.int_in(1, 64)? as usize),
    ),
    key(
        "memtable_heap_space_in_mb",
        "256",
        field!(memtable_heap_space, v => v.int_in(1, 1 << 30)? * MIB),
    )
    .or(&["memtable_total_space_in_mb"]),
    key(
        "memtable_heap_space",
        "256MiB",
        field!(memtable_heap_space, v => v.size_in(MIB, u64::MAX)?),
    ),
    key(
        "memtable_cleanup_threshold",
        "0.25",
        set_memtable_cleanup_threshold,
    ),
    key(
        "compaction_throughput_mb_per_sec",
        "64",
        field!(compaction_throughput_mb_per_sec, v => v.int_in(0, 1 << 30)?),
    ),
    key(
        "compaction_throughput",
        "64MiB/s",
        field!(compaction_throughput_mb_per_sec, v => v.rate_mib()?),
    ),
    key(
        "concurrent_compactors",
        "2",
        field!(concurrent_compactors, v => v.int_in(1, 64)? as usize),
    ),
    key("disk_access_mode", "mmap", set_disk_access_mode),
    key("disk_failure_policy", "best_effort", set_disk_failure_policy),
    key("commit_failure_policy", "stop_commit", set_commit_failure_policy),
    key(
        "auto_snapshot",
        "true",
        field!(auto_snapshot, v => v.boolean()?),
    ),
    key(
        "incremental_backups",
        "false",
        field!(incremental_backups, v => v.boolean()?),
    ),
    key(
        "snapshot_before_compaction",
        "false",
        set_snapshot_before_compaction,
    ),
    security(
        "authenticator",
        "AllowAllAuthenticator (default) or PasswordAuthenticator",
        "PasswordAuthenticator",
        set_authenticator,
    ),
    security(
        "authorizer",
        "AllowAllAuthorizer (default) or CassandraAuthorizer",
        // CassandraAuthorizer loads only beside PasswordAuthenticator.
        "AllowAllAuthorizer",
        set_authorizer,
    ),
    key(
        "permissions_validity_in_ms",
        "2000",
        field!(permissions_validity, v => v.millis()?),
    ),
    key(
        "permissions_validity",
        "2000ms",
        field!(permissions_validity, v => v.duration_min(Duration::ZERO)?),
    ),
    // Refused, not accepted and ignored: see `refuse_permissions_update_interval` (only
    // `key:` with no value loads).
    key(
        "permissions_update_interval",
        "",
        refuse_permissions_update_interval,
    )
    .or(&["permissions_update_interval_in_ms"]),
    key(
        "num_tokens",
        "16",
        field!(num_tokens, v => v.int_in(1, 16384)? as u32),
    ),
    key(
        "initial_token",
        "-9223372036854775808, 0",
        set_initial_token,
    ),
    key("endpoint_snitch", "SimpleSnitch", set_endpoint_snitch),
    key("partitioner", "Murmur3Partitioner", set_partitioner),
    key(
        "blocked_reactor_notify_ms",
        "25",
        field!(blocked_reactor_notify, v => Duration::from_millis(v.int_in(1, 3_600_000)?)),
    ),
    key(
        "blocked_reactor_reports_per_minute",
        "5",
        field!(blocked_reactor_reports_per_minute, v => v.int_in(0, 1_000_000)? as u32),
    ),
    key("slow_query_log_timeout_in_ms", "500", |c, v| {
        c.tracing.slow_query_timeout = v.millis()?;
        Ok(())
    }),
    key("slow_query_log_timeout", "500ms", |c, v| {
        c.tracing.slow_query_timeout = v.duration_min(Duration::ZERO)?;
        Ok(())
    }),
    key("tracetype_query_ttl", "86400", |c, v| {
        c.tracing.ttl = Duration::from_secs(v.int_in(1, i32::MAX as u64)?);
        Ok(())
    }),
    key("trace_type_query_ttl", "1d", |c, v| {
        c.tracing.ttl = v.duration_min(Duration::from_secs(1))?;
        Ok(())
    }),
    key(
        "read_request_timeout_in_ms",
        "5000",
        field!(read_request_timeout, v => v.millis()?),
    ),
    key(
        "read_request_timeout",
        "5000ms",
        field!(read_request_timeout, v => v.duration_min(Duration::ZERO)?),
    ),
    key(
        "write_request_timeout_in_ms",
        "2000",
        field!(write_request_timeout, v => v.millis()?),
    ),
    key(
        "write_request_timeout",
        "2s",
        field!(write_request_timeout, v => v.duration_min(Duration::ZERO)?),
    ),
    key(
        "cas_contention_timeout_in_ms",
        "1000",
        field!(cas_contention_timeout, v => v.millis()?),
    ),
    key(
        "cas_contention_timeout",
        "1000ms",
        field!(cas_contention_timeout, v => v.duration_min(Duration::ZERO)?),
    ),
    key(
        "range_request_timeout_in_ms",
        "10000",
        field!(range_request_timeout, v => v.millis()?),
    ),
    key(
        "range_request_timeout",
        "10s",
        field!(range_request_timeout, v => v.duration_min(Duration::ZERO)?),
    ),
    key(
        "request_timeout_in_ms",
        "10000",
        field!(request_timeout, v => v.millis()?),
    ),
    key(
        "request_timeout",
        "10s",
        field!(request_timeout, v => v.duration_min(Duration::ZERO)?),
    ),
    key(
        "truncate_request_timeout_in_ms",
        "60000",
        field!(truncate_request_timeout, v => v.millis()?),
    ),
    key(
        "truncate_request_timeout",
        "1m",
        field!(truncate_request_timeout, v => v.duration_min(Duration::ZERO)?),
    ),
    key(
        "tombstone_warn_threshold",
        "1000",
        field!(tombstone_warn_threshold, v => v.int_in(0, u64::MAX)?),
    ),
    key(
        "tombstone_failure_threshold",
        "100000",
        field!(tombstone_failure_threshold, v => v.int_in(0, u64::MAX)?),
    ),
    key(
        "materialized_views_enabled",
        "true",
        field!(materialized_views_enabled, v => v.boolean()?),
    )
    .or(&["enable_materialized_views"]),
    key(
        "dynamic_data_masking_enabled",
        "false",
        field!(dynamic_data_masking_enabled, v => v.boolean()?),
    ),
    key(
        "batch_size_warn_threshold_in_kb",
        "5",
        field!(batch_size_warn_threshold, v => v.int_in(0, 1 << 40)? << 10),
    ),
    key(
        "batch_size_warn_threshold",
        "5KiB",
        field!(batch_size_warn_threshold, v => v.size_in(0, u64::MAX)?),
    ),
    key(
        "batch_size_fail_threshold_in_kb",
        "50",
        field!(batch_size_fail_threshold, v => v.int_in(0, 1 << 40)? << 10),
    ),
    key(
        "batch_size_fail_threshold",
        "50KiB",
        field!(batch_size_fail_threshold, v => v.size_in(0, u64::MAX)?),
    ),
    key(
        "unlogged_batch_across_partitions_warn_threshold",
        "10",
        field!(unlogged_batch_across_partitions_warn_threshold, v => v.int_in(0, u64::MAX)?),
    ),
    key(
        "row_cache_size_in_mb",
        "0",
        field!(row_cache_size, v => v.int_in(0, 1 << 30)? * MIB),
    ),
    key(
        "row_cache_size",
        "0MiB",
        field!(row_cache_size, v => v.size_in(0, u64::MAX)?),
    ),
    key(
        "enable_cache",
        "false",
        field!(enable_cache, v => v.boolean()?),
    ),
    key("index_cache_fraction", "0.2", set_index_cache_fraction),
    // Security settings: fail closed (see `Handling::Security`).
    security(
        "role_manager",
        "CassandraRoleManager (default)",
        "CassandraRoleManager",
        |_, v| require_class(v, "CassandraRoleManager"),
    ),
    security(
        "network_authorizer",
        "AllowAllNetworkAuthorizer (default)",
        "AllowAllNetworkAuthorizer",
        |_, v| require_class(v, "AllowAllNetworkAuthorizer"),
    ),
    security(
        "cidr_authorizer",
        "AllowAllCIDRAuthorizer (default)",
        "{class_name: AllowAllCIDRAuthorizer}",
        |_, v| require_class(v, "AllowAllCIDRAuthorizer"),
    ),
    security(
        "internode_authenticator",
        "AllowAllInternodeAuthenticator (default)",
        "AllowAllInternodeAuthenticator",
        |_, v| require_class(v, "AllowAllInternodeAuthenticator"),
    ),
    security(
        "client_encryption_options",
        "TLS with PEM files (keystore, or certificate and private_key; truststore), \
         require_client_auth, protocols TLSv1.2 and TLSv1.3, rustls' cipher suites; \
         require_endpoint_verification: false",
        "{enabled: false, keystore: conf/.keystore}",
        |c, v| set_client_encryption(&mut c.client_encryption, v),
    ),
    security(
        "server_encryption_options",
        "internode_encryption none, all, dc or rack, optional, PEM files (keystore, or \
         certificate and private_key; truststore), require_client_auth, \
         require_endpoint_verification, protocols TLSv1.2 and TLSv1.3, rustls' cipher suites",
        "{internode_encryption: none}",
        |c, v| set_server_encryption(&mut c.server_encryption, v),
    ),
    security(
        "transparent_data_encryption_options",
        "enabled: false",
        "{enabled: false}",
        |_, v| require_disabled(v),
    ),
    security(
        "jmx_encryption_options",
        "enabled: false (Cairn has no JMX)",
        "{enabled: false}",
        |_, v| require_disabled(v),
    ),
    security(
        "audit_logging_options",
        "enabled: false",
        "{enabled: false}",
        |_, v| require_disabled(v),
    ),
    security(
        "audit",
        "none (the default), table or syslog (ScyllaDB's key)",
        "table",
        |c, v| {
            let value = v.string()?;
            c.audit.mode = cairn_cql::audit::AuditMode::parse(&value)
                .ok_or_else(|| Bad::Refused(format!("`{value}`")))?;
            Ok(())
        },
    ),
    // What the audit log records (ScyllaDB's keys; see `cairn_cql::audit::filter`).
    key("audit_categories", "DCL,DDL,AUTH,DML,QUERY", |c, v| {
        Ok(c.audit.filter.set_categories(&v.optional_string()?)?)
    })
    .null_clears(),
    key("audit_keyspaces", "ks1,ks2", |c, v| {
        c.audit.filter.set_keyspaces(&v.optional_string()?);
        Ok(())
    })
    .null_clears(),
    key("audit_tables", "ks1.t1,ks2.t2", |c, v| {
        Ok(c.audit.filter.set_tables(&v.optional_string()?)?)
    })
    .null_clears(),
    key("audit_unix_socket_path", "/dev/log", |c, v| {
        c.audit.unix_socket_path = Some(v.path()?);
        Ok(())
    }),
    // Cairn's: the room of the audit writer's queue, beyond which requests wait.
    key("audit_queue_records", "65536", |c, v| {
        let max = cairn_cql::audit::MAX_QUEUE_RECORDS as u64;
        c.audit.queue_records = usize::try_from(v.int_in(1, max)?).unwrap_or(usize::MAX);
        Ok(())
    }),
    security(
        "native_transport_port_ssl",
        "not set (TLS runs on native_transport_port: see client_encryption_options)",
        "",
        refuse_any_value,
    ),
    security(
        "auth_superuser_name",
        "not set (the default superuser is cassandra; change its password with ALTER ROLE)",
        "",
        refuse_any_value,
    ),
    security(
        "auth_superuser_salted_password",
        "not set (the default superuser is cassandra; change its password with ALTER ROLE)",
        "",
        refuse_any_value,
    ),
    // Accepted for compatibility and not used (see `Handling::Ignored`).
    // Cluster membership, gossip, tokens.
    ignored("allocate_tokens_for_keyspace"),
    ignored("allocate_tokens_for_local_replication_factor"),
    ignored("auto_bootstrap"),
    ignored("ssl_storage_port"),
    ignored("listen_interface"),
    ignored("listen_interface_prefer_ipv6"),
    ignored("listen_on_broadcast_address"),
    ignored("rpc_interface"),
    ignored("rpc_interface_prefer_ipv6"),
    ignored("rpc_port"),
    ignored("rpc_keepalive"),
    ignored("start_rpc"),
    ignored("rpc_server_type"),
    ignored("internode_compression"),
    ignored("inter_dc_tcp_nodelay"),
    ignored("phi_convict_threshold"),
    ignored("dynamic_snitch"),
    ignored("dynamic_snitch_update_interval_in_ms"),
    ignored("dynamic_snitch_update_interval"),
    ignored("dynamic_snitch_reset_interval_in_ms"),
    ignored("dynamic_snitch_reset_interval"),
    ignored("dynamic_snitch_badness_threshold"),
    ignored("streaming_connections_per_host"),
    ignored("stream_throughput_outbound_megabits_per_sec"),
    ignored("stream_throughput_outbound"),
    ignored("inter_dc_stream_throughput_outbound_megabits_per_sec"),
    ignored("inter_dc_stream_throughput_outbound"),
    ignored("streaming_keep_alive_period_in_secs"),
    ignored("streaming_keep_alive_period"),
    ignored("streaming_socket_timeout_in_ms"),
    ignored("internode_send_buff_size_in_bytes"),
    ignored("internode_recv_buff_size_in_bytes"),
    ignored("internode_application_send_queue_capacity_in_bytes"),
    ignored("internode_application_receive_queue_capacity_in_bytes"),
    ignored("internode_tcp_connect_timeout_in_ms"),
    ignored("internode_tcp_user_timeout_in_ms"),
    ignored("cross_node_timeout"),
    ignored("consistent_rangemovement"),
    ignored("ring_delay_ms"),
    // Hints and batchlog.
    ignored("hinted_handoff_enabled"),
    ignored("hinted_handoff_disabled_datacenters"),
    ignored("max_hint_window_in_ms"),
    ignored("max_hint_window"),
    ignored("hinted_handoff_throttle_in_kb"),
    ignored("hinted_handoff_throttle"),
    ignored("max_hints_delivery_threads"),
    ignored("hints_directory"),
    ignored("hints_flush_period_in_ms"),
    ignored("hints_flush_period"),
    ignored("max_hints_file_size_in_mb"),
    ignored("max_hints_file_size"),
    ignored("max_hints_size_per_host"),
    ignored("auto_hints_cleanup_enabled"),
    ignored("transfer_hints_on_decommission"),
    ignored("hints_compression"),
    ignored("hint_window_persistent_enabled"),
    ignored("batchlog_replay_throttle_in_kb"),
    ignored("batchlog_replay_throttle"),
    ignored("batchlog_endpoint_strategy"),
    // Auth details we do not model.
    ignored("traverse_auth_from_root"),
    ignored("roles_validity_in_ms"),
    ignored("roles_validity"),
    ignored("roles_update_interval_in_ms"),
    ignored("roles_update_interval"),
    ignored("roles_cache_active_update"),
    ignored("permissions_cache_active_update"),
    ignored("credentials_validity_in_ms"),
    ignored("credentials_validity"),
    ignored("credentials_update_interval_in_ms"),
    ignored("credentials_update_interval"),
    ignored("credentials_cache_active_update"),
    // Directories and files of features we do not have.
    ignored("saved_caches_directory"),
    ignored("cdc_raw_directory"),
    ignored("local_system_data_file_directory"),
    ignored("heap_dump_path"),
    ignored("dump_heap_on_uncaught_exception"),
    ignored("disk_optimization_strategy"),
    ignored("cdc_enabled"),
    ignored("cdc_total_space_in_mb"),
    ignored("cdc_total_space"),
    ignored("cdc_free_space_check_interval_ms"),
    ignored("cdc_free_space_check_interval"),
    // Caches (the row cache size is read; the rest is JVM-specific).
    ignored("prepared_statements_cache_size_mb"),
    ignored("prepared_statements_cache_size"),
    ignored("key_cache_size_in_mb"),
    ignored("key_cache_size"),
    ignored("key_cache_save_period"),
    ignored("key_cache_keys_to_save"),
    ignored("row_cache_class_name"),
    ignored("row_cache_save_period"),
    ignored("row_cache_keys_to_save"),
    ignored("counter_cache_size_in_mb"),
    ignored("counter_cache_size"),
    ignored("counter_cache_save_period"),
    ignored("counter_cache_keys_to_save"),
    ignored("cache_load_timeout_seconds"),
    ignored("cache_load_timeout"),
    ignored("file_cache_size_in_mb"),
    ignored("file_cache_size"),
    ignored("buffer_pool_use_heap_if_exhausted"),
    ignored("networking_cache_size"),
    // Commitlog and memtable knobs we do not have.
    ignored("commitlog_compression"),
    ignored("commitlog_sync_batch_window_in_ms"),
    ignored("commitlog_sync_group_window_in_ms"),
    ignored("commitlog_sync_group_window"),
    ignored("periodic_commitlog_sync_lag_block_in_ms"),
    ignored("periodic_commitlog_sync_lag_block"),
    ignored("commitlog_disk_access_mode"),
    ignored("flush_compression"),
    ignored("memtable_offheap_space_in_mb"),
    ignored("memtable_offheap_space"),
    ignored("memtable_allocation_type"),
    ignored("memtable"),
    ignored("repair_session_max_tree_depth"),
    ignored("repair_session_space_in_mb"),
    ignored("repair_session_space"),
    // Reads, writes, thread pools.
    ignored("concurrent_reads"),
    ignored("concurrent_writes"),
    ignored("concurrent_counter_writes"),
    ignored("concurrent_materialized_view_writes"),
    ignored("concurrent_materialized_view_builders"),
    ignored("concurrent_validations"),
    ignored("trickle_fsync"),
    ignored("trickle_fsync_interval_in_kb"),
    ignored("trickle_fsync_interval"),
    ignored("column_index_size_in_kb"),
    ignored("column_index_size"),
    ignored("column_index_cache_size_in_kb"),
    ignored("column_index_cache_size"),
    ignored("sstable_preemptive_open_interval_in_mb"),
    ignored("sstable_preemptive_open_interval"),
    ignored("compaction_large_partition_warning_threshold_mb"),
    ignored("compaction_large_partition_warning_threshold"),
    ignored("compaction_tombstone_warning_threshold"),
    ignored("snapshot_links_per_second"),
    ignored("index_summary_capacity_in_mb"),
    ignored("index_summary_capacity"),
    ignored("index_summary_resize_interval_in_minutes"),
    ignored("index_summary_resize_interval"),
    ignored("gc_log_threshold_in_ms"),
    ignored("gc_log_threshold"),
    ignored("gc_warn_threshold_in_ms"),
    ignored("gc_warn_threshold"),
    ignored("max_value_size_in_mb"),
    ignored("max_value_size"),
    ignored("counter_write_request_timeout_in_ms"),
    ignored("counter_write_request_timeout"),
    ignored("native_transport_max_threads"),
    ignored("native_transport_allow_older_protocols"),
    ignored("native_transport_idle_timeout_in_ms"),
    ignored("native_transport_idle_timeout"),
    ignored("native_transport_flush_in_batches_legacy"),
    ignored("native_transport_max_concurrent_connections_per_ip"),
    ignored("native_transport_max_concurrent_requests_in_bytes_per_ip"),
    ignored("native_transport_receive_queue_capacity_in_bytes"),
    ignored("native_transport_receive_queue_capacity"),
    ignored("native_transport_max_negotiable_protocol_version"),
    ignored("native_transport_rate_limiting_enabled"),
    ignored("native_transport_max_requests_per_second"),
    ignored("ideal_consistency_level"),
    ignored("automatic_sstable_upgrade"),
    ignored("max_concurrent_automatic_sstable_upgrades"),
    ignored("full_query_logging_options"),
    ignored("diagnostic_events_enabled"),
    ignored("repaired_data_tracking_for_range_reads_enabled"),
    ignored("repaired_data_tracking_for_partition_reads_enabled"),
    ignored("report_unconfirmed_repaired_data_mismatches"),
    ignored("sasi_indexes_enabled"),
    ignored("enable_sasi_indexes"),
    ignored("transient_replication_enabled"),
    ignored("enable_transient_replication"),
    ignored("drop_compact_storage_enabled"),
    ignored("enable_drop_compact_storage"),
    ignored("user_defined_functions_enabled"),
    ignored("enable_user_defined_functions"),
    ignored("scripted_user_defined_functions_enabled"),
    ignored("enable_scripted_user_defined_functions"),
    ignored("user_defined_functions_threads_enabled"),
    ignored("windows_timer_interval"),
    ignored("trace_type_repair_ttl"),
    ignored("otc_coalescing_strategy"),
    ignored("otc_coalescing_window_us"),
    ignored("otc_coalescing_enough_coalesced_messages"),
    ignored("otc_backlog_expiration_interval_ms"),
    ignored("tracetype_repair_ttl"),
    ignored("default_keyspace_rf"),
    ignored("storage_compatibility_mode"),
    ignored("sstable"),
    ignored("default_compaction"),
    ignored("uuid_sstable_identifiers_enabled"),
    ignored("stream_entire_sstables"),
    ignored("streaming_state_expires"),
    ignored("streaming_state_size"),
    ignored("streaming_stats_enabled"),
    ignored("entire_sstable_stream_throughput_outbound"),
    ignored("entire_sstable_inter_dc_stream_throughput_outbound"),
    ignored("available_processors"),
    ignored("startup_checks"),
    ignored("read_thresholds_enabled"),
    ignored("client_error_reporting_exclusions"),
    // ScyllaDB-specific.
    ignored("api_ui_dir"),
    ignored("api_doc_dir"),
    ignored("consistent_cluster_management"),
    ignored("enable_ipv6_dns_lookup"),
    ignored("murmur3_partitioner_ignore_msb_bits"),
    ignored("experimental"),
    ignored("experimental_features"),
    ignored("developer_mode"),
    ignored("enable_tablets"),
    ignored("tablets_mode_for_new_keyspaces"),
    ignored("enable_sstables_mc_format"),
    ignored("enable_sstables_md_format"),
    ignored("sstable_format"),
    ignored("schema_commitlog_segment_size_in_mb"),
    ignored("alternator_port"),
    ignored("alternator_https_port"),
    ignored("alternator_address"),
    ignored("alternator_enforce_authorization"),
    ignored("alternator_write_isolation"),
    ignored("compaction_static_shares"),
    ignored("compaction_enforce_min_threshold"),
    ignored("compaction_flush_all_tables_before_major_seconds"),
    ignored("memtable_flush_static_shares"),
    ignored("abort_on_lsa_bad_alloc"),
    ignored("abort_on_seastar_bad_alloc"),
    ignored("reader_concurrency_semaphore_serialize_limit_multiplier"),
    ignored("reader_concurrency_semaphore_kill_limit_multiplier"),
    ignored("live_updatable_config_params_changeable_via_cql"),
    ignored("maintenance_socket"),
    ignored("force_schema_commit_log"),
    ignored("enable_commitlog"),
    ignored("commitlog_use_o_dsync"),
    ignored("commitlog_reuse_segments"),
    ignored("commitlog_use_hard_size_limit"),
    ignored("max_partition_key_restrictions_per_query"),
    ignored("max_clustering_key_restrictions_per_query"),
    ignored("rf_rack_valid_keyspaces"),
    ignored("strict_allow_filtering"),
    ignored("strict_is_not_null_in_views"),
    ignored("enable_create_table_with_compact_storage"),
    ignored("uninitialized_connections_semaphore_cpu_concurrency"),
    ignored("cql_duplicate_bind_variable_names_refer_to_same_variable"),
];

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = names().collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a name or alias appears twice in the table");
    }

    /// Every key of the table, under its name and each alias, loads from a file with its
    /// example value: used and security keys without a problem or warning, ignored keys
    /// with the one warning that lists them.
    #[test]
    fn every_key_in_the_table_loads() {
        for k in KEYS {
            for name in std::iter::once(k.name).chain(k.aliases.iter().copied()) {
                let text = format!("{name}: {}\n", k.example);
                let loaded = Config::from_yaml_str(&text, "t.yaml")
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                match k.handling {
                    Handling::Ignored => {
                        assert_eq!(loaded.warnings.len(), 1, "{name}");
                        assert!(loaded.warnings[0].ends_with(name), "{name}");
                    }
                    Handling::Set(_) | Handling::Security { .. } => {
                        assert!(loaded.warnings.is_empty(), "{name}: {:?}", loaded.warnings)
                    }
                }
            }
        }
    }
}
