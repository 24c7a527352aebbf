//! The database: tables, the shared commitlog, background flushes, startup and recovery.
//!
//! Durability of a write ([`Database::apply`]):
//! - `SyncMode::Batch`: `apply` returns after the commitlog record is fsynced (shared with
//!   concurrent writers — group commit). Survives a process kill and a power loss.
//! - `SyncMode::Periodic`: `apply` returns once the record is in the memory-mapped segment.
//!   Survives a process kill (SIGKILL); a power loss may lose the last sync period.
//!
//! Startup ([`Database::open`]): every table directory is opened (uncommitted sstable files
//! removed), the commitlog is replayed into memtables — skipping records a table's sstables
//! already hold — the replayed data is flushed, and only then are the old segments released.
//! A crash at any point of startup leaves the same data to recover again.

use crate::cache::CacheTracker;
use crate::commitlog::{self, Commitlog, CommitlogConfig, ReplayReport, SyncMode};
use crate::compaction;
use crate::compaction::job::JobReport;
use crate::compaction::manager::{CompactionManager, ManagerConfig};
use crate::error::{Error, IoResultExt, Result};
use crate::fault::{
    CommitFailurePolicy, DiskFailurePolicy, FaultListener, FaultStats, Faults, Operation,
};
use crate::io::Wait;
use crate::metrics::WriteKind;
use crate::model::mutation::{decode_batch, encode_batch};
use crate::model::Mutation;
use crate::read::{PartitionResult, ReadCommand, ScanIter};
use crate::schema::{TableId, TableSchema};
use crate::snapshot::{
    self, RefreshReport, SchemaDescriber, Snapshot, SnapshotDetails, SnapshotOptions,
    TableSnapshots,
};
use crate::table::{unknown, Table, TableSettings, TableStats};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// Engine configuration (Cassandra's names in the comments).
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// `data_file_directories` (one).
    pub data_dir: PathBuf,
    /// `commitlog_directory`.
    pub commitlog_dir: PathBuf,
    /// `commitlog_sync`: periodic or batch.
    pub commitlog_sync: SyncMode,
    /// `commitlog_segment_size_in_mb`, in bytes.
    pub commitlog_segment_size: u64,
    /// `commitlog_total_space_in_mb`, in bytes: when the segments still needed hold more, every
    /// table with data in a memtable is flushed, so overwrites (which grow memtables little)
    /// cannot make the commitlog, and its replay, grow without bound.
    pub commitlog_total_space: u64,
    /// A table's memtable is flushed when it reaches this many bytes.
    pub memtable_flush_threshold: usize,
    /// `memtable_space_in_mb`: all memtables together; past it the largest is flushed, and past
    /// twice it writers wait for flushes. What memtables hold past it the row cache gives up.
    pub memtable_total_space: usize,
    /// `memtable_flush_writers`: background flush threads.
    pub flush_writers: usize,
    /// `concurrent_compactors`, `compaction_throughput_mb_per_sec` and the rest of the
    /// compaction manager's settings.
    pub compaction: ManagerConfig,
    /// `disk_access_mode`: whether scans and compactions read data files through a memory map
    /// (`auto`, `mmap`: true) or with `pread` (`standard`, `mmap_index_only`: false). Applies
    /// to every table of this database ([`crate::sstable::reader::SSTable::map_sequential_reads`]).
    pub map_sequential_reads: bool,
    /// `auto_snapshot`: snapshot a table (`dropped-<ms>-<table>`, `truncated-<ms>-<table>`)
    /// before DROP TABLE, DROP KEYSPACE and TRUNCATE delete its data.
    pub auto_snapshot: bool,
    /// `incremental_backups`: link every flushed or loaded sstable into the table's
    /// `backups/` (switched at run time with [`Database::set_incremental_backups`]).
    pub incremental_backups: bool,
    /// The row cache's byte budget, shared by every table ([`crate::cache`]); 0 (the
    /// default for now) runs without a row cache. It gives way to memtables past
    /// `memtable_total_space` (the cache module doc's "Memory shared with memtables").
    pub row_cache_bytes: usize,
    /// `index_cache_fraction` (ScyllaDB's key): the share of the row cache's budget sstable
    /// index pages may hold (0.2; 0 caches none; see [`crate::cache::index_pages`]).
    pub index_cache_fraction: f64,
    /// `disk_failure_policy`: what a corrupt sstable or a data file's I/O error does
    /// ([`crate::fault`]); `stop`, as Cassandra's shipped `cassandra.yaml` sets it.
    pub disk_failure_policy: DiskFailurePolicy,
    /// `commit_failure_policy`: what a commitlog write or sync failure does; `stop`.
    pub commit_failure_policy: CommitFailurePolicy,
}

