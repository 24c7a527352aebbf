//! One table's LSM tree: its active memtable, memtables being flushed, and live sstables.
//!
//! The set of sources is an immutable [`TableState`] swapped atomically, so a reader takes a
//! consistent snapshot with one `Arc` clone and never blocks a flush or a write. Writers enter
//! through the *write gate* (shared); switching the memtable takes it exclusively, which makes
//! "every commitlog record before the switch position is in the old memtable" true — the
//! invariant that lets a flush release commitlog segments. Flushes of one table run one at a
//! time, oldest memtable first, so the commitlog interval an sstable records is contiguous. A
//! flush the strategy wants as several key-range fragments (ICS) publishes them in one swap,
//! and only its last fragment records where the interval ends. Flushing — switching, writing
//! and publishing a memtable — is `flush`'s (`table/flush.rs`).

use crate::cache::source::CachedSource;
use crate::cache::{CacheTracker, RowCache};
use crate::commitlog::CommitlogPosition;
use crate::error::{Error, IoResultExt, Result};
use crate::fault::{Faults, Operation};
use crate::memtable::Memtable;
use crate::metrics::histogram::EstimatedHistogram;
use crate::metrics::{
    micros_since, HistogramSnapshot, IoCounters, ReadKind, RequestMetrics, WriteKind,
};
use crate::model::{DecoratedKey, Partition};
use crate::read::{ReadCommand, Snapshot};
use crate::schema::TableSchema;
use crate::snapshot::store::{self as snapshot_store, TableSnapshots};
use crate::sstable::format::{parse_generation, Component};
use crate::sstable::reader::SSTable;
use crate::sstable::stats::{CELL_COUNT_BUCKETS, PARTITION_SIZE_BUCKETS};
use parking_lot::{Mutex, RwLock};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

mod flush;

/// The sources of a table at one instant.
pub struct TableState {
    /// Memtable receiving writes.
    pub active: Arc<Memtable>,
    /// Switched-out memtables not yet flushed, oldest first, with the commitlog position at
    /// which each was switched out.
    pub flushing: Vec<(Arc<Memtable>, CommitlogPosition)>,
    /// Live sstables.
    pub sstables: Vec<Arc<SSTable>>,
    /// The row cache's phase this set belongs to (see [`crate::cache`]): advanced by every
    /// change of the sstable set; 0 without a cache.
    pub cache_phase: u64,
}

