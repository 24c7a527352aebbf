//! Leveled compaction (LCS), static (Cassandra/Scylla) or with dynamic level targets.
//!
//! Levels ≥ 1 are runs: sstables of one level never overlap in key range. L0 holds flushes.
//!
//! **Static targets** (`leveled_manifest.hh`): L0 = 4 × sstable_size, Ln = Fⁿ × sstable_size,
//! F being Cassandra's `fanout_size` (10 by default).
//! [`choose`] then follows `get_compaction_candidates`:
//! 1. fully expired sstables are dropped (Cairn, every strategy);
//! 2. if a level ≥ 1 is over target and L0 holds more than 32 sstables, STCS inside L0 ("L0 is
//!    too far behind");
//! 3. levels from the highest down to 1 with score `bytes / target > 1.001`: one sstable of
//!    the level — round robin after `state.last_compacted_keys[level]` — with the sstables of
//!    the next level its range overlaps, into the next level;
//! 4. L0: when L0 holds at least one sstable_size of data, its (up to 32) oldest sstables with
//!    the overlapping L1 sstables are promoted to L1; otherwise STCS inside L0 (output L0);
//! 5. pushing data down while a level is less than F × the one above it;
//! 6. a tombstone compaction of the sstable with the highest droppable ratio, highest level first.
//!
//! A level ≥ 1 whose sstables overlap (after a reshard or a load) is first compacted in place.
//!
//! **Dynamic targets** (`dynamic_level_bytes`, RocksDB's `level_compaction_dynamic_level_bytes`):
//! the last level is the deepest non-empty one (L8 for an empty table) and its target is its
//! actual size; each level above targets 1/F of the one below. The *base level* is the
//! first level whose target reaches one sstable_size: L0 is promoted straight into it, and the
//! levels above it are kept empty. So the levels above the last hold about 1/9 of what it
//! holds: the last level carries ~90 % of the data, and the worst-case space amplification of
//! an overwrite workload is ~1.11, where static targets leave it unbounded while the last level
//! is still far below its 10ⁿ target.
//!
//! Every output is split at sstable_size, and jobs are incremental (inputs released as the
//! outputs pass them). Jobs run in parallel when their key ranges cannot meet (RocksDB's rule,
//! where ScyllaDB runs one LCS job per table):
//! * one L0 job at a time (a promotion or STCS inside L0), and a promotion only when no job
//!   holds a base-level sstable its L0 inputs overlap — with hashed keys, all of the base level;
//! * an Ln → Ln+1 step takes an sstable no job holds, with its Ln+1 overlaps, and only when no
//!   job holds any of those overlaps. Its key span then meets no held sstable of either level
//!   (the levels do not overlap), so two steps on one level write disjoint ranges, and a step
//!   may move down the fragments a running promotion has already committed — the second
//!   compactor's share while the first rewrites the base level. (Before, one job per level
//!   left the second compactor idle during promotions: under sustained writes LCS then ran
//!   ~100 % of the time on one thread and L0 swung with the machine's load, docs/benchmarks.md.)
//! * in-place compaction of an overlapping level and tombstone rewrites wait until no job
//!   holds an sstable of their level.
//!
//! Data newer than a level may sit in the level below for a while (a committed promotion
//! fragment moved down while the promotion still holds the old base-level sstables); reads and
//! purging reconcile every live sstable by timestamp, so only the level invariant matters, and
//! each level's key ranges stay disjoint once the running jobs commit. Invariant: no job input
//! is in `state.compacting`.

use super::common::{self, candidates, job, overlaps};
use super::decision::{Job, JobKind, SSTableInfo, Strategy, StrategyState};
use super::options::{CommonOptions, LcsOptions};
use super::stcs;

/// A leveled job: incremental, so each input of the deeper level (a run of non-overlapping
/// sstables) is released as soon as the outputs pass its last key, and the temporary space
/// of an L0 → L1 promotion is L0 plus a few sstables rather than all of L1 twice.
fn leveled(mut j: Job) -> Job {
    j.incremental = true;
    j
}

/// Levels 0..=8.
pub const MAX_LEVELS: usize = 9;
/// At most this many L0 sstables are promoted at once; above it, L0 gets STCS first.
pub const MAX_COMPACTING_L0: usize = 32;
/// A level is compacted when `bytes / target` exceeds this.
pub const TARGET_SCORE: f64 = 1.001;