impl DatabaseConfig {
    /// Defaults with data under `dir/data` and the commitlog under `dir/commitlog`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        DatabaseConfig {
            data_dir: dir.join("data"),
            commitlog_dir: dir.join("commitlog"),
            commitlog_sync: SyncMode::Periodic {
                period: Duration::from_secs(10),
            },
            commitlog_segment_size: 32 << 20,
            commitlog_total_space: 8192 << 20,
            memtable_flush_threshold: 64 << 20,
            memtable_total_space: 256 << 20,
            flush_writers: 2,
            compaction: ManagerConfig::default(),
            map_sequential_reads: true,
            auto_snapshot: true,
            incremental_backups: false,
            row_cache_bytes: 0,
            index_cache_fraction: crate::cache::DEFAULT_INDEX_FRACTION,
            disk_failure_policy: DiskFailurePolicy::Stop,
            commit_failure_policy: CommitFailurePolicy::Stop,
        }
    }
}

/// What startup found and did.
#[derive(Debug, Clone, Default)]
pub struct RecoveryReport {
    /// The commitlog replay.
    pub replay: ReplayReport,
    /// Mutations applied from the commitlog.
    pub mutations_replayed: u64,
    /// Mutations skipped because sstables already held them or their table is gone.
    pub mutations_skipped: u64,
    /// Records whose payload did not decode (file, offset).
    pub undecodable_records: Vec<(PathBuf, u64)>,
    /// Interrupted compactions rolled back or completed from their transaction logs.
    pub compaction_logs_recovered: usize,
}

enum FlushJob {
    Table(TableId, Option<mpsc::Sender<Result<()>>>),
    Stop,
}

struct Inner {
    config: DatabaseConfig,
    commitlog: Commitlog,
    tables: RwLock<HashMap<TableId, Arc<Table>, foldhash::fast::RandomState>>,
    names: RwLock<TableNames>,
    memtable_bytes: AtomicUsize,
    /// The commitlog segment of the last write `apply` saw (to notice segment switches).
    last_segment: std::sync::atomic::AtomicU64,
    flush_tx: Mutex<mpsc::Sender<FlushJob>>,
    flushed: (Mutex<()>, Condvar),
    closed: AtomicBool,
    last_flush_error: Mutex<Option<String>>,
    compaction: std::sync::OnceLock<CompactionManager>,
    /// Every table directory's snapshots, dropped tables' included.
    snapshots: snapshot::Registry,
    /// The incremental-backup switch every table shares.
    incremental_backups: Arc<AtomicBool>,
    /// Prints `schema.cql` (set by the CQL layer).
    describer: RwLock<Option<Arc<SchemaDescriber>>>,
    /// Wakes the snapshot-expiry thread (to stop it).
    expiry_wake: (Mutex<bool>, Condvar),
    /// The row cache every table shares (`row_cache_bytes > 0`).
    cache: Option<Arc<CacheTracker>>,
    /// Storage-fault accounting and policies, shared with every table and the commitlog.
    faults: Arc<Faults>,
}

/// A Cairn database.
pub struct Database {
    inner: Arc<Inner>,
    workers: Vec<std::thread::JoinHandle<()>>,
    expiry: Option<std::thread::JoinHandle<()>>,
    recovery: RecoveryReport,
}

