//! Rules every strategy shares: size tiers, fully expired sstables, tombstone compactions,
//! key-range overlap and the size-tiered backlog formula.
//!
//! Everything here is a pure function of the sstable descriptions; callers pass only the
//! sstables they may pick (not in `state.compacting`) unless a function says otherwise.

use super::decision::{Job, JobKind, SSTableInfo, StrategyState};
use super::options::{CommonOptions, TierOptions};

/// The sstables a strategy may pick: those no running job holds.
pub(crate) fn candidates<'a>(
    set: &'a [SSTableInfo],
    state: &StrategyState,
) -> Vec<&'a SSTableInfo> {
    set.iter()
        .filter(|s| !state.compacting.contains(&s.generation))
        .collect()
}

/// Whether two sstables' key ranges intersect (inclusive bounds).
pub(crate) fn overlaps(a: &SSTableInfo, b: &SSTableInfo) -> bool {
    a.first_key <= b.last_key && b.first_key <= a.last_key
}

/// A job over `inputs` with sorted, deduplicated generations.
pub(crate) fn job(
    inputs: impl IntoIterator<Item = u64>,
    output_level: u32,
    max_output_bytes: u64,
    kind: JobKind,
) -> Job {
    let mut inputs: Vec<u64> = inputs.into_iter().collect();
    inputs.sort_unstable();
    inputs.dedup();
    Job {
        inputs,
        output_level,
        max_output_bytes,
        incremental: false,
        time_window: None,
        kind,
    }
}

/// Fully expired sstables that may be deleted without being read (Cassandra's
/// `getFullyExpiredSSTables`): holding nothing live, every deletion older than `gc_before`,
/// and nothing in them can shadow older data elsewhere — their `max_timestamp` is below the
/// `min_timestamp` of every overlapping sstable that is not itself being dropped (including
/// sstables that running jobs hold: their data is still live).
pub(crate) fn fully_expired(set: &[SSTableInfo], state: &StrategyState) -> Vec<u64> {
    let Some(gc_before) = state.gc_before else {
        return Vec::new();
    };
    let is_candidate = |s: &SSTableInfo| {
        !state.compacting.contains(&s.generation)
            && s.fully_expiring
            && s.max_local_deletion_time < gc_before
    };
    let dropped: Vec<&SSTableInfo> = set.iter().filter(|s| is_candidate(s)).collect();
    dropped
        .iter()
        .filter(|d| {
            state
                .memtable_min_timestamp
                .is_none_or(|m| d.max_timestamp < m)
                && set
                    .iter()
                    .filter(|o| !is_candidate(o) && overlaps(d, o))
                    .all(|o| d.max_timestamp < o.min_timestamp)
        })
        .map(|d| d.generation)
        .collect()
}

/// The `DropExpired` job, if any sstable qualifies.
pub(crate) fn drop_expired_job(set: &[SSTableInfo], state: &StrategyState) -> Option<Job> {
    let expired = fully_expired(set, state);
    if expired.is_empty() {
        return None;
    }
    Some(job(expired, 0, u64::MAX, JobKind::DropExpired))
}

/// ScyllaDB's `worth_dropping_tombstones`: the sstable was written at least
/// `tombstone_compaction_interval` ago (so recent tombstones still covering data elsewhere do
/// not loop), and its estimated droppable-tombstone ratio reaches `tombstone_threshold`, a
/// check `unchecked_tombstone_compaction` skips. Never when tombstone GC is disabled, nor when
/// the strategy disabled tombstone compactions (`disabled`, TWCS without explicit options).
pub(crate) fn worth_dropping_tombstones(
    s: &SSTableInfo,
    common: &CommonOptions,
    state: &StrategyState,
    disabled: bool,
) -> bool {
    if disabled {
        return false;
    }
    let Some(gc_before) = state.gc_before else {
        return false;
    };
    if state
        .now
        .saturating_sub(common.tombstone_compaction_interval_secs)
        < s.created_at
    {
        return false;
    }
    if common.unchecked_tombstone_compaction {
        return true;
    }
    s.droppable_tombstone_ratio(gc_before) >= common.tombstone_threshold
}

/// Something a size tier holds: an sstable (STCS) or a run of fragments (ICS).
pub(crate) trait TierItem {
    fn size(&self) -> u64;
}

impl TierItem for &SSTableInfo {
    fn size(&self) -> u64 {
        self.data_bytes
    }
}