/// A snapshot of a table's counters.
#[derive(Debug, Clone)]
pub struct TableStats {
    /// Bytes written to the commitlog for this table.
    pub commitlog_bytes_written: u64,
    /// Bytes written by flushes.
    pub flush_bytes_written: u64,
    /// Bytes written by compactions.
    pub compaction_bytes_written: u64,
    /// Other bytes written (schema).
    pub other_bytes_written: u64,
    /// Bytes read serving queries.
    pub query_bytes_read: u64,
    /// Bytes read by compaction.
    pub compaction_bytes_read: u64,
    /// Other bytes read.
    pub other_bytes_read: u64,
    /// Data chunks read from disk.
    pub chunks_read: u64,
    /// Index pages read from disk.
    pub index_pages_read: u64,
    /// Bytes on disk of live sstables.
    pub live_disk_bytes: u64,
    /// Bytes on disk of live sstables plus sstables awaiting deletion (compacted away, files
    /// kept while a reader holds them): Cassandra's "Space used (total)".
    pub total_disk_bytes: u64,
    /// Uncompressed bytes of live sstables' data.
    pub uncompressed_data_bytes: u64,
    /// Bytes of live sstables' data files (compressed): `/ uncompressed_data_bytes` is the
    /// compression ratio.
    pub compressed_data_bytes: u64,
    /// Number of live sstables.
    pub sstable_count: usize,
    /// Memtable bytes (active + flushing).
    pub memtable_bytes: u64,
    /// Bytes of the active memtable (the one taking writes).
    pub memtable_live_bytes: u64,
    /// Partition updates applied to the active memtable.
    pub memtable_writes: u64,
    /// Partition-size histogram merged over live sstables.
    pub partition_sizes: EstimatedHistogram,
    /// Cells-per-partition histogram merged over live sstables.
    pub cells_per_partition: EstimatedHistogram,
    /// Partitions in live sstables plus memtables (an estimate: a partition in several
    /// sources counts once per source, as Cassandra's estimate does).
    pub partition_count_estimate: u64,
    /// Write latency (µs); its count is the table's write count.
    pub write_latency: HistogramSnapshot,
    /// Single-partition read latency (µs); its count is the table's read count.
    pub read_latency: HistogramSnapshot,
    /// SSTables consulted per single-partition read.
    pub sstables_per_read: HistogramSnapshot,
    /// Live cells per single-partition read over the last five minutes (see
    /// [`crate::metrics::WindowedHistogram`]).
    pub live_scanned_recent: HistogramSnapshot,
    /// Tombstones per single-partition read over the last five minutes.
    pub tombstone_scanned_recent: HistogramSnapshot,
    /// Live cells visited by single-partition reads since the node started.
    pub live_scanned_total: u64,
    /// Tombstones visited by single-partition reads since the node started.
    pub tombstone_scanned_total: u64,
    /// Range scans started.
    pub range_scans: u64,
    /// Memtable flushes completed.
    pub flushes: u64,
    /// Memtables sealed and waiting for, or in, their flush (Cassandra's "Pending flushes").
    pub pending_flushes: u64,
    /// Point lookups an sstable's bloom filter admitted and its index confirmed.
    pub bloom_true_positives: u64,
    /// Point lookups an sstable's bloom filter admitted but its index did not hold.
    pub bloom_false_positives: u64,
    /// In-memory sstable metadata: chunk offsets, index summaries, bloom filters.
    pub metadata_memory: (usize, usize, usize),
    /// Bytes of every file of the table's snapshots.
    pub snapshots_size_on_disk: u64,
    /// Bytes only the table's snapshots keep on disk (Cassandra's "Space used by snapshots
    /// (total)", its true snapshot size): files of sstables no longer live, and the
    /// snapshots' own manifests and schemas.
    pub snapshots_true_size: u64,
}

/// What a database tells each of its tables.
#[derive(Debug, Clone)]
pub struct TableSettings {
    /// `incremental_backups`: whether flushed and loaded sstables are linked into `backups/`
    /// (the database's switch, shared by every table).
    pub incremental_backups: Arc<AtomicBool>,
    /// How sequential reads read data files ([`SSTable::map_sequential_reads`]).
    pub map_sequential_reads: bool,
    /// The database's row cache, when it has one.
    pub cache: Option<Arc<CacheTracker>>,
    /// The database's storage-fault accounting and policies.
    pub faults: Arc<Faults>,
}

/// One table.
pub struct Table {
    schema: RwLock<Arc<TableSchema>>,
    /// What reads must not see of dropped columns (see [`TableSchema::hidden_cells`]).
    hidden_columns: RwLock<Arc<[(crate::model::ColumnId, i64)]>>,
    /// Whether reads keep only rows with a live marker ([`TableSchema::strict_liveness`]).
    strict_liveness: std::sync::atomic::AtomicBool,
    dir: PathBuf,
    state: RwLock<Arc<TableState>>,
    write_gate: RwLock<()>,
    flush_lock: Mutex<()>,
    next_generation: AtomicU64,
    next_memtable_id: AtomicU64,
    replay_floor: CommitlogPosition,
    flushes: AtomicU64,
    /// Set while a background flush is queued, so thresholds do not queue it twice.
    pub flush_requested: AtomicBool,
    /// Byte counters.
    pub io: Arc<IoCounters>,
    /// Request counts and latencies.
    pub requests: RequestMetrics,
    dropped: AtomicBool,
    /// The table directory's snapshots (shared with the database's registry).
    snapshots: Arc<TableSnapshots>,
    /// The database's settings for its tables.
    settings: TableSettings,
    /// Held while `refresh` loads sstables into the table.
    refresh_lock: Mutex<()>,
    /// The table's row cache (in front of its sstables), when the database has one.
    cache: Option<Arc<RowCache>>,
}

