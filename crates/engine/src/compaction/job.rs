//! Running one compaction job: the mechanism every strategy shares.
//!
//! Inputs are merged in partition-key order; each merged partition is compacted
//! ([`super::purge`]) and written to the current output, which is sealed once it holds
//! `max_output_bytes` of uncompressed data. Inputs and outputs are swapped on disk through the
//! transaction log ([`super::txn`]) and in memory through [`Table::replace_sstables`]:
//! - regular jobs commit once, at the end: outputs live, inputs dead;
//! - incremental jobs commit after every sealed output, releasing the inputs it exhausted
//!   (every key they hold is ≤ the output's last key), so the temporary space a job needs is a
//!   few fragments rather than the whole input.
//!
//! A stopped or failed job deletes its uncommitted outputs; what it committed stays committed.
//! Reads are never blocked: the table's sstable set is swapped atomically, and removed inputs
//! are deleted once their last reader lets go.
//!
//! A partition is materialised in memory while it is merged. That bounds memory by the largest
//! partition, not the sstable; streaming rows of very large partitions is future work.

use super::purge::{compact_partition, PurgeCounts, PurgePolicy};
use super::strategy::{Job, JobKind};
use super::throttle::Throttle;
use super::txn::TxnLog;
use crate::error::{Error, Result};
use crate::io::Wait;
use crate::metrics::{ReadKind, WriteKind};
use crate::model::key::{PartitionPos, Slice};
use crate::model::token::Token;
use crate::model::{DecoratedKey, Partition};
use crate::read::merge::MergedPartition;
use crate::read::source::{PartitionScan, PartitionSource, SourceQuery};
use crate::sstable::reader::SSTable;
use crate::sstable::writer::{SSTableWriter, WriterOptions};
use crate::table::Table;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// What a job needs besides the job itself.
pub struct JobEnv<'a> {
    /// The table compacted.
    pub table: &'a Table,
    /// Job id (unique per process; names the transaction log together with the table dir).
    pub id: u64,
    /// Set to stop the job at the next partition.
    pub stop: &'a AtomicBool,
    /// Compaction throughput cap.
    pub throttle: &'a Throttle,
    /// Uncompressed input bytes processed so far (for `compactionstats`).
    pub progress: &'a std::sync::atomic::AtomicU64,
    /// Purge rules.
    pub policy: PurgePolicy,
}

/// What a finished job did (one entry of the compaction history).
#[derive(Debug, Clone)]
pub struct JobReport {
    /// Job id.
    pub id: u64,
    /// Keyspace.
    pub keyspace: String,
    /// Table.
    pub table: String,
    /// Why it ran.
    pub kind: JobKind,
    /// Input generations.
    pub inputs: Vec<u64>,
    /// Output generations.
    pub outputs: Vec<u64>,
    /// Output level.
    pub output_level: u32,
    /// Bytes on disk of the inputs.
    pub bytes_in: u64,
    /// Bytes on disk of the outputs.
    pub bytes_out: u64,
    /// Partitions written.
    pub partitions_out: u64,
    /// Partitions read, by how many inputs held them (index 0 = one input): Cassandra's
    /// `rows_merged` map.
    pub merged_from: Vec<u64>,
    /// Tombstones purged and cells expired.
    pub purged: PurgeCounts,
    /// Milliseconds since the epoch when the job started.
    pub started_at_ms: u64,
    /// How long it ran.
    pub duration: std::time::Duration,
}

/// One input being merged: the sstable and its scan.
struct Source {
    sst: Arc<SSTable>,
    scan: Box<dyn PartitionScan>,
}

/// The outputs of a job and its commits.
struct Outputs<'a> {
    env: &'a JobEnv<'a>,
    job: &'a Job,
    txn: Arc<TxnLog>,
    opts: WriterOptions,
    /// Open writers by time window (one, keyed 0, unless the job splits by window).
    current: BTreeMap<i64, SSTableWriter>,
    /// Sealed, not yet committed (regular jobs keep them until the end).
    sealed: Vec<Arc<SSTable>>,
    committed: Vec<u64>,
    bytes_out: u64,
    partitions_out: u64,
}