fn level_index(s: &SSTableInfo) -> usize {
    (s.level as usize).min(MAX_LEVELS - 1)
}

/// Data bytes per level.
fn level_bytes<'a>(set: impl IntoIterator<Item = &'a SSTableInfo>) -> [u64; MAX_LEVELS] {
    let mut out = [0u64; MAX_LEVELS];
    for s in set {
        if let Some(b) = out.get_mut(level_index(s)) {
            *b = b.saturating_add(s.data_bytes);
        }
    }
    out
}

/// Static capacity of a level: L0 = 4 × sstable_size, Ln = fanoutⁿ × sstable_size
/// (`fanout_size`, 10 by default).
pub fn max_bytes_for_level(level: usize, sstable_size: u64, fanout: u64) -> u64 {
    if level == 0 {
        return sstable_size.saturating_mul(4);
    }
    fanout
        .checked_pow(level as u32)
        .map_or(u64::MAX, |f| f.saturating_mul(sstable_size))
}

/// Per-level byte targets, with where L0 goes and which level is last.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelTargets {
    /// Target bytes per level (index = level). Levels above `base_level` (other than L0)
    /// target 0: they should be empty.
    pub targets: [u64; MAX_LEVELS],
    /// The level L0 is promoted into.
    pub base_level: usize,
    /// The deepest level (dynamic: the deepest non-empty one, or L8).
    pub last_level: usize,
}

/// The level targets of `set` under `o` (static or dynamic).
pub fn level_targets(set: &[SSTableInfo], o: &LcsOptions) -> LevelTargets {
    let size = o.sstable_size();
    let mut targets = [0u64; MAX_LEVELS];
    for (l, t) in targets.iter_mut().enumerate() {
        *t = max_bytes_for_level(l, size, o.fanout());
    }
    if !o.dynamic_level_bytes {
        return LevelTargets {
            targets,
            base_level: 1,
            last_level: MAX_LEVELS - 1,
        };
    }
    let bytes = level_bytes(set);
    let last = (1..MAX_LEVELS)
        .rev()
        .find(|&l| bytes.get(l).is_some_and(|&b| b > 0))
        .unwrap_or(MAX_LEVELS - 1);
    let mut t = bytes.get(last).copied().unwrap_or(0);
    for l in (1..=last).rev() {
        if let Some(slot) = targets.get_mut(l) {
            *slot = t;
        }
        t /= o.fanout();
    }
    for slot in targets.iter_mut().skip(last + 1) {
        *slot = 0;
    }
    let base = (1..=last)
        .find(|&l| targets.get(l).is_some_and(|&t| t >= size))
        .unwrap_or(last);
    for slot in targets.iter_mut().take(base).skip(1) {
        *slot = 0;
    }
    LevelTargets {
        targets,
        base_level: base,
        last_level: last,
    }
}

/// Candidates grouped by level, each level sorted by first key.
fn by_level<'a>(cands: &[&'a SSTableInfo]) -> Vec<Vec<&'a SSTableInfo>> {
    let mut levels: Vec<Vec<&SSTableInfo>> = vec![Vec::new(); MAX_LEVELS];
    for s in cands {
        if let Some(l) = levels.get_mut(level_index(s)) {
            l.push(s);
        }
    }
    for l in &mut levels {
        l.sort_by(|a, b| {
            a.first_key
                .cmp(&b.first_key)
                .then(a.generation.cmp(&b.generation))
        });
    }
    levels
}

/// Sstables of `level` (from the whole set) overlapping the key span of `inputs`.
fn overlapping_in<'a>(
    set: &'a [SSTableInfo],
    level: usize,
    inputs: &[&SSTableInfo],
) -> Vec<&'a SSTableInfo> {
    let (Some(first), Some(last)) = (
        inputs.iter().map(|s| &s.first_key).min(),
        inputs.iter().map(|s| &s.last_key).max(),
    ) else {
        return Vec::new();
    };
    set.iter()
        .filter(|s| level_index(s) == level && s.first_key <= *last && *first <= s.last_key)
        .collect()
}