impl Table {
    /// Creates a new table directory (with its `upload/` folder) and its schema file;
    pub fn create(dir: &Path, schema: TableSchema, settings: TableSettings) -> Result<Table> {
        let upload = dir.join(snapshot_store::UPLOAD_DIR);
        std::fs::create_dir_all(&upload).with_path(&upload)?;
        schema.save(dir)?;
        if let Some(parent) = dir.parent() {
            crate::io::sync_dir(parent)?;
        }
        Self::open(dir, settings)
    }

    /// Opens a table directory: finishes or rolls back interrupted compactions, removes
    /// uncommitted sstable files, opens committed ones, reads its snapshots. New sstables are
    /// numbered above every generation in the directory, its snapshots and its backups.
    pub fn open(dir: &Path, settings: TableSettings) -> Result<Table> {
        let schema = TableSchema::load(dir)?;
        let snapshots = Arc::new(TableSnapshots::load(dir, &schema.keyspace, &schema.name)?);
        let io = Arc::new(IoCounters::default());
        let mut committed = Vec::new();
        let mut all = Vec::new();
        for entry in std::fs::read_dir(dir).with_path(dir)? {
            let entry = entry.with_path(dir)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(gen) = parse_generation(&name) {
                all.push((gen, entry.path()));
                if name.ends_with(Component::Toc.suffix()) {
                    committed.push(gen);
                }
            } else if name.ends_with(".tmp") {
                std::fs::remove_file(entry.path()).with_path(&entry.path())?;
            }
        }
        let mut max_gen = snapshots
            .max_generation()
            .max(snapshot_store::max_backup_generation(dir)?);
        for (gen, path) in &all {
            max_gen = max_gen.max(*gen);
            if !committed.contains(gen) {
                tracing::info!(path = %path.display(), "removing uncommitted sstable component");
                std::fs::remove_file(path).with_path(path)?;
            }
        }
        committed.sort_unstable();
        let mut sstables = Vec::with_capacity(committed.len());
        let mut floor = CommitlogPosition::NONE;
        for gen in committed {
            let s = match SSTable::open(dir, gen, Arc::clone(&io)) {
                Ok(s) => s,
                // Started without, as `disk_failure_policy` allows (`crate::fault`).
                Err(e) if settings.faults.skip_at_startup(&e) => continue,
                Err(e) => return Err(e),
            };
            let s = s
                .map_sequential_reads(settings.map_sequential_reads)
                .with_index_cache(settings.cache.as_ref().map(|c| c.index_pages()));
            let (seg, off) = s.stats.commitlog_upper;
            floor = floor.max(CommitlogPosition {
                segment_id: seg,
                offset: off,
            });
            sstables.push(Arc::new(s));
        }
        Ok(Table {
            hidden_columns: RwLock::new(schema.hidden_cells().into()),
            strict_liveness: schema.strict_liveness().into(),
            schema: RwLock::new(Arc::new(schema)),
            dir: dir.to_path_buf(),
            state: RwLock::new(Arc::new(TableState {
                active: Arc::new(Memtable::new(1)),
                flushing: Vec::new(),
                sstables,
                cache_phase: 0,
            })),
            write_gate: RwLock::new(()),
            flush_lock: Mutex::new(()),
            next_generation: AtomicU64::new(max_gen + 1),
            next_memtable_id: AtomicU64::new(2),
            replay_floor: floor,
            flushes: AtomicU64::new(0),
            flush_requested: AtomicBool::new(false),
            io,
            requests: RequestMetrics::default(),
            dropped: AtomicBool::new(false),
            snapshots,
            cache: settings.cache.as_ref().map(|t| Arc::new(t.table())),
            settings,
            refresh_lock: Mutex::new(()),
        })
    }

    /// The table directory's snapshots.
    pub fn snapshots(&self) -> &Arc<TableSnapshots> {
        &self.snapshots
    }

