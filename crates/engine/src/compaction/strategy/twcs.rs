//! Time-window compaction (TWCS): one tier per time window of write timestamps.
//!
//! An sstable belongs to the window its `max_timestamp` falls in (converted from
//! `timestamp_resolution` to seconds and floored to `compaction_window_size ×
//! compaction_window_unit`). [`choose`] (ScyllaDB `time_window_compaction_strategy.cc`):
//! 1. fully expired sstables are dropped whole (Scylla does this at most every
//!    `expired_sstable_check_frequency_seconds`; the check is cheap here, so Cairn looks every
//!    time);
//! 2. windows from newest to oldest: an older window with ≥ 2 sstables is compacted whole (cut
//!    to `max_threshold`, smallest first) — Scylla only does so for windows that were recently
//!    active, which it remembers between calls; Cairn is stateless, so every older window ends
//!    as one sstable; the newest window (the highest window seen in the set) gets STCS among
//!    its sstables once it holds ≥ `min_threshold`;
//! 3. a single-sstable tombstone compaction (oldest `min_timestamp` first), only when
//!    `tombstone_threshold` or `tombstone_compaction_interval` was given explicitly.
//!
//! Jobs split their outputs by window ([`super::TimeWindow`], which carries the
//! `timestamp_resolution` so MILLISECONDS tables are split as MICROSECONDS ones are), as
//! Scylla's interposer does. Invariant: no job input is in `state.compacting`.

use std::collections::BTreeMap;

use super::common::{self, candidates, job};
use super::decision::{Job, JobKind, SSTableInfo, Strategy, StrategyState, TimeWindow};
use super::options::{CommonOptions, TwcsOptions};
use super::stcs;

/// Sstables by window start (seconds), oldest window first.
fn windows<'a>(set: &[&'a SSTableInfo], o: &TwcsOptions) -> BTreeMap<i64, Vec<&'a SSTableInfo>> {
    let window = TimeWindow::of(o);
    let mut out: BTreeMap<i64, Vec<&SSTableInfo>> = BTreeMap::new();
    for s in set {
        out.entry(window.start(s.max_timestamp))
            .or_default()
            .push(s);
    }
    out
}

fn twcs_job(inputs: &[&SSTableInfo], o: &TwcsOptions, kind: JobKind) -> Job {
    let mut j = job(inputs.iter().map(|s| s.generation), 0, u64::MAX, kind);
    j.time_window = Some(TimeWindow::of(o));
    j
}

/// The next TWCS job, if any.
pub fn choose(
    set: &[SSTableInfo],
    common: &CommonOptions,
    o: &TwcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    if let Some(j) = common::drop_expired_job(set, state) {
        return Some(j);
    }
    let all: Vec<&SSTableInfo> = set.iter().collect();
    let newest = windows(&all, o).keys().next_back().copied();
    let cands = candidates(set, state);
    let max = common.max_threshold as usize;
    for (start, mut ssts) in windows(&cands, o).into_iter().rev() {
        if Some(start) != newest && ssts.len() >= 2 {
            ssts.sort_by_key(|s| (s.data_bytes, s.generation));
            ssts.truncate(max.max(2));
            return Some(twcs_job(&ssts, o, JobKind::Regular));
        }
        if ssts.len() >= common.min_threshold as usize {
            let small_ok = stcs::small_grouping_allowed(&ssts, &o.tiers, state.now);
            let tiers = common::buckets(&ssts, &o.tiers, small_ok);
            if let Some(tier) = common::most_interesting(&tiers, common.min_threshold as usize, max)
            {
                return Some(twcs_job(&tier, o, JobKind::Regular));
            }
        }
    }
    let disabled = !common.tombstone_options_explicit;
    let oldest = cands
        .iter()
        .filter(|s| common::worth_dropping_tombstones(s, common, state, disabled))
        .min_by_key(|s| (s.min_timestamp, s.generation))?;
    let mut j = twcs_job(&[oldest], o, JobKind::Tombstone);
    j.output_level = oldest.level;
    Some(j)
}

/// Major compaction: one job per window holding ≥ 2 sstables, or one sstable whose data spans
/// several windows; outputs split by window.
pub fn major(set: &[SSTableInfo], o: &TwcsOptions, state: &StrategyState) -> Vec<Job> {
    let cands = candidates(set, state);
    let window = TimeWindow::of(o);
    windows(&cands, o)
        .into_values()
        .filter(|ssts| {
            ssts.len() >= 2
                || ssts
                    .iter()
                    .any(|s| window.start(s.min_timestamp) != window.start(s.max_timestamp))
        })
        .map(|ssts| twcs_job(&ssts, o, JobKind::Major))
        .collect()
}

/// Per window: the newest window's STCS estimate, one task for each older window of ≥ 2.
pub fn estimated_pending(set: &[SSTableInfo], common: &CommonOptions, o: &TwcsOptions) -> u64 {
    let all: Vec<&SSTableInfo> = set.iter().collect();
    let w = windows(&all, o);
    let newest = w.keys().next_back().copied();
    w.iter()
        .map(|(start, ssts)| {
            if Some(*start) == newest {
                common::tiered_pending(ssts, &o.tiers, common)
            } else {
                u64::from(ssts.len() >= 2)
            }
        })
        .sum()
}

/// Sum of the size-tiered backlogs of the windows (Scylla's `time_window_backlog_tracker`).
pub fn backlog(set: &[SSTableInfo], common: &CommonOptions, o: &TwcsOptions) -> f64 {
    let all: Vec<&SSTableInfo> = set.iter().collect();
    windows(&all, o)
        .values()
        .map(|ssts| {
            let t = ssts.iter().map(|s| s.data_bytes).sum();
            common::tiered_backlog(ssts, &o.tiers, common.min_threshold, t)
        })
        .sum()
}

impl Strategy for TwcsOptions {
    fn choose(
        &self,
        set: &[SSTableInfo],
        common: &CommonOptions,
        state: &StrategyState,
    ) -> Option<Job> {
        choose(set, common, self, state)
    }

    fn major(&self, set: &[SSTableInfo], state: &StrategyState) -> Vec<Job> {
        major(set, self, state)
    }

    fn estimated_pending(&self, set: &[SSTableInfo], common: &CommonOptions) -> u64 {
        estimated_pending(set, common, self)
    }

    fn backlog(&self, set: &[SSTableInfo], common: &CommonOptions, _: &StrategyState) -> f64 {
        backlog(set, common, self)
    }
}