/// A job compacting one sstable of `level` (≥ 1) with what it overlaps in `next`.
///
/// `level_ssts` are the level's sstables no job holds; `level_busy` says whether a job holds
/// any sstable of the level (an in-place compaction then waits: its span is not a single
/// sstable's and could meet a held one).
fn level_job(
    set: &[SSTableInfo],
    level_ssts: &[&SSTableInfo],
    level: usize,
    next: usize,
    level_busy: bool,
    o: &LcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    if level_ssts.is_empty() || next >= MAX_LEVELS {
        return None;
    }
    // Restore the level's invariant first: compact the first chain of overlapping sstables
    // in place.
    let mut chain: Vec<&SSTableInfo> = Vec::new();
    for pair in level_ssts.windows(2) {
        if let [a, b] = pair {
            if overlaps(a, b) {
                if chain.is_empty() {
                    chain.push(a);
                }
                chain.push(b);
            } else if !chain.is_empty() {
                break;
            }
        }
    }
    if !chain.is_empty() {
        if level_busy {
            return None;
        }
        return Some(leveled(job(
            chain.iter().map(|s| s.generation),
            level as u32,
            o.sstable_size(),
            JobKind::Regular,
        )));
    }
    let last_key = state
        .last_compacted_keys
        .get(level)
        .and_then(|k| k.as_ref());
    let start = match last_key {
        None => 0,
        Some(k) => level_ssts
            .iter()
            .position(|s| s.first_key > *k)
            .unwrap_or(0),
    };
    let n = level_ssts.len();
    for i in 0..n {
        let Some(s) = level_ssts.get((start + i) % n) else {
            continue;
        };
        let below = overlapping_in(set, next, &[s]);
        // A next-level sstable a running job holds cannot be merged, and that job may still
        // write into this span: try the next candidate (see the module docs).
        if below
            .iter()
            .any(|b| state.compacting.contains(&b.generation))
        {
            continue;
        }
        return Some(leveled(job(
            std::iter::once(s.generation).chain(below.iter().map(|b| b.generation)),
            next as u32,
            o.sstable_size(),
            JobKind::Regular,
        )));
    }
    None
}

/// STCS among L0 sstables (the most interesting tier at `min_threshold`), output in L0.
fn stcs_in_l0(
    l0: &[&SSTableInfo],
    common: &CommonOptions,
    o: &LcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    let small_ok = stcs::small_grouping_allowed(l0, &o.tiers, state.now);
    let tiers = common::buckets(l0, &o.tiers, small_ok);
    let tier = common::most_interesting(
        &tiers,
        common.min_threshold as usize,
        common.max_threshold as usize,
    )?;
    Some(job(
        tier.iter().map(|s| s.generation),
        0,
        o.sstable_size(),
        JobKind::Regular,
    ))
}

/// L0 compaction: promotion into the base level when L0 holds a full sstable's worth, else STCS
/// inside L0.
fn l0_job(
    set: &[SSTableInfo],
    l0: &[&SSTableInfo],
    base: usize,
    common: &CommonOptions,
    o: &LcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    if l0.is_empty() {
        return None;
    }
    let total: u64 = l0.iter().map(|s| s.data_bytes).sum();
    if total < o.sstable_size() {
        return stcs_in_l0(l0, common, o, state);
    }
    let mut oldest: Vec<&SSTableInfo> = l0.to_vec();
    oldest.sort_by_key(|s| (s.max_timestamp, s.generation));
    oldest.truncate(MAX_COMPACTING_L0);
    let below = overlapping_in(set, base, &oldest);
    if below
        .iter()
        .any(|b| state.compacting.contains(&b.generation))
    {
        return None;
    }
    Some(leveled(job(
        oldest.iter().chain(below.iter()).map(|s| s.generation),
        base as u32,
        o.sstable_size(),
        JobKind::Regular,
    )))
}

