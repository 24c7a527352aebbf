//! Size-tiered compaction (STCS): merge sstables of similar size.
//!
//! Order of decisions in [`choose`] (ScyllaDB `size_tiered_compaction_strategy.cc`):
//! 1. fully expired sstables are dropped whole (Cairn does this first for every strategy);
//! 2. the tier with the most sstables among tiers of ≥ `min_threshold`, cut to its
//!    `max_threshold` smallest;
//! 3. else, with `state.compact_below_min_threshold` (ScyllaDB's `compaction_enforce_min_threshold:
//!    false`), any tier of ≥ 2;
//! 4. else a single-sstable tombstone compaction: from the largest tier down, the sstable with
//!    the oldest `min_timestamp` worth dropping tombstones from.
//!
//! Tiers are measured in `data_bytes` (uncompressed), as Scylla's `data_size()`. Outputs are one
//! sstable at level 0. Invariant: no job input is in `state.compacting`.

use super::common::{self, candidates, job};
use super::decision::{Job, JobKind, SSTableInfo, Strategy, StrategyState};
use super::options::{CommonOptions, TierOptions};

/// Whether small sstables (below `min_sstable_size`) may share one tier regardless of their
/// sizes: not while a small sstable was written within `min_sstable_age`, so a burst of tiny
/// flushes is not merged over and over as it grows.
pub(crate) fn small_grouping_allowed(set: &[&SSTableInfo], t: &TierOptions, now: u64) -> bool {
    !set.iter().any(|s| {
        s.data_bytes < t.min_sstable_size
            && now.saturating_sub(s.created_at) < t.min_sstable_age_secs
    })
}

/// The next STCS job, if any.
pub fn choose(
    set: &[SSTableInfo],
    common: &CommonOptions,
    t: &TierOptions,
    state: &StrategyState,
) -> Option<Job> {
    if let Some(j) = common::drop_expired_job(set, state) {
        return Some(j);
    }
    let cands = candidates(set, state);
    let small_ok = small_grouping_allowed(&cands, t, state.now);
    if let Some(tier) = common::stcs_pick(&cands, t, common, small_ok, state) {
        return Some(job(
            tier.iter().map(|s| s.generation),
            0,
            u64::MAX,
            JobKind::Regular,
        ));
    }
    tombstone_job(&cands, common, t, state, small_ok, false)
}

/// The single-sstable tombstone compaction, from the largest tier down (older, larger tiers
/// are less likely to hold tombstones that shadow data elsewhere).
pub(crate) fn tombstone_job(
    cands: &[&SSTableInfo],
    common: &CommonOptions,
    t: &TierOptions,
    state: &StrategyState,
    small_ok: bool,
    disabled: bool,
) -> Option<Job> {
    let tiers = common::buckets(cands, t, small_ok);
    for tier in tiers.iter().rev() {
        let oldest = tier
            .iter()
            .filter(|s| common::worth_dropping_tombstones(s, common, state, disabled))
            .min_by_key(|s| (s.min_timestamp, s.generation));
        if let Some(s) = oldest {
            return Some(job([s.generation], s.level, u64::MAX, JobKind::Tombstone));
        }
    }
    None
}

/// Major compaction: every sstable no job holds, into one sstable.
pub fn major(set: &[SSTableInfo], state: &StrategyState) -> Vec<Job> {
    let cands = candidates(set, state);
    if cands.is_empty() {
        return Vec::new();
    }
    vec![job(
        cands.iter().map(|s| s.generation),
        0,
        u64::MAX,
        JobKind::Major,
    )]
}

/// Σ ceil(|tier| / max_threshold) over tiers of ≥ `min_threshold` sstables (Scylla's
/// `estimated_pending_compactions`), over the whole set.
pub fn estimated_pending(set: &[SSTableInfo], common: &CommonOptions, t: &TierOptions) -> u64 {
    let all: Vec<&SSTableInfo> = set.iter().collect();
    common::tiered_pending(&all, t, common)
}

/// Σ Si·log4(T/Si) over sstables in tiers of ≥ `min_threshold` (see `common::tiered_backlog`).
pub fn backlog(set: &[SSTableInfo], common: &CommonOptions, t: &TierOptions) -> f64 {
    let all: Vec<&SSTableInfo> = set.iter().collect();
    let total = set.iter().map(|s| s.data_bytes).sum();
    common::tiered_backlog(&all, t, common.min_threshold, total)
}

impl Strategy for TierOptions {
    fn choose(
        &self,
        set: &[SSTableInfo],
        common: &CommonOptions,
        state: &StrategyState,
    ) -> Option<Job> {
        choose(set, common, self, state)
    }

    fn major(&self, set: &[SSTableInfo], state: &StrategyState) -> Vec<Job> {
        major(set, state)
    }

    fn estimated_pending(&self, set: &[SSTableInfo], common: &CommonOptions) -> u64 {
        estimated_pending(set, common, self)
    }

    fn backlog(&self, set: &[SSTableInfo], common: &CommonOptions, _: &StrategyState) -> f64 {
        backlog(set, common, self)
    }
}
