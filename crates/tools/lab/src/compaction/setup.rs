//! What a run is made of: the strategies and workloads, the sizes in effect, the table's
//! schema and the database configuration.

use super::args::{CompactionArgs, KEYSPACE, MB, TABLE};
use super::clock::VirtualClock;
use anyhow::{bail, Result};
use cairn_engine::compaction::manager::{Clock, ManagerConfig};
use cairn_engine::model::clustering::Order;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::{ColumnKind, TableSchema};
use cairn_engine::DatabaseConfig;
use std::path::Path;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Strategy {
    Stcs,
    Lcs,
    LcsDynamic,
    Ics,
    IcsGoal,
    Twcs,
}

impl Strategy {
    pub(super) const ALL: [Strategy; 6] = [
        Strategy::Stcs,
        Strategy::Lcs,
        Strategy::LcsDynamic,
        Strategy::Ics,
        Strategy::IcsGoal,
        Strategy::Twcs,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Strategy::Stcs => "STCS",
            Strategy::Lcs => "LCS",
            Strategy::LcsDynamic => "LCS-dynamic",
            Strategy::Ics => "ICS",
            Strategy::IcsGoal => "ICS-goal-1.25",
            Strategy::Twcs => "TWCS",
        }
    }

    pub(super) fn parse(s: &str) -> Result<Strategy> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "stcs" => Strategy::Stcs,
            "lcs" => Strategy::Lcs,
            "lcs-dynamic" | "lcs-dyn" => Strategy::LcsDynamic,
            "ics" => Strategy::Ics,
            "ics-goal" | "ics-goal-1.25" => Strategy::IcsGoal,
            "twcs" => Strategy::Twcs,
            other => bail!("unknown strategy {other:?}"),
        })
    }

    pub(super) fn is_leveled(self) -> bool {
        matches!(self, Strategy::Lcs | Strategy::LcsDynamic)
    }

    /// The table's CQL compaction map.
    pub(super) fn options(self, a: &CompactionArgs) -> Vec<(String, String)> {
        let size = a.sstable_mb.to_string();
        let min = a.min_sstable_size.to_string();
        let kv: Vec<(&str, &str)> = match self {
            Strategy::Stcs => vec![
                ("class", "SizeTieredCompactionStrategy"),
                ("min_sstable_size", &min),
            ],
            Strategy::Lcs => vec![
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
            ],
            Strategy::LcsDynamic => vec![
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
                ("dynamic_level_bytes", "true"),
            ],
            Strategy::Ics => vec![
                ("class", "IncrementalCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
            ],
            Strategy::IcsGoal => vec![
                ("class", "IncrementalCompactionStrategy"),
                ("sstable_size_in_mb", &size),
                ("min_sstable_size", &min),
                ("space_amplification_goal", "1.25"),
            ],
            Strategy::Twcs => vec![
                ("class", "TimeWindowCompactionStrategy"),
                ("compaction_window_unit", "MINUTES"),
                ("compaction_window_size", "1"),
                ("min_sstable_size", &min),
            ],
        };
        kv.into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Workload {
    Append,
    Overwrite,
    WriteDelete,
    Timeseries,
}

impl Workload {
    pub(super) const ALL: [Workload; 4] = [
        Workload::Append,
        Workload::Overwrite,
        Workload::WriteDelete,
        Workload::Timeseries,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Workload::Append => "append",
            Workload::Overwrite => "overwrite",
            Workload::WriteDelete => "write-delete",
            Workload::Timeseries => "timeseries",
        }
    }

    pub(super) fn parse(s: &str) -> Result<Workload> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "append" => Workload::Append,
            "overwrite" => Workload::Overwrite,
            "write-delete" | "writedelete" => Workload::WriteDelete,
            "timeseries" | "time-series" => Workload::Timeseries,
            other => bail!("unknown workload {other:?}"),
        })
    }
}

pub(super) fn parse_list<T: Copy>(
    s: &str,
    all: &[T],
    parse: fn(&str) -> Result<T>,
) -> Result<Vec<T>> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(all.to_vec());
    }
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(parse)
        .collect()
}

/// Sizes in effect.
pub(super) struct Sizes {
    pub(super) dataset: u64,
    pub(super) passes: u32,
    pub(super) append: u64,
    pub(super) write_delete: u64,
    pub(super) timeseries: u64,
    pub(super) calibrate: u64,
}

impl Sizes {
    pub(super) fn new(a: &CompactionArgs) -> Self {
        let q = a.quick;
        let m = |v: Option<u64>, full: u64, quick: u64| {
            (v.unwrap_or(if q { quick } else { full }) as f64 * MB) as u64
        };
        Sizes {
            dataset: m(a.dataset_mb, 200, 50),
            passes: a.passes.unwrap_or(if q { 5 } else { 11 }),
            append: m(a.append_mb, 1000, 200),
            write_delete: m(a.write_delete_mb, 400, 100),
            timeseries: m(a.timeseries_mb, 400, 100),
            calibrate: m(a.calibrate_mb, 400, 200),
        }
    }
}

pub(super) fn schema(options: Vec<(String, String)>, gc_grace: Option<u32>) -> TableSchema {
    let mut s = TableSchema::new(KEYSPACE, TABLE)
        .with_column("a", CqlType::Int, ColumnKind::PartitionKey)
        .with_clustering("b", CqlType::Int, Order::Asc)
        .with_column("c", CqlType::Blob, ColumnKind::Regular);
    s.options.compaction = options;
    if let Some(g) = gc_grace {
        s.options.gc_grace_seconds = g;
    }
    s
}

pub(super) fn db_config(
    dir: &Path,
    a: &CompactionArgs,
    clock: Option<Arc<VirtualClock>>,
) -> DatabaseConfig {
    let mut cfg = DatabaseConfig::new(dir);
    cfg.memtable_flush_threshold = a.memtable_mb << 20;
    cfg.memtable_total_space = 4 * (a.memtable_mb << 20);
    cfg.compaction = ManagerConfig {
        backlog_normalization_bytes: cfg.memtable_total_space as u64,
        ..ManagerConfig::default()
    };
    if let Some(c) = clock {
        cfg.compaction.clock = Clock(Arc::new(move || u64::from(c.now_secs())));
    }
    cfg
}