    /// Whether new sstables are linked into `backups/`.
    pub fn incremental_backups(&self) -> bool {
        self.settings.incremental_backups.load(Ordering::Relaxed)
    }

    /// Opens one of the table's committed sstables, with its byte counters and settings (and
    /// its handle on the index-page cache, when the database has a cache).
    pub fn open_sstable(&self, generation: u64) -> Result<SSTable> {
        Ok(SSTable::open(&self.dir, generation, Arc::clone(&self.io))?
            .map_sequential_reads(self.settings.map_sequential_reads)
            .with_index_cache(self.settings.cache.as_ref().map(|c| c.index_pages())))
    }

    /// Serializes loads into the table (`refresh`).
    pub fn refresh_lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.refresh_lock.lock()
    }

    /// The table's schema.
    pub fn schema(&self) -> Arc<TableSchema> {
        Arc::clone(&self.schema.read())
    }

    /// Replaces the schema (new options apply to sstables written from now on).
    /// Turning the cache off for the table (`caching = {'enabled': 'false'}`) empties its
    /// part of the cache, and its sstables' index pages: no memory is held for a table that
    /// does not use it.
    pub fn set_schema(&self, schema: TableSchema) -> Result<()> {
        schema.save(&self.dir)?;
        if !schema.options.cache_enabled() {
            self.invalidate_cache();
            for s in &self.state().sstables {
                s.drop_cached_index_pages();
            }
        }
        *self.hidden_columns.write() = schema.hidden_cells().into();
        self.strict_liveness
            .store(schema.strict_liveness(), Ordering::Relaxed);
        *self.schema.write() = Arc::new(schema);
        Ok(())
    }

    /// The table directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Commitlog records before this position are already in sstables.
    pub fn replay_floor(&self) -> CommitlogPosition {
        self.replay_floor
    }

    /// Shared entry for writers; hold it across the commitlog append and memtable insert.
    pub fn write_gate(&self) -> parking_lot::RwLockReadGuard<'_, ()> {
        self.write_gate.read()
    }

    /// Applies an update to the active memtable (caller holds the write gate). Returns the
    /// bytes charged and the active memtable's size.
    pub fn apply(&self, key: &DecoratedKey, update: Partition) -> (usize, usize) {
        let active = Arc::clone(&self.state.read().active);
        let charged = active.apply(key, update);
        (charged, active.bytes())
    }

    /// The current sources.
    pub fn state(&self) -> Arc<TableState> {
        Arc::clone(&self.state.read())
    }

    /// A read snapshot: single-partition reads go through the row cache when the table has
    /// one and its `caching` option leaves it enabled.
    pub fn snapshot(&self) -> Snapshot {
        // One state for the sources and the cache phase: a phase newer than the sources would
        // let the read populate the cache from sstables that lack a flush already merged in.
        let st = self.state();
        let mut snap = self.snapshot_of(&st);
        if !self.schema.read().options.cache_enabled() {
            return snap;
        }
        if let Some(cache) = &self.cache {
            snap.index_cache = true;
            let underlying = Snapshot {
                memtables: Vec::new(),
                ..snap.clone()
            };
            snap.cache = Some(Arc::new(CachedSource::new(
                Arc::clone(cache),
                st.cache_phase,
                underlying,
            )));
        }
        snap
    }

    /// A read snapshot that bypasses the row cache (and the index-page cache: set
    /// [`Snapshot::index_cache`] to use that one).
    pub fn snapshot_uncached(&self) -> Snapshot {
        self.snapshot_of(&self.state())
    }

    /// The sources of state `st`, without the caches.
    fn snapshot_of(&self, st: &TableState) -> Snapshot {
        let mut memtables = vec![Arc::clone(&st.active)];
        memtables.extend(st.flushing.iter().rev().map(|(m, _)| Arc::clone(m)));
        Snapshot {
            memtables,
            sstables: st.sstables.clone(),
            hidden_columns: Arc::clone(&self.hidden_columns.read()),
            strict_liveness: self.strict_liveness.load(Ordering::Relaxed),
            cache: None,
            index_cache: false,
        }
    }

    /// The table's row cache, when the database has one.
    pub fn row_cache(&self) -> Option<&Arc<RowCache>> {
        self.cache.as_ref()
    }

    /// Drops everything the row cache holds for the table.
    ///
    /// The table state takes the cache's new phase: reads from now on populate it again,
    /// reads begun before neither read nor populate it (see [`crate::cache`]).
    pub fn invalidate_cache(&self) {
        if let Some(c) = &self.cache {
            let mut state = self.state.write();
            let cache_phase = c.invalidate();
            *state = Arc::new(TableState {
                active: Arc::clone(&state.active),
                flushing: state.flushing.clone(),
                sstables: state.sstables.clone(),
                cache_phase,
            });
        }
    }

    /// The phase a new table state carries: the cache's, advanced (the sstable set changes).
    fn next_cache_phase(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.advance_phase())
    }

    /// Reads one partition, recording its latency, the sstables it consulted and the live
    /// cells and tombstones it visited (failed reads are not recorded).
    pub fn read(
        &self,
        key: &DecoratedKey,
        cmd: &ReadCommand,
    ) -> Result<Option<crate::read::PartitionResult>> {
        let start = std::time::Instant::now();
        let trace = cmd.trace.as_ref();
        crate::trace::event(trace, || {
            format!("Executing single-partition query on {}", self.schema().name)
        });
        let snapshot = if cmd.bypass_cache {
            self.snapshot_uncached()
        } else {
            self.snapshot()
        };
        let (result, counts) = snapshot
            .read_consulting(key, cmd)
            .inspect_err(|e| self.read_failed(e))?;
        if let Some(t) = trace {
            t.event(format!(
                "Merged data from memtables and {} sstables",
                counts.sstables
            ));
            let rows = result
                .as_ref()
                .map_or(0, |r| r.rows.len() + usize::from(r.static_row.is_some()));
            t.event(format!(
                "Read {rows} live rows and {} tombstone cells",
                counts.cells.tombstones
            ));
        }
        let req = &self.requests;
        req.read_latency.record(micros_since(start));
        req.sstables_per_read.record(counts.sstables as u64);
        req.live_scanned.record(counts.cells.live, start);
        req.tombstone_scanned.record(counts.cells.tombstones, start);
        Ok(result)
    }

    /// Counts a read of the table that failed with `e` and reports the storage fault it may
    /// be; under `best_effort`, an sstable that failed to read is taken out of reads.
    pub fn read_failed(&self, e: &Error) {
        self.settings.faults.read_failed(e);
        self.report_fault(Operation::Read, e);
    }

    /// Reports `e`, met while `op` ran on this table, to the fault accounting (see
    /// [`Faults::report`]), and carries out the table's part of the response. A compaction's
    /// I/O error on a live sstable is a read error, on any other file a write error.
    pub fn report_fault(&self, op: Operation, e: &Error) {
        let Some(fault) = e.storage_fault() else {
            return;
        };
        let failed = self.live_generation_of(fault.path);
        let op = match op {
            Operation::Compaction { .. } => Operation::Compaction {
                input: failed.is_some(),
            },
            other => other,
        };
        let Some(response) = self.settings.faults.report(op, e) else {
            return;
        };
        if let (true, Some(generation)) = (response.remove_sstable, failed) {
            if self.take_out_of_reads(generation) {
                self.settings.faults.sstable_removed();
                tracing::error!(
                    path = %fault.path.display(),
                    "sstable {generation} of {self:?} taken out of reads (disk_failure_policy is best_effort); its files stay on disk"
                );
            }
        }
    }

    /// The generation of the live sstable `path` is a component of.
    fn live_generation_of(&self, path: &Path) -> Option<u64> {
        if path.parent() != Some(self.dir.as_path()) {
            return None;
        }
        let generation = parse_generation(&path.file_name()?.to_string_lossy())?;
        self.state()
            .sstables
            .iter()
            .any(|s| s.generation == generation)
            .then_some(generation)
    }

    /// Removes sstable `generation` from the live set without deleting its files (Cassandra's
    /// `best_effort` on an unreadable disk). Returns whether it was live.
    pub fn take_out_of_reads(&self, generation: u64) -> bool {
        let mut state = self.state.write();
        if !state.sstables.iter().any(|s| s.generation == generation) {
            return false;
        }
        let sstables = state
            .sstables
            .iter()
            .filter(|s| s.generation != generation)
            .cloned()
            .collect();
        // The cache may hold rows read from it: they must not outlive it.
        let cache_phase = match &self.cache {
            Some(c) => c.invalidate(),
            None => 0,
        };
        *state = Arc::new(TableState {
            active: Arc::clone(&state.active),
            flushing: state.flushing.clone(),
            sstables,
            cache_phase,
        });
        true
    }

    /// One partition as data, tombstones included — a replica's answer to a coordinator's
    /// read (see [`crate::read::Snapshot::read_data`]).
    pub fn read_data(&self, key: &DecoratedKey, cmd: &ReadCommand) -> Result<Option<Partition>> {
        let start = std::time::Instant::now();
        let trace = cmd.trace.as_ref();
        crate::trace::event(trace, || {
            format!("Executing single-partition query on {}", self.schema().name)
        });
        let snapshot = if cmd.bypass_cache {
            self.snapshot_uncached()
        } else {
            self.snapshot()
        };
        let data = snapshot
            .read_data(key, cmd)
            .inspect_err(|e| self.read_failed(e))?;
        self.requests.read_latency.record(micros_since(start));
        if let Some(t) = trace {
            // What the coordinator will make of it: the live rows, and the tombstones the
            // data carries (only a traced read pays for counting them).
            let mut cells = crate::model::CellCounts::default();
            let rows = match &data {
                Some(d) => self
                    .with_live_rules(|rules| {
                        crate::read::live_of_counting(key, d.clone(), cmd, rules, &mut cells)
                    })?
                    .map_or(0, |r| r.rows.len() + usize::from(r.static_row.is_some())),
                None => 0,
            };
            t.event(format!(
                "Read {rows} live rows and {} tombstone cells",
                cells.tombstones
            ));
        }
        Ok(data)
    }

    /// Scans the table from `start` in token order (a snapshot of now): the error that ends
    /// the scan is counted and reported as [`Table::read`]'s are. (Not counted as a range
    /// scan: [`crate::Database::scan`] counts those.)
    pub fn scan(
        table: &Arc<Table>,
        start: crate::model::PartitionPos,
        end_token: Option<crate::model::Token>,
        cmd: ReadCommand,
    ) -> crate::read::ScanIter {
        let t = Arc::clone(table);
        let snapshot = table.snapshot();
        table.trace_scan(&snapshot, &cmd);
        snapshot
            .scan(start, end_token, cmd)
            .on_error(move |e| t.read_failed(e))
    }

    /// Up to `max` partitions of a token range as data — a replica's answer to a
    /// coordinator's range read (see [`crate::read::Snapshot::scan_data`]).
    pub fn scan_data(
        &self,
        start: &crate::model::PartitionPos,
        end_token: Option<crate::model::Token>,
        cmd: &ReadCommand,
        max: usize,
    ) -> Result<(Vec<(DecoratedKey, Partition)>, bool)> {
        self.requests.range_scans.fetch_add(1, Ordering::Relaxed);
        let snapshot = self.snapshot();
        self.trace_scan(&snapshot, cmd);
        snapshot
            .scan_data(start, end_token, cmd, max)
            .inspect_err(|e| self.read_failed(e))
    }

    /// The rows of a partition's data as view maintenance reads them, with this table's
    /// dropped columns removed (see [`crate::view_update::base_rows`]).
    pub fn base_rows(&self, data: Partition) -> crate::view_update::BaseRows {
        let hidden = Arc::clone(&self.hidden_columns.read());
        crate::view_update::base_rows(data, &hidden)
    }

    /// Tells a traced scan what it scans.
    fn trace_scan(&self, snapshot: &crate::read::Snapshot, cmd: &ReadCommand) {
        crate::trace::event(cmd.trace.as_ref(), || {
            format!(
                "Executing seq scan of {} across {} memtables and {} sstables",
                self.schema().name,
                snapshot.memtables.len(),
                snapshot.sstables.len()
            )
        });
    }

    /// The live content of a partition's data as `cmd` selects it, with this table's dropped
    /// columns removed (see [`crate::read::live_of`]).
    pub fn live(
        &self,
        key: &DecoratedKey,
        data: Partition,
        cmd: &ReadCommand,
    ) -> Result<Option<crate::read::PartitionResult>> {
        self.with_live_rules(|rules| crate::read::live_of(key, data, cmd, rules))
    }

    /// Runs `f` with the rules this table's live rows follow: its dropped columns hidden,
    /// and strict liveness for a view keyed by a base regular column.
    fn with_live_rules<R>(&self, f: impl FnOnce(crate::read::live::LiveRules<'_>) -> R) -> R {
        let hidden = Arc::clone(&self.hidden_columns.read());
        f(crate::read::live::LiveRules {
            hidden_columns: &hidden,
            strict_liveness: self.strict_liveness.load(Ordering::Relaxed),
        })
    }

    /// Bytes held by memtables (active and flushing).
    pub fn memtable_bytes(&self) -> usize {
        let st = self.state();
        st.active.bytes() + st.flushing.iter().map(|(m, _)| m.bytes()).sum::<usize>()
    }

    /// Next sstable generation (for writers outside flush, e.g. compaction and tools).
    pub fn next_generation(&self) -> u64 {
        self.next_generation.fetch_add(1, Ordering::Relaxed)
    }

    /// Atomically replaces sstables `remove` by `add` in the live set (compaction's swap);
    /// removed sstables are deleted once no reader holds them.
    pub fn replace_sstables(&self, remove: &[u64], add: Vec<Arc<SSTable>>) {
        let mut state = self.state.write();
        let mut sstables: Vec<_> = state
            .sstables
            .iter()
            .filter(|s| !remove.contains(&s.generation))
            .cloned()
            .collect();
        for s in state
            .sstables
            .iter()
            .filter(|s| remove.contains(&s.generation))
        {
            s.mark_deleted();
        }
        sstables.extend(add);
        // Same data in other files (compaction), or new data that the caller invalidates in
        // the cache (refresh): either way reads started before must not populate.
        let cache_phase = self.next_cache_phase();
        *state = Arc::new(TableState {
            active: Arc::clone(&state.active),
            flushing: state.flushing.clone(),
            sstables,
            cache_phase,
        });
    }

    /// True once the table was dropped.
    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Marks every sstable for deletion (table dropped).
    pub fn mark_all_deleted(&self) {
        self.dropped.store(true, Ordering::Relaxed);
        self.invalidate_cache();
        for s in &self.state().sstables {
            s.mark_deleted();
        }
    }

    /// Cassandra's "droppable tombstone ratio": tombstones the live sstables estimate
    /// purgeable at `now` (seconds since the epoch; after `gc_grace_seconds`, or as the
    /// table's `tombstone_gc` mode says), over their cells and rows. 0 when there are none,
    /// or when tombstone GC is disabled.
    pub fn droppable_tombstone_ratio(&self, now: u32) -> f64 {
        let schema = self.schema();
        let Some(gc_before) = schema
            .options
            .tombstone_gc
            .gc_before(now, schema.options.gc_grace_seconds)
        else {
            return 0.0;
        };
        let (mut droppable, mut cells) = (0.0, 0u64);
        for s in &self.state().sstables {
            droppable += s.stats.tombstone_drop_times.sum_before(gc_before);
            cells += s.stats.cell_count + s.stats.row_count;
        }
        if cells == 0 {
            0.0
        } else {
            droppable / cells as f64
        }
    }

    /// Counters and sizes. Cheap enough for every metrics scrape: no file-system calls, one
    /// pass over the live sstables' in-memory statistics.
    pub fn stats(&self) -> Result<TableStats> {
        let st = self.state();
        let mut partition_sizes = EstimatedHistogram::new(PARTITION_SIZE_BUCKETS);
        let mut cells_per_partition = EstimatedHistogram::new(CELL_COUNT_BUCKETS);
        let mut live = 0;
        let mut uncompressed = 0;
        let mut compressed = 0;
        let mut partitions = 0;
        let mut mem = (0, 0, 0);
        for s in &st.sstables {
            live += s.disk_bytes();
            uncompressed += s.stats.uncompressed_length;
            compressed += s.stats.data_length;
            partitions += s.stats.partition_count;
            partition_sizes.merge(&s.stats.partition_sizes);
            cells_per_partition.merge(&s.stats.cells_per_partition);
            let (a, b, c) = s.memory_bytes();
            mem = (mem.0 + a, mem.1 + b, mem.2 + c);
        }
        let memtables = std::iter::once(&st.active).chain(st.flushing.iter().map(|(m, _)| m));
        let memtable_bytes: usize = memtables.clone().map(|m| m.bytes()).sum();
        partitions += memtables.map(|m| m.partition_count() as u64).sum::<u64>();
        let io = &self.io;
        let req = &self.requests;
        let now = std::time::Instant::now();
        let (snapshots_size_on_disk, snapshots_true_size) = if self.snapshots.is_empty() {
            (0, 0)
        } else {
            let mut live: Vec<u64> = st.sstables.iter().map(|s| s.generation).collect();
            live.sort_unstable();
            self.snapshots.sizes(&|g| live.binary_search(&g).is_ok())
        };
        Ok(TableStats {
            commitlog_bytes_written: io.written(WriteKind::Commitlog),
            flush_bytes_written: io.written(WriteKind::Flush),
            compaction_bytes_written: io.written(WriteKind::Compaction),
            other_bytes_written: io.written(WriteKind::Other),
            query_bytes_read: io.read(ReadKind::Query),
            compaction_bytes_read: io.read(ReadKind::Compaction),
            other_bytes_read: io.read(ReadKind::Other),
            chunks_read: io.chunks_read(),
            index_pages_read: io.index_pages_read(),
            live_disk_bytes: live,
            total_disk_bytes: live + io.obsolete_bytes(),
            uncompressed_data_bytes: uncompressed,
            compressed_data_bytes: compressed,
            sstable_count: st.sstables.len(),
            memtable_bytes: memtable_bytes as u64,
            memtable_live_bytes: st.active.bytes() as u64,
            memtable_writes: st.active.write_count(),
            partition_sizes,
            cells_per_partition,
            partition_count_estimate: partitions,
            write_latency: req.write_latency.snapshot(),
            read_latency: req.read_latency.snapshot(),
            sstables_per_read: req.sstables_per_read.snapshot(),
            live_scanned_recent: req.live_scanned.recent(now),
            tombstone_scanned_recent: req.tombstone_scanned.recent(now),
            live_scanned_total: req.live_scanned.total_sum(),
            tombstone_scanned_total: req.tombstone_scanned.total_sum(),
            range_scans: req.range_scans.load(Ordering::Relaxed),
            flushes: self.flushes.load(Ordering::Relaxed),
            pending_flushes: st.flushing.len() as u64,
            bloom_true_positives: io.bloom_true_positives(),
            bloom_false_positives: io.bloom_false_positives(),
            metadata_memory: mem,
            snapshots_size_on_disk,
            snapshots_true_size,
        })
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.schema();
        write!(f, "Table({}.{})", s.keyspace, s.name)
    }
}

/// Not found error for a table name.
pub fn unknown(keyspace: &str, table: &str) -> Error {
    Error::UnknownTable {
        keyspace: keyspace.to_string(),
        table: table.to_string(),
    }
}
