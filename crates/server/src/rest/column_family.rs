//! Per-table figures of the REST API: ScyllaDB's `/column_family/metrics/{metric}/{ks}:{cf}`
//! and `/column_family/sstables/per_level/{ks}:{cf}`, what `nodetool tablestats` and
//! `nodetool tablehistograms` read.
//!
//! Scalars are JSON numbers. Histograms are Cairn's shape (ScyllaDB returns bare bucket
//! arrays whose bounds the client must know):
//! `{"bucket_offsets": [upper bounds…], "buckets": [counts…, overflow], "sum": n, "count": n}`
//! — `buckets` has one more entry than `bucket_offsets`, the values above every bound.
//! Latencies are in microseconds, sizes in bytes.

use super::http::Response;
use super::json::Json;
use super::{engine_error, AdminBackend};
use cairn_engine::compaction::manager::TableCompactionStats;
use cairn_engine::metrics::HistogramSnapshot;
use cairn_engine::table::{Table, TableStats};
use std::sync::Arc;

/// A histogram as JSON (see module docs).
pub fn histogram_json(h: &HistogramSnapshot) -> Json {
    Json::obj([
        (
            "bucket_offsets",
            Json::Arr(h.bounds.iter().map(|&b| Json::uint(b)).collect()),
        ),
        (
            "buckets",
            Json::Arr(h.counts.iter().map(|&c| Json::uint(c)).collect()),
        ),
        ("sum", Json::uint(h.sum)),
        ("count", Json::uint(h.count())),
    ])
}

/// Parses [`histogram_json`]'s output (for clients).
pub fn histogram_from_json(v: &Json) -> Option<HistogramSnapshot> {
    let nums = |k: &str| -> Option<Vec<u64>> {
        v.get(k)?
            .as_array()?
            .iter()
            .map(|n| n.as_i64().and_then(|n| u64::try_from(n).ok()))
            .collect()
    };
    let sum = u64::try_from(v.get("sum")?.as_i64()?).ok()?;
    HistogramSnapshot::from_parts(nums("bucket_offsets")?, nums("buckets")?, sum)
}

/// Splits `ks:cf`, checking the table exists; its figures.
fn figures(
    backend: &dyn AdminBackend,
    name: &str,
) -> Result<(TableStats, TableCompactionStats), Response> {
    let table = table(backend, name)?;
    let stats = table.stats().map_err(engine_error)?;
    let compaction = backend
        .database()
        .compaction()
        .table_stats(&table)
        .map_err(engine_error)?;
    Ok((stats, compaction))
}

/// `GET /column_family/metrics/{metric}/{ks}:{cf}` (and the two-segment histogram metrics,
/// `read_latency/estimated_histogram`, …, passed as `metric` = `read_latency/estimated_histogram`).
pub fn metric(backend: &dyn AdminBackend, metric: &str, name: &str) -> Response {
    match metric {
        "droppable_tombstone_ratio" => return droppable_tombstone_ratio(backend, name),
        "recent_bloom_filter_false_positives" | "recent_bloom_filter_false_ratio" => {
            return recent_bloom_filter(backend, metric, name)
        }
        _ => {}
    }
    let (s, c) = match figures(backend, name) {
        Ok(f) => f,
        Err(r) => return r,
    };
    match value(&s, &c, metric) {
        Some(v) => Response::ok(v.to_text()),
        None => Response::error(404, format!("Unknown column family metric {metric}")),
    }
}

/// Splits `ks:cf` and finds the table.
fn table(backend: &dyn AdminBackend, name: &str) -> Result<Arc<Table>, Response> {
    let Some((ks, cf)) = name.split_once(':') else {
        return Err(bad_name(name));
    };
    backend
        .database()
        .table(ks, cf)
        .ok_or_else(|| super::no_table(ks, cf))
}

/// `GET /column_family/metrics/recent_bloom_filter_false_{positives,ratio}/{ks}:{cf}`:
/// as Cassandra and ScyllaDB, "recent" means since the previous call of either, which each
/// call resets (the ratio is false / (false + true) positives of that span, 0 without any).
fn recent_bloom_filter(backend: &dyn AdminBackend, metric: &str, name: &str) -> Response {
    let table = match table(backend, name) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let v = if metric == "recent_bloom_filter_false_positives" {
        Json::uint(table.io.take_recent_bloom_false_positives())
    } else {
        let (f, t) = table.io.take_recent_bloom_outcomes();
        Json::Float(false_ratio(f, t))
    };
    Response::ok(v.to_text())
}

/// Cassandra's bloom filter false ratio: false positives over every positive answer.
fn false_ratio(false_positives: u64, true_positives: u64) -> f64 {
    match false_positives + true_positives {
        0 => 0.0,
        n => false_positives as f64 / n as f64,
    }
}