impl Database {
    /// Opens (or creates) a database and recovers it.
    pub fn open(config: DatabaseConfig) -> Result<Database> {
        std::fs::create_dir_all(&config.data_dir).with_path(&config.data_dir)?;
        std::fs::create_dir_all(&config.commitlog_dir).with_path(&config.commitlog_dir)?;
        let mut tables = HashMap::default();
        let mut logs_recovered = 0;
        let mut names = TableNames::default();
        let registry = snapshot::Registry::default();
        let backups = Arc::new(AtomicBool::new(config.incremental_backups));
        let cache = (config.row_cache_bytes > 0).then(|| {
            CacheTracker::with_index_fraction(config.row_cache_bytes, config.index_cache_fraction)
        });
        let faults = Arc::new(Faults::new(
            config.disk_failure_policy,
            config.commit_failure_policy,
        ));
        let settings = |backups: &Arc<AtomicBool>| TableSettings {
            incremental_backups: Arc::clone(backups),
            map_sequential_reads: config.map_sequential_reads,
            cache: cache.clone(),
            faults: Arc::clone(&faults),
        };
        for ks in std::fs::read_dir(&config.data_dir).with_path(&config.data_dir)? {
            let ks = ks.with_path(&config.data_dir)?.path();
            if !ks.is_dir() {
                continue;
            }
            for t in std::fs::read_dir(&ks).with_path(&ks)? {
                let t = t.with_path(&ks)?.path();
                if !t.join(crate::schema::SCHEMA_FILE).exists() {
                    // A dropped table's directory: finish deleting it, keep its snapshots.
                    let name = t.file_name().map(|n| n.to_string_lossy().into_owned());
                    if let Some((table, _)) = name.as_deref().and_then(snapshot::parse_table_dir) {
                        if t.is_dir() && snapshot::finish_drop(&t)? {
                            let ks_name = ks.file_name().map(|n| n.to_string_lossy().into_owned());
                            let s = TableSnapshots::load(&t, &ks_name.unwrap_or_default(), table)?;
                            registry.insert(Arc::new(s));
                        }
                    }
                    continue;
                }
                // Interrupted compactions are finished or rolled back first.
                logs_recovered += compaction::txn::recover(&t)?.len();
                let table = Table::open(&t, settings(&backups))?;
                registry.insert(Arc::clone(table.snapshots()));
                let s = table.schema();
                names.insert(&s.keyspace, &s.name, s.id);
                tables.insert(s.id, Arc::new(table));
            }
        }

        // Replay into memtables.
        let mut recovery = RecoveryReport {
            compaction_logs_recovered: logs_recovered,
            ..Default::default()
        };
        let replay = commitlog::replay(&config.commitlog_dir, |pos, payload| {
            let buf = bytes::Bytes::copy_from_slice(payload);
            let muts = match decode_batch(&buf) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(
                        segment = pos.segment_id,
                        offset = pos.offset,
                        "undecodable commitlog record: {:?}",
                        e.kind
                    );
                    recovery.undecodable_records.push((
                        commitlog::segment_path(&config.commitlog_dir, pos.segment_id),
                        u64::from(pos.offset),
                    ));
                    return Ok(());
                }
            };
            for m in muts {
                match tables.get(&m.table) {
                    Some(t) if pos >= t.replay_floor() => {
                        t.apply(&m.key, m.update);
                        recovery.mutations_replayed += 1;
                    }
                    _ => recovery.mutations_skipped += 1,
                }
            }
            Ok(())
        })?;
        for p in &replay.problems {
            tracing::warn!(path = %p.path.display(), offset = p.offset, torn_tail = p.torn_tail, "commitlog replay stopped: {}", p.kind);
        }
        recovery.replay = replay;

        let mut cl_config = CommitlogConfig::new(&config.commitlog_dir);
        cl_config.segment_size = config.commitlog_segment_size;
        cl_config.sync = config.commitlog_sync;
        cl_config.faults = Some(Arc::clone(&faults));
        let commitlog = Commitlog::open(cl_config)?;
        // Flush what was replayed, then release the old segments.
        for t in tables.values() {
            t.switch_memtable(|| commitlog.current_position());
            t.flush_pending(&compaction::flush_fragments)?;
        }
        commitlog.release_replayed();

        let (tx, rx) = mpsc::channel();
        let inner = Arc::new(Inner {
            config,
            commitlog,
            tables: RwLock::new(tables),
            names: RwLock::new(names),
            memtable_bytes: AtomicUsize::new(0),
            last_segment: std::sync::atomic::AtomicU64::new(0),
            flush_tx: Mutex::new(tx),
            flushed: (Mutex::new(()), Condvar::new()),
            closed: AtomicBool::new(false),
            last_flush_error: Mutex::new(None),
            compaction: std::sync::OnceLock::new(),
            snapshots: registry,
            incremental_backups: backups,
            describer: RwLock::new(None),
            expiry_wake: (Mutex::new(false), Condvar::new()),
            cache,
            faults,
        });
        let weak = Arc::downgrade(&inner);
        let mut manager_config = inner.config.compaction.clone();
        manager_config.history_file = Some(
            inner
                .config
                .data_dir
                .join(crate::compaction::history::HISTORY_FILE),
        );
        let manager = CompactionManager::start(
            manager_config,
            Box::new(move || {
                weak.upgrade()
                    .map(|i| i.tables.read().values().cloned().collect())
                    .unwrap_or_default()
            }),
        )?;
        for t in inner.tables.read().values() {
            manager.submit(t);
        }
        let _ = inner.compaction.set(manager);
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..inner.config.flush_writers.max(1))
            .map(|i| {
                let inner = Arc::clone(&inner);
                let rx = Arc::clone(&rx);
                std::thread::Builder::new()
                    .name(format!("flush-{i}"))
                    .spawn(move || flush_worker(&inner, &rx))
                    .map_err(|e| Error::io("flush thread", e))
            })
            .collect::<Result<Vec<_>>>()?;
        let weak = Arc::downgrade(&inner);
        let expiry = std::thread::Builder::new()
            .name("snapshot-ttl".into())
            .spawn(move || expire_snapshots(&weak))
            .map_err(|e| Error::io("snapshot expiry thread", e))?;
        Ok(Database {
            inner,
            workers,
            expiry: Some(expiry),
            recovery,
        })
    }

    /// What startup recovered.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// Creates a table.
    pub fn create_table(&self, schema: TableSchema) -> Result<Arc<Table>> {
        let mut names = self.inner.names.write();
        if names.get(&schema.keyspace, &schema.name).is_some() {
            return Err(Error::TableExists {
                keyspace: schema.keyspace.clone(),
                table: schema.name.clone(),
            });
        }
        let dir = self.table_dir(&schema);
        let id = schema.id;
        let table = Arc::new(Table::create(
            &dir,
            schema,
            TableSettings {
                incremental_backups: Arc::clone(&self.inner.incremental_backups),
                map_sequential_reads: self.inner.config.map_sequential_reads,
                cache: self.inner.cache.clone(),
                faults: Arc::clone(&self.inner.faults),
            },
        )?);
        self.inner.snapshots.insert(Arc::clone(table.snapshots()));
        names.insert(&table.schema().keyspace, &table.schema().name, id);
        self.inner.tables.write().insert(id, Arc::clone(&table));
        Ok(table)
    }

    /// Replaces a table's schema (options, added columns); the id must exist.
    pub fn alter_table(&self, schema: TableSchema) -> Result<()> {
        let t = self
            .table_by_id(schema.id)
            .ok_or_else(|| unknown(&schema.keyspace, &schema.name))?;
        t.set_schema(schema)?;
        // A new strategy (or new options) applies to the live set at once.
        self.compaction().submit(&t);
        Ok(())
    }

    /// Drops a table: its data is deleted once readers release it. With `auto_snapshot`, the
    /// table is flushed and snapshotted (`dropped-<ms>-<table>`) first; its directory keeps
    /// its snapshots and backups.
    pub fn drop_table(&self, keyspace: &str, name: &str) -> Result<()> {
        let prefix = self.inner.config.auto_snapshot.then_some("dropped");
        self.drop_table_with(keyspace, name, prefix).map(|_| ())
    }

    /// Drops a table, snapshotting it first as `<prefix>-<ms>-<table>` when `prefix` is
    /// given. Returns the dropped table's directory and whether it remains (it keeps
    /// snapshots or backups).
    fn drop_table_with(
        &self,
        keyspace: &str,
        name: &str,
        snapshot_prefix: Option<&str>,
    ) -> Result<(PathBuf, bool)> {
        let t = self
            .table(keyspace, name)
            .ok_or_else(|| unknown(keyspace, name))?;
        if let Some(prefix) = snapshot_prefix {
            flush_table(&self.inner, &t)?;
            let now = snapshot::now_ms();
            let tag = snapshot::timestamped_tag(prefix, name, now);
            let describer = self.inner.describer.read().clone();
            snapshot::take(
                std::slice::from_ref(&t),
                &tag,
                &SnapshotOptions::default(),
                describer.as_deref(),
                now,
            )?;
        }
        drop(t);
        let id = self
            .inner
            .names
            .write()
            .remove(keyspace, name)
            .ok_or_else(|| unknown(keyspace, name))?;
        let removed = self.inner.tables.write().remove(&id);
        let Some(t) = removed else {
            return Err(unknown(keyspace, name));
        };
        t.mark_all_deleted();
        self.compaction().stop(Some(&t));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while self.compaction().running_on(&t) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.compaction().forget(&t);
        self.inner.memtable_bytes.fetch_sub(
            t.memtable_bytes()
                .min(self.inner.memtable_bytes.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
        self.inner.cache_give_way();
        self.inner.commitlog.forget_table(id);
        let dir = t.dir().to_path_buf();
        drop(t);
        let kept = snapshot::finish_drop(&dir)?;
        if !kept {
            self.inner.snapshots.remove(&dir);
        }
        Ok((dir, kept))
    }

    /// TRUNCATE: replaces the table by an empty one of the same schema under a new id (so
    /// that the commitlog records of the old data, in segments not yet recycled, are never
    /// replayed into it). With `auto_snapshot`, the data is flushed and snapshotted
    /// (`truncated-<ms>-<table>`) first. The table's snapshots and backups move to the new
    /// table's directory, where Cassandra users look for them.
    pub fn truncate_table(&self, keyspace: &str, name: &str) -> Result<Arc<Table>> {
        let t = self
            .table(keyspace, name)
            .ok_or_else(|| unknown(keyspace, name))?;
        let mut schema = (*t.schema()).clone();
        schema.id = crate::schema::rand_table_id();
        drop(t);
        self.replace_table(schema)
    }

    /// [`Database::truncate_table`] with the replacement's schema given — its id (new) and
    /// definition: a cluster's nodes replace a table by the same one, as its schema says.
    pub fn replace_table(&self, schema: TableSchema) -> Result<Arc<Table>> {
        let (keyspace, name) = (schema.keyspace.clone(), schema.name.clone());
        let (keyspace, name) = (keyspace.as_str(), name.as_str());
        if self.table_by_id(schema.id).is_some() {
            return Err(Error::TableExists {
                keyspace: keyspace.to_string(),
                table: name.to_string(),
            });
        }
        let prefix = self.inner.config.auto_snapshot.then_some("truncated");
        let (old_dir, kept) = self.drop_table_with(keyspace, name, prefix)?;
        if kept {
            let new_dir = self.table_dir(&schema);
            std::fs::create_dir_all(&new_dir).with_path(&new_dir)?;
            for sub in [snapshot::SNAPSHOTS_DIR, snapshot::BACKUPS_DIR] {
                let from = old_dir.join(sub);
                if from.exists() {
                    let to = new_dir.join(sub);
                    std::fs::rename(&from, &to).with_path(&to)?;
                }
            }
            crate::io::sync_dir(&new_dir)?;
            self.inner.snapshots.remove(&old_dir);
            snapshot::finish_drop(&old_dir)?;
        }
        self.create_table(schema)
    }

    /// The directory of a table: `<data>/<keyspace>/<table>-<id as 32 hex digits>`.
    fn table_dir(&self, schema: &TableSchema) -> PathBuf {
        self.inner
            .config
            .data_dir
            .join(&schema.keyspace)
            .join(format!("{}-{:032x}", schema.name, schema.id))
    }

    /// A table by name.
    pub fn table(&self, keyspace: &str, name: &str) -> Option<Arc<Table>> {
        let id = self.inner.names.read().get(keyspace, name)?;
        self.table_by_id(id)
    }

    /// A table by id.
    pub fn table_by_id(&self, id: TableId) -> Option<Arc<Table>> {
        self.inner.tables.read().get(&id).cloned()
    }

    /// Every table.
    pub fn tables(&self) -> Vec<Arc<Table>> {
        self.inner.tables.read().values().cloned().collect()
    }

    /// Applies mutations atomically with respect to a crash (one commitlog record). Under
    /// [`Wait::Never`] a write that would wait — for memtable space, a commitlog sync or
    /// segment — is [`Error::WouldBlock`], with nothing applied.
    pub fn apply(&self, muts: Vec<Mutation>, wait: Wait) -> Result<()> {
        self.apply_traced(muts, wait, None)
    }

    /// [`Database::apply`] for a traced request: tells `trace` of the commitlog append and
    /// each memtable insert (see [`crate::trace`]).
    pub fn apply_traced(
        &self,
        muts: Vec<Mutation>,
        wait: Wait,
        trace: Option<&crate::trace::Trace>,
    ) -> Result<()> {
        let r = self.apply_inner(muts, wait, trace);
        if let Err(e) = &r {
            // Counted only: a commitlog fault was reported where it happened.
            self.inner.faults.write_failed(e);
        }
        r
    }

    fn apply_inner(
        &self,
        muts: Vec<Mutation>,
        wait: Wait,
        trace: Option<&crate::trace::Trace>,
    ) -> Result<()> {
        if self.inner.closed.load(Ordering::Relaxed) {
            return Err(Error::Closed);
        }
        if muts.is_empty() {
            return Ok(());
        }
        // Write latency covers waiting for memtable space, the commitlog and the memtables.
        let start = std::time::Instant::now();
        self.wait_for_memtable_space(wait)?;
        let mut tables: Vec<Arc<Table>> = Vec::with_capacity(muts.len());
        for m in &muts {
            let t = self
                .table_by_id(m.table)
                .ok_or(Error::InvalidMutation("unknown table id"))?;
            tables.push(t);
        }
        let mut payload = Vec::with_capacity(128);
        encode_batch(&muts, &mut payload);
        let mut ids: Vec<TableId> = muts.iter().map(|m| m.table).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut distinct: Vec<&Arc<Table>> = Vec::new();
        for t in &tables {
            if !distinct.iter().any(|d| Arc::ptr_eq(d, t)) {
                distinct.push(t);
            }
        }
        let guards: Vec<_> = distinct.iter().map(|t| t.write_gate()).collect();
        crate::trace::event(trace, || "Appending to commitlog".into());
        let position = self.inner.commitlog.append(&payload, &ids, wait)?;
        let mut charged_total = 0;
        let mut to_flush = Vec::new();
        for (m, t) in muts.into_iter().zip(&tables) {
            crate::trace::event(trace, || format!("Adding to {} memtable", t.schema().name));
            let (charged, active) = t.apply(&m.key, m.update);
            charged_total += charged;
            if active >= self.inner.config.memtable_flush_threshold {
                to_flush.push(Arc::clone(t));
            }
        }
        drop(guards);
        let micros = crate::metrics::micros_since(start);
        let share = payload.len() as u64 / distinct.len() as u64;
        for t in &distinct {
            t.io.add_written(WriteKind::Commitlog, share);
            let n = tables.iter().filter(|m| Arc::ptr_eq(m, t)).count() as u64;
            t.requests.write_latency.record_n(micros, n);
        }
        let total = self
            .inner
            .memtable_bytes
            .fetch_add(charged_total, Ordering::Relaxed)
            + charged_total;
        self.inner.cache_give_way();
        for t in to_flush {
            self.request_flush(&t);
        }
        let last = self
            .inner
            .last_segment
            .swap(position.segment_id, Ordering::Relaxed);
        if last != position.segment_id {
            self.on_new_commitlog_segment();
        }
        if total >= self.inner.config.memtable_total_space {
            if let Some(largest) = self
                .tables()
                .into_iter()
                .filter(|t| !t.flush_requested.load(Ordering::Relaxed))
                .max_by_key(|t| t.state().active.bytes())
            {
                self.request_flush(&largest);
            }
        }
        Ok(())
    }

    fn wait_for_memtable_space(&self, wait: Wait) -> Result<()> {
        let limit = self.inner.config.memtable_total_space.saturating_mul(2);
        if self.inner.memtable_bytes.load(Ordering::Relaxed) < limit {
            return Ok(());
        }
        wait.permit()?;
        let (lock, cv) = &self.inner.flushed;
        let mut g = lock.lock();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while self.inner.memtable_bytes.load(Ordering::Relaxed) >= limit {
            if cv.wait_until(&mut g, deadline).timed_out() {
                let why = self.inner.last_flush_error.lock().clone();
                tracing::warn!(?why, "memtables full and flushes are not keeping up");
                return Err(Error::Overloaded);
            }
        }
        Ok(())
    }

    /// Once per commitlog segment: past `commitlog_total_space`, flush every table holding
    /// memtable data, so the oldest segments can be released.
    fn on_new_commitlog_segment(&self) {
        let needed = self.inner.commitlog.stats().active_segments as u64;
        if needed.saturating_mul(self.inner.config.commitlog_segment_size)
            <= self.inner.config.commitlog_total_space
        {
            return;
        }
        for t in self.tables() {
            if !t.state().active.is_empty() {
                self.request_flush(&t);
            }
        }
    }

    fn request_flush(&self, t: &Arc<Table>) {
        if !t.flush_requested.swap(true, Ordering::AcqRel) {
            let _ = self
                .inner
                .flush_tx
                .lock()
                .send(FlushJob::Table(t.schema().id, None));
        }
    }

    /// Empties the row cache of every table (`nodetool invalidaterowcache`); reads populate
    /// it again from then on.
    pub fn invalidate_row_cache(&self) {
        for t in self.tables() {
            t.invalidate_cache();
        }
    }

    /// The row cache every table shares, when the database has one.
    pub fn row_cache(&self) -> Option<&Arc<CacheTracker>> {
        self.inner.cache.as_ref()
    }

    /// Reads one partition.
    pub fn read(
        &self,
        keyspace: &str,
        table: &str,
        key: &crate::model::DecoratedKey,
        cmd: &ReadCommand,
    ) -> Result<Option<PartitionResult>> {
        self.table(keyspace, table)
            .ok_or_else(|| unknown(keyspace, table))?
            .read(key, cmd)
    }

    /// Scans a table from `start` in token order.
    pub fn scan(
        &self,
        keyspace: &str,
        table: &str,
        start: crate::model::PartitionPos,
        end: Option<crate::model::Token>,
        cmd: ReadCommand,
    ) -> Result<ScanIter> {
        let t = self
            .table(keyspace, table)
            .ok_or_else(|| unknown(keyspace, table))?;
        t.requests.range_scans.fetch_add(1, Ordering::Relaxed);
        Ok(Table::scan(&t, start, end, cmd))
    }

    /// Flushes one table's memtable and waits for it.
    pub fn flush(&self, keyspace: &str, table: &str) -> Result<()> {
        let t = self
            .table(keyspace, table)
            .ok_or_else(|| unknown(keyspace, table))?;
        flush_table(&self.inner, &t)
    }

    /// Flushes every table.
    pub fn flush_all(&self) -> Result<()> {
        for t in self.tables() {
            flush_table(&self.inner, &t)?;
        }
        Ok(())
    }

    /// A table's counters.
    pub fn table_stats(&self, keyspace: &str, table: &str) -> Result<TableStats> {
        self.table(keyspace, table)
            .ok_or_else(|| unknown(keyspace, table))?
            .stats()
    }

    /// Commitlog counters.
    pub fn commitlog_stats(&self) -> commitlog::CommitlogStats {
        self.inner.commitlog.stats()
    }

    /// Bytes held by all memtables.
    pub fn memtable_bytes(&self) -> usize {
        self.inner.memtable_bytes.load(Ordering::Relaxed)
    }

    /// Forces the commitlog to disk now.
    pub fn sync_commitlog(&self) -> Result<()> {
        self.inner.commitlog.sync()
    }

    /// The compaction manager.
    pub fn compaction(&self) -> &CompactionManager {
        // Set in `open` before the database is returned.
        self.inner
            .compaction
            .get()
            .unwrap_or_else(|| unreachable!("compaction manager is started in open"))
    }

    /// Major compaction of one table (`nodetool compact`): flushes it, then runs its
    /// strategy's major jobs and waits for them.
    pub fn compact(&self, keyspace: &str, table: &str) -> Result<Vec<JobReport>> {
        let t = self
            .table(keyspace, table)
            .ok_or_else(|| unknown(keyspace, table))?;
        flush_table(&self.inner, &t)?;
        self.compaction().major(&t)
    }

    /// The configuration.
    pub fn config(&self) -> &DatabaseConfig {
        &self.inner.config
    }

    /// Storage faults counted since the database opened ([`crate::fault`]).
    pub fn fault_stats(&self) -> FaultStats {
        self.inner.faults.stats()
    }

    /// Sets who carries out what the failure policies ask of the node (stop the client
    /// transports, exit); what they asked before is handed over now.
    pub fn set_fault_listener(&self, f: FaultListener) {
        self.inner.faults.set_listener(f);
    }

    /// Sets what prints a table's `schema.cql` in its snapshots (the CQL layer does).
    pub fn set_schema_describer(&self, describer: Arc<SchemaDescriber>) {
        *self.inner.describer.write() = Some(describer);
    }

    /// `nodetool snapshot`: takes snapshot `tag` of `tables`, each flushed first unless
    /// `opts.skip_flush`. Fails, before taking anything, if the tag is invalid or one of
    /// them already has a snapshot by that name.
    pub fn snapshot(&self, tables: &[Arc<Table>], tag: &str, opts: &SnapshotOptions) -> Result<()> {
        // Before flushing: a refused snapshot changes nothing.
        snapshot::check_new_tag(tables, tag)?;
        if !opts.skip_flush {
            for t in tables {
                flush_table(&self.inner, t)?;
            }
        }
        let describer = self.inner.describer.read().clone();
        snapshot::take(tables, tag, opts, describer.as_deref(), snapshot::now_ms())?;
        self.inner.expiry_wake.1.notify_all();
        Ok(())
    }

    /// `nodetool listsnapshots`: every snapshot of every table directory — dropped tables'
    /// included — by keyspace, table and tag, with its sizes.
    pub fn list_snapshots(&self) -> Vec<SnapshotDetails> {
        let tables = self.tables();
        let mut out = Vec::new();
        for s in self.inner.snapshots.all() {
            s.forget_missing();
            let live = tables.iter().find(|t| t.dir() == s.dir());
            let mut gens: Vec<u64> = live
                .map(|t| t.state().sstables.iter().map(|x| x.generation).collect())
                .unwrap_or_default();
            gens.sort_unstable();
            let is_live = |g: u64| gens.binary_search(&g).is_ok();
            for snap in s.list() {
                out.push(SnapshotDetails {
                    keyspace: s.keyspace().to_string(),
                    table: s.table().to_string(),
                    size_on_disk: snap.size_on_disk(),
                    true_size: snap.true_size(&is_live),
                    tag: snap.tag,
                    created_at_ms: snap.created_at_ms,
                    expires_at_ms: snap.expires_at_ms,
                    ephemeral: snap.ephemeral,
                    table_dropped: live.is_none(),
                });
            }
        }
        out.sort_by(|a, b| (&a.tag, &a.keyspace, &a.table).cmp(&(&b.tag, &b.keyspace, &b.table)));
        out
    }

    /// `nodetool clearsnapshot`: removes the snapshots named `tag` (all of them when `None`)
    /// of the tables of `keyspaces` (all when empty), only of table `table` when given —
    /// dropped tables' included. A dropped table's directory goes with its last snapshot
    /// (unless it holds backups). Returns how many table snapshots were removed.
    pub fn clear_snapshots(
        &self,
        tag: Option<&str>,
        keyspaces: &[String],
        table: Option<&str>,
    ) -> Result<usize> {
        self.remove_snapshots(|s, snap| {
            (keyspaces.is_empty() || keyspaces.iter().any(|k| k == s.keyspace()))
                && table.is_none_or(|t| t == s.table())
                && tag.is_none_or(|t| t == snap.tag)
        })
    }

    /// Removes every snapshot `doomed` picks; see [`Database::clear_snapshots`].
    fn remove_snapshots(
        &self,
        doomed: impl Fn(&TableSnapshots, &Snapshot) -> bool,
    ) -> Result<usize> {
        let live: Vec<PathBuf> = self
            .tables()
            .iter()
            .map(|t| t.dir().to_path_buf())
            .collect();
        let mut removed = 0;
        for s in self.inner.snapshots.all() {
            for snap in s.list() {
                if doomed(&s, &snap) && s.remove(&snap.tag)? {
                    removed += 1;
                }
            }
            if s.is_empty() && !live.iter().any(|d| d == s.dir()) && s.dir().exists() {
                // A dropped table's directory: gone with its last snapshot, unless it holds
                // backups.
                if !snapshot::finish_drop(s.dir())? {
                    self.inner.snapshots.remove(s.dir());
                }
            }
        }
        Ok(removed)
    }

    /// The true size of every snapshot (`/storage_service/snapshots/size/true`).
    pub fn snapshots_true_size(&self) -> u64 {
        self.list_snapshots().iter().map(|d| d.true_size).sum()
    }

    /// Turns incremental backups on or off (`nodetool enablebackup` / `disablebackup`).
    pub fn set_incremental_backups(&self, on: bool) {
        self.inner.incremental_backups.store(on, Ordering::Relaxed);
    }

    /// Whether incremental backups are on (`nodetool statusbackup`).
    pub fn incremental_backups(&self) -> bool {
        self.inner.incremental_backups.load(Ordering::Relaxed)
    }

    /// `nodetool refresh`: verifies and loads the sstables in the table's `upload/`
    /// directory (see [`snapshot::refresh`]).
    pub fn refresh(&self, keyspace: &str, table: &str) -> Result<RefreshReport> {
        let t = self
            .table(keyspace, table)
            .ok_or_else(|| unknown(keyspace, table))?;
        let report = snapshot::refresh::load_uploaded(&t)?;
        if !report.generations.is_empty() {
            self.compaction().submit(&t);
        }
        Ok(report)
    }
}

/// Removes expired snapshots (`nodetool snapshot --ttl`) until the database closes: wakes
/// at the next expiry, at most a minute later, or when a snapshot is taken.
fn expire_snapshots(inner: &std::sync::Weak<Inner>) {
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        if strong.closed.load(Ordering::Relaxed) {
            return;
        }
        let now = snapshot::now_ms();
        let mut next = now + 60_000;
        for s in strong.snapshots.all() {
            for snap in s.list() {
                match snap.expires_at_ms {
                    Some(at) if at <= now => {
                        tracing::info!(tag = %snap.tag, dir = %s.dir().display(), "removing an expired snapshot");
                        if let Err(e) = s.remove(&snap.tag) {
                            tracing::warn!("could not remove expired snapshot {}: {e}", snap.tag);
                        }
                    }
                    Some(at) => next = next.min(at),
                    None => {}
                }
            }
        }
        let (lock, cv) = &strong.expiry_wake;
        let mut stop = lock.lock();
        if !*stop {
            let wait = Duration::from_millis(u64::try_from(next - now).unwrap_or(0).max(10));
            cv.wait_for(&mut stop, wait);
        }
        if *stop {
            return;
        }
    }
}