/// The next LCS job, if any.
pub fn choose(
    set: &[SSTableInfo],
    common: &CommonOptions,
    o: &LcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    if let Some(j) = common::drop_expired_job(set, state) {
        return Some(j);
    }
    let cands = candidates(set, state);
    let levels = by_level(&cands);
    let empty = Vec::new();
    let l0 = levels.first().unwrap_or(&empty);
    let t = level_targets(set, o);
    // Scores count every sstable, held or not: a level's size does not shrink because a job
    // is reading part of it.
    let bytes = level_bytes(set);
    // Levels with an sstable a running job holds. L0 takes one job at a time; steps between
    // levels ≥ 1 go by key range instead (`level_job`, module docs).
    let mut busy = [false; MAX_LEVELS];
    for s in set {
        if state.compacting.contains(&s.generation) {
            if let Some(b) = busy.get_mut(level_index(s)) {
                *b = true;
            }
        }
    }
    let is_busy = |l: usize| busy.get(l).copied().unwrap_or(true);

    // Levels ≥ 1 over their target, deepest first (Scylla's order). Serving L0 first by
    // score (RocksDB's order) was tried and measured worse here: under a steady overwrite
    // L1 then never drains into L2, every promotion rewrites a whole-dataset L1, and L0
    // piles up behind it (docs/benchmarks.md).
    let mut over: Vec<usize> = Vec::new();
    for l in (1..MAX_LEVELS).rev() {
        let b = bytes.get(l).copied().unwrap_or(0);
        if b == 0 || (o.dynamic_level_bytes && l >= t.last_level) {
            continue;
        }
        let target = t.targets.get(l).copied().unwrap_or(0);
        // Dynamic: levels above the base level should be empty, so anything there goes first.
        let score = if target == 0 {
            f64::INFINITY
        } else {
            b as f64 / target as f64
        };
        if score > TARGET_SCORE {
            over.push(l);
        }
    }
    if !over.is_empty() && l0.len() > MAX_COMPACTING_L0 && !is_busy(0) {
        // "L0 is too far behind": STCS inside L0 first (Scylla).
        if let Some(j) = stcs_in_l0(l0, common, o, state) {
            return Some(j);
        }
    }
    for &l in &over {
        let level_ssts = levels.get(l).unwrap_or(&empty);
        if let Some(j) = level_job(set, level_ssts, l, l + 1, is_busy(l), o, state) {
            return Some(j);
        }
    }

    if !is_busy(0) && !is_busy(t.base_level) {
        if let Some(j) = l0_job(set, l0, t.base_level, common, o, state) {
            return Some(j);
        }
    }

    if !o.dynamic_level_bytes {
        // Push data down while a level holds less than fanout × the level above it.
        for l in (2..MAX_LEVELS).rev() {
            let (b, above) = (
                bytes.get(l).copied().unwrap_or(0),
                bytes.get(l - 1).copied().unwrap_or(0),
            );
            if b == 0 || above == 0 || b >= above.saturating_mul(o.fanout()) {
                continue;
            }
            let level_ssts = levels.get(l - 1).unwrap_or(&empty);
            if let Some(j) = level_job(set, level_ssts, l - 1, l, is_busy(l - 1), o, state) {
                return Some(j);
            }
        }
    }

    if busy.iter().any(|b| *b) {
        // A tombstone rewrite stays in its level; keep it away from levels being compacted.
        let free: Vec<Vec<&SSTableInfo>> = levels
            .iter()
            .enumerate()
            .map(|(l, ssts)| if is_busy(l) { Vec::new() } else { ssts.clone() })
            .collect();
        return tombstone_job(&free, common, o, state);
    }
    tombstone_job(&levels, common, o, state)
}

/// The sstable with the highest droppable-tombstone ratio worth compacting, highest level
/// first; rewritten in its own level.
fn tombstone_job(
    levels: &[Vec<&SSTableInfo>],
    common: &CommonOptions,
    o: &LcsOptions,
    state: &StrategyState,
) -> Option<Job> {
    let gc_before = state.gc_before?;
    for level in levels.iter().rev() {
        let best = level
            .iter()
            .filter(|s| common::worth_dropping_tombstones(s, common, state, false))
            .max_by(|a, b| {
                a.droppable_tombstone_ratio(gc_before)
                    .total_cmp(&b.droppable_tombstone_ratio(gc_before))
                    .then(b.generation.cmp(&a.generation))
            });
        if let Some(s) = best {
            return Some(job(
                [s.generation],
                s.level,
                o.sstable_size(),
                JobKind::Tombstone,
            ));
        }
    }
    None
}