/// Scylla's `get_buckets`: items sorted by size; an item joins the last tier when its size is
/// within `(avg * bucket_low, avg * bucket_high)`, or when both it and the tier average are
/// "small" (`< min_sstable_size`, and `small_ok`); a tier's smallest item must stay above
/// `new_avg * bucket_low` so the average cannot drift away from it. Tiers come smallest first.
pub(crate) fn buckets<T: TierItem + Clone>(
    items: &[T],
    t: &TierOptions,
    small_ok: bool,
) -> Vec<Vec<T>> {
    let mut sorted: Vec<T> = items.to_vec();
    sorted.sort_by_key(|x| x.size());
    let min_size = t.min_sstable_size as f64;
    let mut out: Vec<(Vec<T>, f64)> = Vec::new();
    for item in sorted {
        let size = item.size() as f64;
        if let Some((bucket, avg)) = out.last_mut() {
            let in_range = size > *avg * t.bucket_low && size < *avg * t.bucket_high;
            let small = small_ok && size < min_size && *avg < min_size;
            if in_range || small {
                let n = bucket.len() as f64;
                let new_avg = (n * *avg + size) / (n + 1.0);
                let smallest = bucket.first().map_or(0.0, |x| x.size() as f64);
                if (small_ok && size < min_size) || smallest > new_avg * t.bucket_low {
                    bucket.push(item);
                    *avg = new_avg;
                    continue;
                }
            }
        }
        out.push((vec![item], size));
    }
    out.into_iter().map(|(b, _)| b).collect()
}

/// Scylla's `most_interesting_bucket`: among tiers with at least `min` items, each truncated to
/// its `max` smallest, the one with the most items (the first such on ties: the smaller tier).
pub(crate) fn most_interesting<T: Clone>(
    tiers: &[Vec<T>],
    min: usize,
    max: usize,
) -> Option<Vec<T>> {
    let mut best: Option<Vec<T>> = None;
    for tier in tiers {
        if tier.len() < min {
            continue;
        }
        let take: Vec<T> = tier.iter().take(max.max(1)).cloned().collect();
        if best.as_ref().is_none_or(|b| take.len() > b.len()) {
            best = Some(take);
        }
    }
    best
}

/// STCS's choice among `cands` (the tier with the most files at `min_threshold`, else — only
/// with `state.compact_below_min_threshold` — any tier of ≥ 2), without the tombstone fallback.
pub(crate) fn stcs_pick<'a>(
    cands: &[&'a SSTableInfo],
    tiers: &TierOptions,
    common: &CommonOptions,
    small_ok: bool,
    state: &StrategyState,
) -> Option<Vec<&'a SSTableInfo>> {
    let b = buckets(cands, tiers, small_ok);
    let max = common.max_threshold as usize;
    most_interesting(&b, common.min_threshold as usize, max).or_else(|| {
        if state.compact_below_min_threshold {
            most_interesting(&b, 2, max)
        } else {
            None
        }
    })
}

/// `log4(x)`, 0 for `x <= 1`.
pub(crate) fn log4(x: f64) -> f64 {
    if x <= 1.0 {
        0.0
    } else {
        x.ln() / 4f64.ln()
    }
}

/// The size-tiered backlog (`docs/dev/compaction_controller.md`): Σ Si·log4(T/Si) over the
/// items of tiers with at least `min_threshold` items, T = total bytes of `sizes_all`. The
/// bytes running jobs already compacted (Ci) are not known here and count as 0.
pub(crate) fn tiered_backlog<T: TierItem + Clone>(
    items: &[T],
    tiers: &TierOptions,
    min_threshold: u32,
    total: u64,
) -> f64 {
    let t = total as f64;
    buckets(items, tiers, true)
        .iter()
        .filter(|b| b.len() >= min_threshold as usize)
        .flatten()
        .map(|x| {
            let s = x.size() as f64;
            s * (log4(t) - log4(s)).max(0.0)
        })
        .fold(0.0, |a, b| a + b)
}

/// Σ ceil(|tier| / max_threshold) over tiers of at least `min_threshold` items.
pub(crate) fn tiered_pending<T: TierItem + Clone>(
    items: &[T],
    tiers: &TierOptions,
    common: &CommonOptions,
) -> u64 {
    let max = u64::from(common.max_threshold.max(1));
    buckets(items, tiers, true)
        .iter()
        .filter(|b| b.len() >= common.min_threshold as usize)
        .map(|b| (b.len() as u64).div_ceil(max))
        .sum()
}
