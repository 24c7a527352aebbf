//! Compaction strategies as pure decisions over a table's sstable set.
//!
//! `choose(set, options, state) -> Option<Job>`: the caller describes every live sstable of a
//! table ([`SSTableInfo`]), which of them are already being compacted and the current time;
//! the strategy answers with the next job, or `None` when nothing is worth doing. Nothing here
//! touches the disk, so each rule is tested from a text description of a set.
//!
//! * [`options`] — the CQL `compaction` map ([`CompactionOptions`]): parsing with ScyllaDB's
//!   names, defaults and error texts, and display.
//! * [`decision`] — the vocabulary: what a strategy is shown ([`SSTableInfo`],
//!   [`StrategyState`]) and what it answers ([`Job`]).
//! * [`Strategy`] — the one trait every strategy implements (`choose`, `major`,
//!   `estimated_pending`, `backlog`, `flush_fragments`); [`stcs`], [`lcs`], [`ics`], [`twcs`] —
//!   one file per strategy.
//! * [`CompactionOptions::choose`] and friends dispatch on the table's strategy and apply the
//!   rules shared by all: nothing when `enabled` is false.
//!
//! The compaction simulator that compares the strategies without I/O is `cairn-lab`'s `sim`
//! (its only user is the compaction lab).
//!
//! Invariants of every answer: a job's inputs are never empty, never in
//! `state.compacting`, and sorted by generation.

mod common;
pub mod decision;
pub mod ics;
pub mod lcs;
pub mod options;
pub mod stcs;
#[cfg(test)]
mod tests;
pub mod twcs;

pub use decision::{Job, JobKind, SSTableInfo, Strategy, StrategyState, TimeWindow};
use options::CommonOptions;
pub use options::{CompactionOptions, StrategyOptions};

/// `NullCompactionStrategy`: never compacts; a major compaction merges everything, as STCS's.
pub struct NullStrategy;

impl Strategy for NullStrategy {
    fn choose(&self, _: &[SSTableInfo], _: &CommonOptions, _: &StrategyState) -> Option<Job> {
        None
    }

    fn major(&self, set: &[SSTableInfo], state: &StrategyState) -> Vec<Job> {
        stcs::major(set, state)
    }

    fn estimated_pending(&self, _: &[SSTableInfo], _: &CommonOptions) -> u64 {
        0
    }

    fn backlog(&self, _: &[SSTableInfo], _: &CommonOptions, _: &StrategyState) -> f64 {
        0.0
    }
}

impl StrategyOptions {
    /// The strategy these options configure.
    pub fn strategy(&self) -> &dyn Strategy {
        match self {
            StrategyOptions::Null => &NullStrategy,
            StrategyOptions::SizeTiered(t) => t,
            StrategyOptions::Leveled(l) => l,
            StrategyOptions::Incremental(i) => i,
            StrategyOptions::TimeWindow(t) => t,
        }
    }
}

impl CompactionOptions {
    /// The next job for the table, or `None`. Nothing when `enabled` is false. Otherwise the
    /// strategy's `choose`, which never picks an sstable in `state.compacting`; several jobs
    /// may run on one table at once (LCS keeps to one job per level itself, see [`lcs`]).
    pub fn choose(&self, set: &[SSTableInfo], state: &StrategyState) -> Option<Job> {
        if !self.common.enabled {
            return None;
        }
        let job = self.strategy.strategy().choose(set, &self.common, state);
        // Belt and braces: a job touching a held sstable would corrupt the set.
        job.filter(|j| {
            !j.inputs.is_empty() && j.inputs.iter().all(|g| !state.compacting.contains(g))
        })
    }

    /// The jobs of an operator's major compaction over every sstable no job holds (works even
    /// when `enabled` is false). STCS and Null: all into one sstable; LCS: one run at the ideal
    /// level; ICS: fragments, incremental; TWCS: one job per window.
    pub fn major(&self, set: &[SSTableInfo], state: &StrategyState) -> Vec<Job> {
        self.strategy.strategy().major(set, state)
    }

    /// How many fragments a memtable flush of about `bytes` is written as: ICS asks for
    /// several ([`ics::flush_fragments`]), every other strategy for one sstable.
    pub fn flush_fragments(&self, bytes: u64) -> usize {
        self.strategy.strategy().flush_fragments(bytes)
    }

    /// Estimated number of jobs still to run (`pending_compactions`).
    pub fn estimated_pending(&self, set: &[SSTableInfo], _state: &StrategyState) -> u64 {
        self.strategy
            .strategy()
            .estimated_pending(set, &self.common)
    }

    /// Compaction backlog in bytes-of-work (ScyllaDB's per-strategy formulas, without the
    /// progress of running jobs; ICS adds a running cross-tier job's remaining input); the
    /// controller divides it by memory to set shares.
    pub fn backlog(&self, set: &[SSTableInfo], state: &StrategyState) -> f64 {
        self.strategy.strategy().backlog(set, &self.common, state)
    }
}