impl Outputs<'_> {
    /// The output window of a partition: TWCS jobs keep time windows apart (by the
    /// partition's newest timestamp, so a partition is never split), others use one.
    fn window_of(&self, p: &Partition) -> i64 {
        let Some(window) = self.job.time_window else {
            return 0;
        };
        let mut newest = i64::MIN;
        p.for_each_timestamp(|t| newest = newest.max(t));
        window.start(newest)
    }

    /// Writes a partition; returns its window.
    fn write(&mut self, key: &DecoratedKey, p: &Partition) -> Result<i64> {
        let window = self.window_of(p);
        let w = match self.current.entry(window) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let gen = self.env.table.next_generation();
                self.txn.add(gen)?;
                e.insert(SSTableWriter::create(
                    self.env.table.dir(),
                    gen,
                    self.opts.clone(),
                    Arc::clone(&self.env.table.io),
                )?)
            }
        };
        w.write_partition(key, p)?;
        self.partitions_out += 1;
        Ok(window)
    }

    fn full(&self, window: i64) -> bool {
        self.current
            .get(&window)
            .is_some_and(|w| w.uncompressed_position() >= self.job.max_output_bytes)
    }

    /// Finishes every open output.
    fn seal_all(&mut self) -> Result<()> {
        let windows: Vec<i64> = self.current.keys().copied().collect();
        for w in windows {
            self.seal(w)?;
        }
        Ok(())
    }

    /// Finishes the output of `window`; returns it when it holds anything.
    fn seal(&mut self, window: i64) -> Result<Option<Arc<SSTable>>> {
        let Some(w) = self.current.remove(&window) else {
            return Ok(None);
        };
        let Some(written) = w.finish()? else {
            return Ok(None);
        };
        let sst = Arc::new(self.env.table.open_sstable(written.generation)?);
        self.bytes_out += sst.disk_bytes();
        self.sealed.push(Arc::clone(&sst));
        Ok(Some(sst))
    }

    /// Commits every sealed output and removes `inputs`, on disk then in memory.
    fn commit(&mut self, inputs: &[Arc<SSTable>]) -> Result<()> {
        let outputs: Vec<u64> = self.sealed.iter().map(|s| s.generation).collect();
        let removed: Vec<u64> = inputs.iter().map(|s| s.generation).collect();
        self.txn.commit(&outputs, &removed)?;
        let hold: Arc<dyn std::any::Any + Send + Sync> = self.txn.clone();
        for s in inputs {
            s.hold_until_dropped(Arc::clone(&hold));
        }
        self.env
            .table
            .replace_sstables(&removed, std::mem::take(&mut self.sealed));
        self.committed.extend(outputs);
        Ok(())
    }

    /// Deletes what was written but not committed.
    fn abandon(&mut self) {
        self.current.clear(); // an unfinished writer deletes its files when dropped
        for s in self.sealed.drain(..) {
            s.mark_deleted();
        }
    }
}

