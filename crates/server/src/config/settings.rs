//! The configuration as `system_views.settings` shows it.
//!
//! Names and values are Cassandra 4.1's unit-carrying ones whatever the file used
//! (`commitlog_sync_period: 10000ms`, `compaction_throughput: 64MiB/s`), and ScyllaDB's
//! names for its own keys, so a query written for either finds its rows.

use super::units::size;
use super::{Authenticator, Authorizer, CommitlogSync, Config};
use std::path::Path;
use std::time::Duration;

impl Config {
    /// The configuration as `system_views.settings` shows it: (name, value) sorted by name,
    /// with Cassandra 4.1's unit-carrying names and values (`commitlog_sync_period:
    /// 10000ms`, `compaction_throughput: 64MiB/s`) and ScyllaDB's names for its own keys.
    pub fn settings(&self) -> Vec<(String, String)> {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let opt = |o: &Option<String>| o.clone().unwrap_or_default();
        let path = |p: &Path| p.display().to_string();
        let audit = self.audit.filter.describe();
        let mut out: Vec<(&str, String)> = vec![
            ("cluster_name", self.cluster_name.clone()),
            ("listen_address", self.listen_address.clone()),
            ("broadcast_address", opt(&self.broadcast_address)),
            ("rpc_address", self.rpc_address.clone()),
            ("broadcast_rpc_address", opt(&self.broadcast_rpc_address)),
            ("storage_port", self.storage_port.to_string()),
            ("seed_provider", self.seeds.join(",")),
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
                "disk_failure_policy",
                self.disk_failure_policy.name().into(),
            ),
            (
                "commit_failure_policy",
                self.commit_failure_policy.name().into(),
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
                    Authorizer::Cassandra => "CassandraAuthorizer",
                }
                .into(),
            ),
            ("role_manager", "CassandraRoleManager".into()),
            ("audit", self.audit.mode.name().into()),
            ("audit_categories", audit.0),
            ("audit_keyspaces", audit.1),
            ("audit_tables", audit.2),
            ("audit_queue_records", self.audit.queue_records.to_string()),
            (
                "audit_unix_socket_path",
                self.audit
                    .unix_socket_path
                    .as_deref()
                    .map(path)
                    .unwrap_or_default(),
            ),
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
            ("permissions_validity", ms(self.permissions_validity)),
            ("read_request_timeout", ms(self.read_request_timeout)),
            (
                "slow_query_log_timeout",
                ms(self.tracing.slow_query_timeout),
            ),
            (
                "trace_type_query_ttl",
                format!("{}s", self.tracing.ttl.as_secs()),
            ),
            ("write_request_timeout", ms(self.write_request_timeout)),
            ("cas_contention_timeout", ms(self.cas_contention_timeout)),
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
                "materialized_views_enabled",
                self.materialized_views_enabled.to_string(),
            ),
            (
                "dynamic_data_masking_enabled",
                self.dynamic_data_masking_enabled.to_string(),
            ),
            (
                "batch_size_warn_threshold",
                size(self.batch_size_warn_threshold),
            ),
            (
                "batch_size_fail_threshold",
                size(self.batch_size_fail_threshold),
            ),
            (
                "unlogged_batch_across_partitions_warn_threshold",
                self.unlogged_batch_across_partitions_warn_threshold
                    .to_string(),
            ),
            ("row_cache_size", size(self.row_cache_size)),
            ("enable_cache", self.enable_cache.to_string()),
        ];
        out.sort_by(|a, b| a.0.cmp(b.0));
        out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }
}