/// The level a major compaction of `total` bytes goes to: the smallest level whose static
/// capacity holds it, at least 1 (Scylla's `ideal_level_for_input`).
pub fn ideal_level(total: u64, sstable_size: u64, fanout: u64) -> u32 {
    let files = total.max(1).div_ceil(sstable_size.max(1));
    let mut level = 1u32;
    let mut cap = fanout;
    while cap < files && (level as usize) < MAX_LEVELS - 1 {
        level += 1;
        cap = cap.saturating_mul(fanout);
    }
    level
}

/// Major compaction: every sstable no job holds into one run split at sstable_size, at the
/// ideal level (static), or in the last level (dynamic, so the run stays the last level).
pub fn major(set: &[SSTableInfo], o: &LcsOptions, state: &StrategyState) -> Vec<Job> {
    let cands = candidates(set, state);
    if cands.is_empty() {
        return Vec::new();
    }
    let level = if o.dynamic_level_bytes {
        level_targets(set, o).last_level as u32
    } else {
        ideal_level(
            cands.iter().map(|s| s.data_bytes).sum(),
            o.sstable_size(),
            o.fanout(),
        )
    };
    vec![leveled(job(
        cands.iter().map(|s| s.generation),
        level,
        o.sstable_size(),
        JobKind::Major,
    ))]
}

/// Scylla's `get_estimated_tasks`: Σ over levels of ceil((bytes − target × 1.001) / sstable_size)
/// for levels at or over target (dynamic targets when enabled; the last level never counts).
pub fn estimated_pending(set: &[SSTableInfo], o: &LcsOptions) -> u64 {
    let bytes = level_bytes(set);
    let t = level_targets(set, o);
    let size = o.sstable_size() as f64;
    let mut n = 0u64;
    for (l, &b) in bytes.iter().enumerate() {
        let target = t.targets.get(l).copied().unwrap_or(0);
        if b == 0 || (o.dynamic_level_bytes && l >= t.last_level) || b < target {
            continue;
        }
        let over = b as f64 - target as f64 * TARGET_SCORE;
        if over > 0.0 {
            n += (over / size).ceil() as u64;
        }
    }
    n
}

/// Scylla's leveled backlog: the STCS backlog of L0, plus for each level L below the deepest
/// populated one, `(bytes(L) − target(L)) × min(fanout, est. sstables in L+1)`, where targets come
/// down from `total / 1.111` at the deepest level (never below one sstable_size) and the excess
/// is carried into L+1.
pub fn backlog(set: &[SSTableInfo], common: &CommonOptions, o: &LcsOptions) -> f64 {
    let size = o.sstable_size();
    let l0: Vec<&SSTableInfo> = set.iter().filter(|s| level_index(s) == 0).collect();
    let total: u64 = set.iter().map(|s| s.data_bytes).sum();
    let mut b = common::tiered_backlog(
        &l0,
        &o.tiers,
        common.min_threshold,
        l0.iter().map(|s| s.data_bytes).sum(),
    );
    let mut sizes = level_bytes(set);
    let Some(max_level) = (0..MAX_LEVELS)
        .rev()
        .find(|&l| sizes.get(l).is_some_and(|&s| s > 0))
    else {
        return b;
    };
    let target_max = (total as f64 / 1.111).ceil();
    for l in 0..max_level {
        let lsize = sizes.get(l).copied().unwrap_or(0);
        let target = (target_max / (o.fanout() as f64).powi((max_level - l) as i32))
            .ceil()
            .max(size as f64) as u64;
        if lsize <= target {
            continue;
        }
        let excess = lsize - target;
        let next = sizes.get(l + 1).copied().unwrap_or(0);
        let fan = next.div_ceil(size).min(o.fanout());
        b += excess as f64 * fan as f64;
        if let Some(n) = sizes.get_mut(l + 1) {
            *n = n.saturating_add(excess);
        }
    }
    b
}

impl Strategy for LcsOptions {
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

    fn estimated_pending(&self, set: &[SSTableInfo], _: &CommonOptions) -> u64 {
        estimated_pending(set, self)
    }

    fn backlog(&self, set: &[SSTableInfo], common: &CommonOptions, _: &StrategyState) -> f64 {
        backlog(set, common, self)
    }
}