/// `GET /column_family/metrics/droppable_tombstone_ratio/{ks}:{cf}` (Cairn; Cassandra's
/// `DroppableTombstoneRatio`): see [`cairn_engine::table::Table::droppable_tombstone_ratio`].
fn droppable_tombstone_ratio(backend: &dyn AdminBackend, name: &str) -> Response {
    let table = match table(backend, name) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let now = u32::try_from(now).unwrap_or(u32::MAX);
    Response::ok(Json::Float(table.droppable_tombstone_ratio(now)).to_text())
}

fn bad_name(name: &str) -> Response {
    Response::error(
        400,
        format!("Column family name should be in keyspace:column_family format, not {name}"),
    )
}

/// `GET /column_family/sstables/per_level/{ks}:{cf}`: live sstables per level.
pub fn per_level(backend: &dyn AdminBackend, name: &str) -> Response {
    match figures(backend, name) {
        Ok((_, c)) => Response::ok(
            Json::Arr(
                c.sstables_per_level
                    .iter()
                    .map(|&n| Json::uint(n as u64))
                    .collect(),
            )
            .to_text(),
        ),
        Err(r) => r,
    }
}

/// One metric's value; `None` for an unknown name.
fn value(s: &TableStats, c: &TableCompactionStats, metric: &str) -> Option<Json> {
    let (offsets, summary, bloom) = s.metadata_memory;
    let n = |v: u64| Some(Json::uint(v));
    match metric {
        "live_ss_table_count" => n(s.sstable_count as u64),
        "live_disk_space_used" => n(s.live_disk_bytes),
        "total_disk_space_used" => n(s.total_disk_bytes),
        "total_disk_space_before_compression" => n(s.uncompressed_data_bytes),
        "memtable_live_data_size" => n(s.memtable_live_bytes),
        "all_memtables_live_data_size"
        | "memtable_off_heap_size"
        | "all_memtables_off_heap_size" => n(s.memtable_bytes),
        // Cairn does not count cells in memtables: this is partition updates applied.
        "memtable_columns_count" => n(s.memtable_writes),
        "memtable_switch_count" => n(s.flushes),
        "estimated_row_count" | "estimated_partition_count" => n(s.partition_count_estimate),
        "pending_compactions" => n(c.pending),
        "snapshots_size" => n(s.snapshots_true_size),
        "read" => n(s.read_latency.count()),
        "write" => n(s.write_latency.count()),
        "range_scans" => n(s.range_scans),
        // ScyllaDB: the total of the latencies, in microseconds.
        "read_latency" => n(s.read_latency.sum),
        "write_latency" => n(s.write_latency.sum),
        "min_row_size" => n(s.partition_sizes.min()),
        "max_row_size" => n(s.partition_sizes.max()),
        "mean_row_size" => n(s.partition_sizes.mean()),
        // Counted since the node started (the "recent" ones are in `recent_bloom_filter`).
        "bloom_filter_false_positives" => n(s.bloom_false_positives),
        "bloom_filter_false_ratio" => Some(Json::Float(false_ratio(
            s.bloom_false_positives,
            s.bloom_true_positives,
        ))),
        "pending_flushes" => n(s.pending_flushes),
        "bloom_filter_disk_space_used" | "bloom_filter_off_heap_memory_used" => n(bloom as u64),
        "index_summary_off_heap_memory_used" => n(summary as u64),
        "compression_metadata_off_heap_memory_used" => n(offsets as u64),
        "compression_ratio" => Some(Json::Float(if s.uncompressed_data_bytes == 0 {
            0.0
        } else {
            s.compressed_data_bytes as f64 / s.uncompressed_data_bytes as f64
        })),
        "estimated_row_size_histogram" => Some(histogram_json(&(&s.partition_sizes).into())),
        "estimated_column_count_histogram" => {
            Some(histogram_json(&(&s.cells_per_partition).into()))
        }
        "sstables_per_read_histogram" => Some(histogram_json(&s.sstables_per_read)),
        // Per single-partition read, over the last five minutes (as nodetool prints them).
        "live_scanned_histogram" => Some(histogram_json(&s.live_scanned_recent)),
        "tombstone_scanned_histogram" => Some(histogram_json(&s.tombstone_scanned_recent)),
        "read_latency/estimated_histogram" | "read_latency/histogram" => {
            Some(histogram_json(&s.read_latency))
        }
        "write_latency/estimated_histogram" | "write_latency/histogram" => {
            Some(histogram_json(&s.write_latency))
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn histograms_round_trip_through_json() {
        let h = HistogramSnapshot::from_parts(vec![1, 5, 9], vec![0, 3, 1, 2], 40).unwrap();
        let text = histogram_json(&h).to_text();
        assert_eq!(
            text,
            r#"{"bucket_offsets":[1,5,9],"buckets":[0,3,1,2],"sum":40,"count":6}"#
        );
        let back = histogram_from_json(&Json::parse(&text).unwrap()).unwrap();
        assert_eq!(back, h);
        assert!(histogram_from_json(
            &Json::parse(r#"{"bucket_offsets":[1],"buckets":[1],"sum":0}"#).unwrap()
        )
        .is_none());
    }
}