/// Runs `job` on `env.table`. On error (or stop) nothing uncommitted is left behind.
pub fn run(env: &JobEnv<'_>, job: &Job) -> Result<JobReport> {
    let started = Instant::now();
    let started_at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let schema = env.table.schema();
    let live = env.table.state();
    let mut inputs = Vec::with_capacity(job.inputs.len());
    for g in &job.inputs {
        let s = live
            .sstables
            .iter()
            .find(|s| s.generation == *g)
            .ok_or(Error::NotLive { generation: *g })?;
        inputs.push(Arc::clone(s));
    }
    drop(live);
    let bytes_in = inputs.iter().map(|s| s.disk_bytes()).sum();
    let mut report = JobReport {
        id: env.id,
        keyspace: schema.keyspace.clone(),
        table: schema.name.clone(),
        kind: job.kind,
        inputs: job.inputs.clone(),
        outputs: Vec::new(),
        output_level: job.output_level,
        bytes_in,
        bytes_out: 0,
        partitions_out: 0,
        merged_from: Vec::new(),
        purged: PurgeCounts::default(),
        started_at_ms,
        duration: Default::default(),
    };
    let txn = Arc::new(TxnLog::create(env.table.dir(), env.id)?);

    if job.kind == JobKind::DropExpired {
        // Nothing to read: the strategy established that everything in them has expired.
        let removed: Vec<u64> = inputs.iter().map(|s| s.generation).collect();
        txn.commit(&[], &removed)?;
        let hold: Arc<dyn std::any::Any + Send + Sync> = txn.clone();
        for s in &inputs {
            s.hold_until_dropped(Arc::clone(&hold));
        }
        env.table.replace_sstables(&removed, Vec::new());
        report.duration = started.elapsed();
        return Ok(report);
    }

    let mut opts = WriterOptions::new(schema.options.compression.clone());
    opts.bloom_fp_chance = schema.options.bloom_filter_fp_chance;
    let partitions: u64 = inputs.iter().map(|s| s.stats.partition_count).sum();
    let data: u64 = inputs.iter().map(|s| s.stats.uncompressed_length).sum();
    let per_output = if job.max_output_bytes == u64::MAX || data == 0 {
        partitions
    } else {
        // Partitions an output of max_output_bytes will hold, with headroom.
        (partitions as f64 * (job.max_output_bytes as f64 / data as f64) * 1.1).ceil() as u64
    };
    opts.expected_partitions = per_output.clamp(1, partitions.max(1));
    opts.level = job.output_level;
    opts.run_id = crate::schema::rand_table_id();
    opts.timestamp_base = inputs
        .iter()
        .map(|s| s.stats.min_timestamp)
        .min()
        .unwrap_or(0);
    opts.commitlog_interval = (
        inputs
            .iter()
            .map(|s| s.stats.commitlog_lower)
            .min()
            .unwrap_or((0, 0)),
        inputs
            .iter()
            .map(|s| s.stats.commitlog_upper)
            .max()
            .unwrap_or((0, 0)),
    );
    opts.purpose = WriteKind::Compaction;
    opts.header = Some(crate::schema::SerializationHeader::of(&schema));

    let mut out = Outputs {
        env,
        job,
        txn,
        opts,
        current: BTreeMap::new(),
        sealed: Vec::new(),
        committed: Vec::new(),
        bytes_out: 0,
        partitions_out: 0,
    };
    // The merge owns the inputs: an input released early (incremental jobs) is dropped then,
    // so its files go as soon as no reader holds it, not when the job ends.
    let merged = merge_inputs(env, job, inputs, &mut out, &mut report);
    let result = merged.and_then(|remaining| {
        out.seal_all()?;
        out.commit(&remaining)
    });
    if let Err(e) = result {
        out.abandon();
        return Err(e);
    }
    report.outputs = std::mem::take(&mut out.committed);
    report.bytes_out = out.bytes_out;
    report.partitions_out = out.partitions_out;
    report.duration = started.elapsed();
    Ok(report)
}