/// A quick hash for the maps every request consults (keys are not attacker-chosen floods:
/// table names come from DDL).
type FastHash = foldhash::fast::RandomState;

/// Table ids by keyspace and name, looked up without building owned keys.
#[derive(Default)]
struct TableNames(HashMap<String, HashMap<String, TableId, FastHash>, FastHash>);

impl TableNames {
    fn get(&self, keyspace: &str, name: &str) -> Option<TableId> {
        self.0.get(keyspace)?.get(name).copied()
    }

    fn insert(&mut self, keyspace: &str, name: &str, id: TableId) {
        self.0
            .entry(keyspace.to_string())
            .or_default()
            .insert(name.to_string(), id);
    }

    fn remove(&mut self, keyspace: &str, name: &str) -> Option<TableId> {
        let tables = self.0.get_mut(keyspace)?;
        let id = tables.remove(name);
        if tables.is_empty() {
            self.0.remove(keyspace);
        }
        id
    }
}

impl Inner {
    /// Tells the row cache how far memtables are past `memtable_total_space`: it gives way
    /// by as much, without ever making the caller wait ([`CacheTracker::give_way`]).
    fn cache_give_way(&self) {
        if let Some(cache) = &self.cache {
            let held = self.memtable_bytes.load(Ordering::Relaxed);
            cache.give_way(held.saturating_sub(self.config.memtable_total_space));
        }
    }
}

