//! Incremental compaction (ICS): size tiers of *runs*, written as fragments.
//!
//! A run is the set of sstables sharing a `run_id` (non-overlapping fragments of at most
//! `sstable_size_in_mb` each); its size is the sum of its fragments' `data_bytes`. Tiers are
//! STCS tiers over runs with ICS's finer `bucket_low`/`bucket_high` (0.7071/1.4142). Every job
//! takes all fragments of the runs it picks, splits its output at the fragment size and is
//! `incremental` (inputs are released as the output passes them, so the temporary space is a
//! few fragments instead of a whole tier).
//!
//! [`choose`] (after ScyllaDB's `incremental_compaction_strategy.cc`):
//! 1. fully expired sstables are dropped (Cairn, every strategy);
//! 2. the tier of runs with the most runs at `min_threshold` (cut to `max_threshold`), else
//!    (with `state.compact_below_min_threshold`) any tier of ≥ 2 runs;
//! 3. only when no job runs on the table (`state.running_jobs == 0`): a garbage-collection job —
//!    the largest tier holding a run worth dropping tombstones from, compacted together with the
//!    next larger tier (or the second largest when it is the largest), so tombstones reach the
//!    bottom of the tree where they can be purged.
//!
//! With a `space_amplification_goal`, before step 2: if `(S0 + S1) / S0` for the two largest
//! tiers (by average run size; S = bytes of the tier; ScyllaDB's estimate) exceeds the goal,
//! a cross-tier job (`JobKind::SpaceAmplification`) of the largest tier **with every smaller
//! run** no job holds. Differences from ScyllaDB, each for a measured reason (docs/benchmarks.md):
//! * it takes all smaller tiers, not only the second largest: they would otherwise be merged
//!   among themselves and then again into the largest tier, and the table ends near SA 1.0;
//! * it waits until a same-tier job is due (and replaces it, absorbing that tier) or the table
//!   has been quiet for `min_sstable_age`, instead of starting as soon as the estimate is over
//!   the goal — this is what keeps its write amplification low; but it goes at once when all
//!   runs together exceed the largest run by more than 1.5 × the goal's excess
//!   (`Σ runs / largest run > 1 + 1.5 × (goal − 1)`, `URGENT_EXCESS`), whatever the two-tier
//!   estimate says;
//! * it may run next to jobs on other runs (ScyllaDB waits for an idle table, which lets the
//!   live set drift far past the goal under sustained writes), but never while the table's
//!   largest run is held nor beside another cross-tier or major job (whose output run is
//!   committed fragment by fragment, unheld, and would be rewritten again);
//! * while it runs, same-tier jobs wait until a tier holds `max_threshold` runs: the runs
//!   written meanwhile go into the next cross-tier job directly, instead of being merged
//!   among themselves first (written twice, their space held twice while the table is
//!   fullest).
//!
//! The backlog ([`backlog`]) is ScyllaDB's same-tier formula over runs plus what a running
//! cross-tier job has still to rewrite ([`cross_tier_remaining`]), so the controller raises
//! the compaction threads' priority for it.
//!
//! Flushes are runs too: the engine writes an ICS table's memtable as up to 8 key-range
//! fragments ([`flush_fragments`]), so the job merging a flush releases it as its output
//! passes each fragment. A flush written as one whole-ring sstable is held until the job's
//! very end, which made the cross-tier job's end — its complete output beside every flush it
//! absorbed and every flush written meanwhile — the peak of the lab's overwrite runs.
//!
//! A run with any fragment in `state.compacting` is not a candidate. Invariant: no job input is
//! in `state.compacting`.

use std::collections::BTreeMap;

use super::common::{self, job, TierItem};
use super::decision::{Job, JobKind, SSTableInfo, Strategy, StrategyState};
use super::options::{CommonOptions, IcsOptions};

/// One run: its fragments.
#[derive(Debug, Clone)]
pub(crate) struct Run<'a> {
    pub(crate) fragments: Vec<&'a SSTableInfo>,
    pub(crate) bytes: u64,
}

impl TierItem for Run<'_> {
    fn size(&self) -> u64 {
        self.bytes
    }
}

/// Groups sstables by `run_id` (deterministic order: by run id).
pub(crate) fn runs<'a>(set: impl IntoIterator<Item = &'a SSTableInfo>) -> Vec<Run<'a>> {
    let mut map: BTreeMap<u128, Run<'a>> = BTreeMap::new();
    for s in set {
        let r = map.entry(s.run_id).or_insert_with(|| Run {
            fragments: Vec::new(),
            bytes: 0,
        });
        r.fragments.push(s);
        r.bytes = r.bytes.saturating_add(s.data_bytes);
    }
    map.into_values().collect()
}