/// Merges the inputs into `out`; returns the inputs not yet released.
fn merge_inputs(
    env: &JobEnv<'_>,
    job: &Job,
    inputs: Vec<Arc<SSTable>>,
    out: &mut Outputs<'_>,
    report: &mut JobReport,
) -> Result<Vec<Arc<SSTable>>> {
    let mut sources: Vec<Source> = inputs
        .into_iter()
        .map(|sst| Source {
            scan: PartitionSource::scan_partitions(
                &sst,
                &PartitionPos::TokenStart(Token::MIN),
                ReadKind::Compaction,
                Wait::Allowed,
            ),
            sst,
        })
        .collect();
    let whole = Slice::all();
    // Compaction runs on its own threads, which may wait for the disk.
    let q = SourceQuery::whole(&whole, ReadKind::Compaction, Wait::Allowed);
    let job_gens: Vec<u64> = job.inputs.clone();
    loop {
        if env.stop.load(Ordering::Relaxed) {
            return Err(Error::CompactionStopped {
                job: env.id,
                keyspace: report.keyspace.clone(),
                table: report.table.clone(),
            });
        }
        let mut next: Option<DecoratedKey> = None;
        for src in &mut sources {
            if let Some(k) = src.scan.peek()? {
                if next.as_ref().is_none_or(|n| k < n) {
                    next = Some(k.clone());
                }
            }
        }
        let Some(key) = next else {
            break;
        };
        let mut merged = MergedPartition::new(false);
        let mut read_bytes = 0u64;
        for src in sources.iter_mut() {
            if src.scan.peek()?.is_none_or(|k| *k != key) {
                continue;
            }
            if let Some(p) = src.scan.open(&q)? {
                read_bytes += p.stored_bytes;
                merged.add(p);
            }
        }
        let from = merged.sources;
        if report.merged_from.len() < from {
            report.merged_from.resize(from, 0);
        }
        if let Some(c) = from
            .checked_sub(1)
            .and_then(|i| report.merged_from.get_mut(i))
        {
            *c += 1;
        }
        if from == 0 {
            continue;
        }
        let mut p = merged.into_partition()?;
        let counts = compact_partition(&mut p, env.policy, || {
            max_purgeable(env.table, &key, &job_gens, &out.committed, job, &sources)
        });
        report.purged.tombstones_purged += counts.tombstones_purged;
        report.purged.expired_cells += counts.expired_cells;
        let window = if p.is_empty() {
            None
        } else {
            Some(out.write(&key, &p)?)
        };
        env.progress.fetch_add(read_bytes, Ordering::Relaxed);
        env.throttle.acquire(read_bytes);
        if let Some(window) = window.filter(|w| out.full(*w)) {
            if let Some(sealed) = out.seal(window)? {
                if job.incremental {
                    let last = sealed.stats.last_key.clone();
                    let mut exhausted = Vec::new();
                    let mut rest = Vec::new();
                    for mut s in sources {
                        if s.scan.peek()?.is_none() && s.sst.stats.last_key <= last {
                            exhausted.push(s);
                        } else {
                            rest.push(s);
                        }
                    }
                    sources = rest;
                    let released: Vec<Arc<SSTable>> =
                        exhausted.into_iter().map(|s| s.sst).collect();
                    out.commit(&released)?;
                }
            }
        }
    }
    Ok(sources.into_iter().map(|s| s.sst).collect())
}

/// The smallest timestamp a source outside the job may hold for `key` (see `purge`): other
/// live sstables whose bloom filter admits the key, memtables holding it, and — for
/// incremental jobs — inputs that will outlive the current output.
fn max_purgeable(
    table: &Table,
    key: &DecoratedKey,
    job_inputs: &[u64],
    job_outputs: &[u64],
    job: &Job,
    sources: &[Source],
) -> i64 {
    let hash = crate::model::token::murmur3_x64_128(&key.key, 0);
    let st = table.state();
    let mut min = i64::MAX;
    for s in &st.sstables {
        if job_inputs.contains(&s.generation) || job_outputs.contains(&s.generation) {
            continue;
        }
        if s.stats.min_timestamp < min && s.may_contain(key, hash) {
            min = s.stats.min_timestamp;
        }
    }
    let memtables = std::iter::once(&st.active).chain(st.flushing.iter().map(|(m, _)| m));
    for m in memtables {
        if let Some(ts) = m.with_partition(key, |p| {
            let mut lo = i64::MAX;
            p.for_each_timestamp(|t| lo = lo.min(t));
            lo
        }) {
            min = min.min(ts);
        }
    }
    if job.incremental {
        // An input stays live until an output covers its last key; until then its copy of
        // this partition is visible next to ours, and must stay shadowed.
        for s in sources {
            if s.sst.stats.last_key > *key && s.sst.may_contain(key, hash) {
                min = min.min(s.sst.stats.min_timestamp);
            }
        }
    }
    min
}
