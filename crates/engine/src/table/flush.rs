//! Flushing a table: switching the active memtable out, writing it as sstables, and
//! publishing them in the table's state — the one place a memtable becomes sstables (and where
//! a row cache will take in what a flush publishes).
//!
//! Invariants: the switch takes the write gate exclusively, so every commitlog record before
//! the switch position is in the switched memtable; flushes of one table run one at a time,
//! oldest memtable first, so the commitlog interval each sstable records is contiguous; a
//! memtable's sstables (one, or the fragments the compaction strategy asks for) are published
//! in one swap, before which a crash leaves them uncommitted or, once their TOC is written,
//! live and replayed over harmlessly.

use super::{Table, TableState};
use crate::commitlog::CommitlogPosition;
use crate::error::Result;
use crate::memtable::Memtable;
use crate::metrics::WriteKind;
use crate::schema::{SerializationHeader, TableSchema};
use crate::snapshot::store as snapshot_store;
use crate::sstable::writer::{SSTableWriter, WriterOptions, WrittenSSTable};
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Table {
    /// Switches out the active memtable if it holds data; `position` is called under the
    /// exclusive write gate and gives the commitlog position all earlier writes lie before.
    pub fn switch_memtable(&self, position: impl FnOnce() -> CommitlogPosition) -> bool {
        let _gate = self.write_gate.write();
        let mut state = self.state.write();
        if state.active.is_empty() {
            return false;
        }
        let pos = position();
        let id = self.next_memtable_id.fetch_add(1, Ordering::Relaxed);
        let mut flushing = state.flushing.clone();
        flushing.push((Arc::clone(&state.active), pos));
        // Reads from now on see the switched memtable whole (sealed): the row cache notes
        // the phase they carry.
        let cache_phase = self.cache.as_ref().map_or(0, |c| c.seal());
        *state = Arc::new(TableState {
            active: Arc::new(Memtable::new(id)),
            flushing,
            sstables: state.sstables.clone(),
            cache_phase,
        });
        true
    }

    /// Flushes every switched-out memtable, oldest first. Returns the commitlog position the
    /// table is now durable up to (if anything was flushed) and the bytes of memtable freed.
    ///
    /// `fragments` says how many key-range fragments a memtable of a schema and a size is
    /// written as: the table's compaction strategy decides, and the database asks it.
    pub fn flush_pending(
        &self,
        fragments: &dyn Fn(&TableSchema, u64) -> usize,
    ) -> Result<(Option<CommitlogPosition>, usize)> {
        let _one_at_a_time = self.flush_lock.lock();
        let mut durable_upto = None;
        let mut freed = 0;
        loop {
            let st = self.state();
            let Some((mem, pos)) = st.flushing.first().cloned() else {
                break;
            };
            // Not held while writing: a snapshot keeps every sstable in it alive, and the
            // inputs a compaction releases meanwhile would stay on disk until the flush ends.
            drop(st);
            let lower = durable_upto.unwrap_or(self.replay_floor);
            let written = self.write_memtable(&mem, (lower, pos), fragments)?;
            if self.incremental_backups() {
                // Before publishing: a crash in between finds the sstable live at restart
                // (its TOC commits it) and already backed up.
                for w in &written {
                    snapshot_store::backup(&self.dir, w.generation)?;
                }
            }
            let mut ssts = Vec::with_capacity(written.len());
            for w in written {
                ssts.push(Arc::new(self.open_sstable(w.generation)?));
            }
            // The row cache takes in the flushed memtable (population stops meanwhile, and
            // resumes in the phase the new state carries).
            if let Some(cache) = &self.cache {
                cache.begin_update();
                // No partition becomes cached during the update (population waits), so one
                // not cached now is skipped without copying it.
                mem.for_each(|key, p| {
                    if cache.holds(key) {
                        cache.apply_flushed(key, p.to_partition());
                    }
                    Ok(())
                })?;
            }
            {
                let mut state = self.state.write();
                let cache_phase = self.cache.as_ref().map_or(0, |c| c.end_update());
                let mut sstables = state.sstables.clone();
                sstables.extend(ssts);
                let flushing = state
                    .flushing
                    .iter()
                    .filter(|(m, _)| Arc::as_ptr(m) != Arc::as_ptr(&mem))
                    .cloned()
                    .collect();
                *state = Arc::new(TableState {
                    active: Arc::clone(&state.active),
                    flushing,
                    sstables,
                    cache_phase,
                });
            }
            self.flushes.fetch_add(1, Ordering::Relaxed);
            freed += mem.bytes();
            durable_upto = Some(pos);
        }
        Ok((durable_upto, freed))
    }

    /// Writes one memtable as new sstables (not yet published): one, or the run of key-range
    /// fragments the table's compaction strategy asks for (`fragments`; ICS asks for several,
    /// so that the job merging the flush releases it fragment by fragment rather than at its
    /// very end).
    ///
    /// Only the last fragment records the commitlog interval's upper end: startup replays the
    /// commitlog from the highest upper end any sstable records, so a crash between two
    /// fragments leaves that floor where it was and the whole memtable is replayed (the data
    /// of the fragments already written comes back as harmless duplicates).
    fn write_memtable(
        &self,
        mem: &Memtable,
        interval: (CommitlogPosition, CommitlogPosition),
        fragments: &dyn Fn(&TableSchema, u64) -> usize,
    ) -> Result<Vec<WrittenSSTable>> {
        let schema = self.schema();
        let compression = schema
            .options
            .flush_compression
            .clone()
            .unwrap_or_else(|| schema.options.compression.clone());
        let mut opts = WriterOptions::new(compression);
        opts.bloom_fp_chance = schema.options.bloom_filter_fp_chance;
        let partitions = mem.partition_count();
        let fragments = fragments(&schema, mem.bytes() as u64).clamp(1, partitions.max(1));
        let per_fragment = partitions.div_ceil(fragments).max(1);
        opts.expected_partitions = per_fragment as u64;
        opts.timestamp_base = if mem.is_empty() {
            0
        } else {
            mem.min_timestamp()
        };
        let lower = (interval.0.segment_id, interval.0.offset);
        let upper = (interval.1.segment_id, interval.1.offset);
        opts.commitlog_interval = (lower, lower);
        opts.run_id = crate::schema::rand_table_id();
        opts.purpose = WriteKind::Flush;
        opts.header = Some(SerializationHeader::of(&schema));
        let mut out = Vec::with_capacity(fragments);
        // A full fragment is finished once the next one starts, when it is known not to be
        // the last.
        let mut full: Option<SSTableWriter> = None;
        let mut current: Option<(SSTableWriter, usize)> = None;
        let written = mem.for_each(|k, p| {
            let (w, n) = match current.as_mut() {
                Some(c) => c,
                None => {
                    if let Some(prev) = full.take() {
                        out.extend(prev.finish()?);
                    }
                    let gen = self.next_generation.fetch_add(1, Ordering::Relaxed);
                    let w =
                        SSTableWriter::create(&self.dir, gen, opts.clone(), Arc::clone(&self.io))?;
                    current.insert((w, 0))
                }
            };
            w.write_parts(
                k,
                p.deletion(),
                p.static_row(),
                p.range_tombstones(),
                p.rows(),
            )?;
            *n += 1;
            if *n >= per_fragment {
                full = current.take().map(|(w, _)| w);
            }
            Ok(())
        });
        let written = written.and_then(|()| match current.map(|(w, _)| w).or(full) {
            Some(mut last) => {
                last.set_commitlog_interval((lower, upper));
                last.finish()
            }
            None => Ok(None),
        });
        match written {
            Ok(last) => {
                out.extend(last);
                Ok(out)
            }
            Err(e) => {
                // The fragments finished so far are complete sstables no one will publish: a
                // retry writes the memtable again. (Unfinished writers delete their files.)
                for w in &out {
                    if let Err(d) =
                        crate::sstable::format::delete_sstable_files(&self.dir, w.generation)
                    {
                        tracing::warn!("flush fragment {} left behind: {d}", w.generation);
                    }
                }
                Err(e)
            }
        }
    }
}