/// Runs none of whose fragments a job holds.
fn candidate_runs<'a>(set: &'a [SSTableInfo], state: &StrategyState) -> Vec<Run<'a>> {
    runs(set)
        .into_iter()
        .filter(|r| {
            r.fragments
                .iter()
                .all(|s| !state.compacting.contains(&s.generation))
        })
        .collect()
}

fn runs_job(runs: &[&Run<'_>], o: &IcsOptions, kind: JobKind) -> Job {
    let mut j = job(
        runs.iter()
            .flat_map(|r| r.fragments.iter().map(|s| s.generation)),
        0,
        o.fragment_size(),
        kind,
    );
    j.incremental = true;
    j
}

fn total(tier: &[Run<'_>]) -> u64 {
    tier.iter().map(|r| r.bytes).sum()
}

fn avg(tier: &[Run<'_>]) -> u64 {
    if tier.is_empty() {
        0
    } else {
        total(tier) / tier.len() as u64
    }
}

/// Whether a run is worth a GC job (`find_garbage_collection_job`): written at least
/// `min(3600 s, tombstone_compaction_interval)` ago; then any run passes with
/// `unchecked_tombstone_compaction`; otherwise its droppable ratio (tombstones over cells,
/// summed over fragments) must reach `tombstone_threshold` — raised to clamp(2t, 0.5, 1.0)
/// when the run is younger than the full interval, so a frequent GC at least halves the run.
/// (Scylla also demands the full interval when the run may shadow memtable data; the memtable
/// is not known here.)
fn run_worth_gc(r: &Run<'_>, common: &CommonOptions, state: &StrategyState) -> bool {
    let Some(gc_before) = state.gc_before else {
        return false;
    };
    let Some(written) = r.fragments.iter().map(|s| s.created_at).max() else {
        return false;
    };
    let age = state.now.saturating_sub(written);
    if age < common.tombstone_compaction_interval_secs.min(3600) {
        return false;
    }
    if common.unchecked_tombstone_compaction {
        return true;
    }
    let stale = age >= common.tombstone_compaction_interval_secs;
    let threshold = if stale {
        common.tombstone_threshold
    } else {
        (common.tombstone_threshold * 2.0).clamp(0.5, 1.0)
    };
    let cells: u64 = r.fragments.iter().map(|s| s.cell_count).sum();
    if cells == 0 {
        return false;
    }
    let droppable: f64 = r
        .fragments
        .iter()
        .map(|s| s.tombstone_drop_times.sum_before(gc_before))
        .sum();
    droppable / cells as f64 >= threshold
}

/// The next ICS job, if any.
pub fn choose(
    set: &[SSTableInfo],
    common: &CommonOptions,
    o: &IcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    if let Some(j) = common::drop_expired_job(set, state) {
        return Some(j);
    }
    let cands = candidate_runs(set, state);
    let tiers = common::buckets(&cands, &o.tiers, true);
    let max = common.max_threshold as usize;
    // With a goal, while a cross-tier job runs, the runs written meanwhile wait for the next
    // one, which takes them along: merging them among themselves now would write them twice
    // and hold their space twice (inputs and outputs) at the moment the table is fullest. A
    // tier reaching max_threshold runs is still merged, so a long cross-tier job cannot let
    // small runs pile up without bound.
    let waiting = o.space_amplification_goal.is_some() && cross_tier_running(state);
    let (min, pair_min) = if waiting {
        let m = max.max(common.min_threshold as usize);
        (m, m)
    } else {
        (common.min_threshold as usize, 2)
    };
    let due = common::most_interesting(&tiers, min, max).or_else(|| {
        if state.compact_below_min_threshold {
            common::most_interesting(&tiers, pair_min, max)
        } else {
            None
        }
    });
    if let Some(goal) = o.space_amplification_goal {
        if let Some(j) = space_job(set, &tiers, goal, due.is_some(), o, state) {
            return Some(j);
        }
    }
    if let Some(tier) = due {
        let refs: Vec<&Run<'_>> = tier.iter().collect();
        return Some(runs_job(&refs, o, JobKind::Regular));
    }
    // The garbage-collection job never runs next to another job (ScyllaDB's rule).
    if state.running_jobs == 0 {
        if let Some(j) = gc_job(&tiers, common, o, state) {
            return Some(j);
        }
    }
    None
}

/// Whether a cross-tier (space-amplification) or major job runs on the table.
fn cross_tier_running(state: &StrategyState) -> bool {
    state
        .running_kinds
        .iter()
        .any(|k| matches!(k, JobKind::SpaceAmplification | JobKind::Major))
}

/// How far past the goal the wait for a due tier may let the table go, in multiples of the
/// goal's excess: all runs together may reach `1 + URGENT_EXCESS × (goal − 1)` times the
/// largest run (1.375 at goal 1.25). The job then starts at that space amplification and holds
/// a little more while it runs (what it has written beside the fragments not yet released, and
/// the flushes meanwhile). At 2 (the bound before), the timed simulator's overwrite shape
/// peaked at 1.61–1.68 with jobs at 4–6 × the write rate; at 1.5 it peaks at 1.46–1.50, for
/// 0.05–0.3 more bytes written per user byte (docs/benchmarks.md).
const URGENT_EXCESS: f64 = 1.5;

/// The space-amplification job (see the module docs), or `None` when the estimate is within
/// the goal or the job should wait.
fn space_job(
    set: &[SSTableInfo],
    tiers: &[Vec<Run<'_>>],
    goal: f64,
    same_tier_due: bool,
    o: &IcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    // One cross-tier job at a time: its output run is committed fragment by fragment and
    // is not held, so a second job would soon take that partial run for the largest tier
    // and rewrite it again.
    if cross_tier_running(state) {
        return None;
    }
    // The estimate divides by the largest tier: while a job rewrites the table's largest run
    // the candidates' estimate would mean nothing (ScyllaDB waits for an idle table instead).
    let all = runs(set);
    let largest = all.iter().max_by_key(|r| r.bytes)?;
    if largest
        .fragments
        .iter()
        .any(|s| state.compacting.contains(&s.generation))
    {
        return None;
    }
    if tiers.len() < 2 {
        return None;
    }
    let mut by_avg: Vec<&Vec<Run<'_>>> = tiers.iter().collect();
    by_avg.sort_by_key(|t| std::cmp::Reverse(avg(t)));
    let (Some(s0), Some(s1)) = (by_avg.first(), by_avg.get(1)) else {
        return None;
    };
    let (b0, b1) = (total(s0), total(s1));
    // What waiting may cost at most: the bytes of every run over the largest run may reach
    // URGENT_EXCESS × the goal's excess before the job goes regardless. Scylla's two-tier estimate
    // misses runs that fall in the largest tier (a big merge of backlogged flushes) and the
    // smaller tiers, and then the table would stay far above its goal once writes stop.
    let all_bytes: u64 = tiers.iter().flatten().map(|r| r.bytes).sum();
    let urgent = largest.bytes > 0
        && all_bytes as f64 / largest.bytes as f64 > 1.0 + URGENT_EXCESS * (goal - 1.0);
    if b0 == 0 || ((b0 + b1) as f64 / b0 as f64 <= goal && !urgent) {
        return None;
    }
    // Over the goal. The job rewrites the whole largest tier, so it waits for the moment a
    // same-tier job falls due and takes that tier along (its runs are then written once, into
    // the largest tier, instead of once into a middle tier and again into the largest), or
    // for the table to have been quiet for `min_sstable_age` (no flush will bring such a tier
    // soon). Started at once, it would rewrite the largest tier for every new middle-sized
    // run: on the lab's overwrite workload that costs ~1.3 more bytes written per user byte.
    let newest = set.iter().map(|s| s.created_at).max().unwrap_or(0);
    let quiet = state.now.saturating_sub(newest) >= o.tiers.min_sstable_age_secs;
    if !(same_tier_due || quiet || urgent) {
        return None;
    }
    // Every candidate run goes in, not only the second largest tier: the smaller tiers would
    // otherwise be merged among themselves and then again into the largest tier.
    let refs: Vec<&Run<'_>> = tiers.iter().flatten().collect();
    Some(runs_job(&refs, o, JobKind::SpaceAmplification))
}

/// The cross-tier garbage-collection job (reported as `JobKind::Tombstone`).
fn gc_job(
    tiers: &[Vec<Run<'_>>],
    common: &CommonOptions,
    o: &IcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    let i = (0..tiers.len()).rev().find(|&i| {
        tiers
            .get(i)
            .is_some_and(|t| t.iter().any(|r| run_worth_gc(r, common, state)))
    })?;
    let mut refs: Vec<&Run<'_>> = tiers.get(i)?.iter().collect();
    if tiers.len() >= 2 {
        let other = if i + 1 == tiers.len() { i - 1 } else { i + 1 };
        if let Some(t) = tiers.get(other) {
            refs.extend(t.iter());
        }
    }
    Some(runs_job(&refs, o, JobKind::Tombstone))
}

/// At most this many fragments per flush.
pub const FLUSH_FRAGMENTS: u64 = 8;
/// No flush fragment smaller than this (unless the whole flush is).
pub const MIN_FLUSH_FRAGMENT: u64 = 1 << 20;

/// How many fragments a flush of `bytes` is written as: a run of up to [`FLUSH_FRAGMENTS`]
/// key-range fragments of at least [`MIN_FLUSH_FRAGMENT`] (and more if it exceeds the
/// fragment size), rather than one sstable over the whole ring.
///
/// A whole-ring sstable is exhausted only when a job's output passes the ring's last key, so
/// the job merging it holds all of it until its very end. The cross-tier job absorbs every
/// run flushed while the previous one ran, and held them all beside its complete output and
/// the flushes that came meanwhile: its disk use at the end was about
/// `dataset + 2 × rate × job time`, the peak of the lab's overwrite runs
/// (docs/benchmarks.md). As fragments, the flushes are released as the output passes them,
/// like every other run, and the end of the job holds `dataset + rate × job time`.
/// A run of fragments is what ICS tiers anyway; reads skip the fragments whose key range
/// misses, so a point read still consults one sstable per flush.
pub fn flush_fragments(o: &IcsOptions, bytes: u64) -> usize {
    let by_fragment_size = bytes.div_ceil(o.fragment_size());
    let by_count = (bytes / MIN_FLUSH_FRAGMENT).clamp(1, FLUSH_FRAGMENTS);
    usize::try_from(by_fragment_size.max(by_count)).unwrap_or(usize::MAX)
}

/// Major compaction: everything no job holds, into fragments of `sstable_size_in_mb`.
pub fn major(set: &[SSTableInfo], o: &IcsOptions, state: &StrategyState) -> Vec<Job> {
    let cands = candidate_runs(set, state);
    if cands.is_empty() {
        return Vec::new();
    }
    let refs: Vec<&Run<'_>> = cands.iter().collect();
    vec![runs_job(&refs, o, JobKind::Major)]
}

/// Σ ceil(|tier| / max_threshold) over tiers of ≥ `min_threshold` runs.
pub fn estimated_pending(set: &[SSTableInfo], common: &CommonOptions, o: &IcsOptions) -> u64 {
    common::tiered_pending(&runs(set), &o.tiers, common)
}

/// The size-tiered backlog formula over runs (an approximation of Scylla's
/// `incremental_backlog_tracker`, which applies the same Σ Si·log4(T/Si) to runs), plus what
/// a running cross-tier job still has to rewrite ([`cross_tier_remaining`]).
pub fn backlog(
    set: &[SSTableInfo],
    common: &CommonOptions,
    o: &IcsOptions,
    state: &StrategyState,
) -> f64 {
    let rs = runs(set);
    let t = rs.iter().map(|r| r.bytes).sum();
    common::tiered_backlog(&rs, &o.tiers, common.min_threshold, t)
        + cross_tier_remaining(set, state) as f64
}

/// Bytes a running cross-tier job has still to read, each to be written once more: the live
/// sstables running jobs hold while one of them is a cross-tier job (an incremental job drops
/// its inputs from the live set as its output passes them, so what is still live and held is
/// what is left).
///
/// Scylla's tracker counts same-tier work only, Σ (Si − Ci)·log4(T/Si), in which the largest
/// run weighs ~0 (Si ≈ T). A cross-tier job that rewrites the whole table then leaves the
/// backlog — and so the compaction threads' priority — at what the few small runs beside it
/// are worth, and on a busy machine it crawls while the table holds its inputs, its output and
/// every flush written meanwhile: the peak of the space goal's runs (docs/benchmarks.md). Its
/// remaining input is work the backlog's definition ("what is left to do to compact
/// everything") includes. Same-tier jobs running beside it are counted here too (their held
/// runs, once); they are rare, as same-tier jobs wait while a cross-tier job runs.
pub fn cross_tier_remaining(set: &[SSTableInfo], state: &StrategyState) -> u64 {
    if !state.running_kinds.contains(&JobKind::SpaceAmplification) {
        return 0;
    }
    set.iter()
        .filter(|s| state.compacting.contains(&s.generation))
        .map(|s| s.data_bytes)
        .sum()
}

impl Strategy for IcsOptions {
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

    fn backlog(&self, set: &[SSTableInfo], common: &CommonOptions, state: &StrategyState) -> f64 {
        backlog(set, common, self, state)
    }

    fn flush_fragments(&self, bytes: u64) -> usize {
        flush_fragments(self, bytes)
    }
}