fn flush_table(inner: &Inner, t: &Arc<Table>) -> Result<()> {
    t.switch_memtable(|| inner.commitlog.current_position());
    let r = t.flush_pending(&compaction::flush_fragments);
    t.flush_requested.store(false, Ordering::Release);
    match r {
        Ok((upto, freed)) => {
            let cur = inner.memtable_bytes.load(Ordering::Relaxed);
            inner
                .memtable_bytes
                .fetch_sub(freed.min(cur), Ordering::Relaxed);
            inner.cache_give_way();
            if let Some(pos) = upto {
                inner.commitlog.discard_completed(t.schema().id, pos);
                if let Some(m) = inner.compaction.get() {
                    m.submit(t);
                }
            }
            let (lock, cv) = &inner.flushed;
            let _g = lock.lock();
            cv.notify_all();
            Ok(())
        }
        Err(e) => {
            tracing::error!("flush of {t:?} failed: {e}");
            t.report_fault(Operation::Write, &e);
            *inner.last_flush_error.lock() = Some(e.to_string());
            Err(e)
        }
    }
}

fn flush_worker(inner: &Arc<Inner>, rx: &Mutex<mpsc::Receiver<FlushJob>>) {
    loop {
        let job = rx.lock().recv();
        match job {
            Ok(FlushJob::Table(id, reply)) => {
                let t = inner.tables.read().get(&id).cloned();
                let r = match t {
                    Some(t) => flush_table(inner, &t),
                    None => Ok(()),
                };
                if let Some(reply) = reply {
                    let _ = reply.send(r);
                }
            }
            Ok(FlushJob::Stop) | Err(_) => return,
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.inner.closed.store(true, Ordering::Relaxed);
        {
            let (lock, cv) = &self.inner.expiry_wake;
            *lock.lock() = true;
            cv.notify_all();
        }
        if let Some(t) = self.expiry.take() {
            let _ = t.join();
        }
        if let Some(m) = self.inner.compaction.get() {
            m.shutdown();
        }
        {
            let tx = self.inner.flush_tx.lock();
            for _ in &self.workers {
                let _ = tx.send(FlushJob::Stop);
            }
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        if let Err(e) = self.inner.commitlog.sync() {
            tracing::error!("commitlog sync at close failed: {e}");
        }
    }
}
