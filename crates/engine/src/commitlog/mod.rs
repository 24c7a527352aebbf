//! The commitlog: an append-only, checksummed log of mutations that makes writes durable before
//! they reach an sstable, replayed at startup to rebuild the memtables.
//!
//! Concepts and option names follow Cassandra: the log is a sequence of fixed-size *segments*
//! (`commitlog_segment_size_in_mb`, default 32 MiB), each a file `CommitLog-1-<id>.log`; a
//! [`CommitlogPosition`] `(segment_id, offset)` orders every record; each segment remembers which
//! tables wrote to it (its *dirty* set) and is released — recycled or deleted — once every one of
//! them has flushed past it ([`Commitlog::discard_completed`]). The on-disk format is described in
//! `segment.rs`; replay rules in [`replay`].
//!
//! # Durability
//!
//! Records are copied into a `MAP_SHARED` mapping of a segment file that was created at full size
//! and zero-filled with real writes (or recycled from such a file), so no append ever extends a
//! file, allocates blocks, or can fail with SIGBUS on a full disk. Syncing is `msync(MS_SYNC)` on
//! the written range, which on Linux is an `fdatasync` of that range. Creating, recycling
//! (renaming) and deleting a segment is followed by an fsync of the directory.
//!
//! * [`SyncMode::Periodic`] (`commitlog_sync: periodic`, `commitlog_sync_period_in_ms`):
//!   [`Commitlog::append`] returns once the record is in the mapping, i.e. in the kernel page
//!   cache. **A process crash (panic, SIGKILL, OOM kill) loses nothing that `append` returned
//!   for**: the pages belong to the file, not to the process. **An OS crash or power loss loses
//!   at most the records appended since the last sync**, which happens every `period` on a
//!   background thread (and on [`Commitlog::sync`] and [`Commitlog::close`]).
//! * [`SyncMode::Batch`] (`commitlog_sync: batch`): `append` returns only after the record and
//!   every record before it have been msynced. **Nothing `append` returned for is lost by a
//!   process crash, OS crash, or power loss** (given a disk that honours flushes). Concurrent
//!   appenders share syncs (group commit): whichever appender finds no sync running becomes the
//!   leader, syncs everything written so far, and wakes the others whose records it covered.
//!
//! Segments are prefaulted writable (`MADV_POPULATE_WRITE`) by the thread that prepares them, so
//! an append is a mutex plus a memory copy, with no page fault on the append path.
//!
//! In both modes a record whose `append` had not returned may or may not be replayed, and a crash
//! during a write leaves a *torn tail* that replay detects by checksum and drops.
//!
//! # Invariants
//!
//! * Records occupy `[header_size, end)` of a segment contiguously, in position order, and never
//!   span segments. A record is copied into the mapping while its appender holds the allocation
//!   lock, header (length + CRC) last, so at any instant — in particular at a SIGKILL — the
//!   mapping holds a gap-free prefix of records followed by at most one incomplete record whose
//!   length word is still 0 or whose checksums fail. (Copying outside the lock would be faster for
//!   large records but could leave an incomplete record *before* an acknowledged one, hiding it
//!   from replay.)
//! * Every append writes a zero length word after its record, so replay finds a clean end even in
//!   a recycled file full of stale records (which cannot validate anyway: checksums are seeded
//!   with the segment id).
//! * Segment ids only grow: a new commitlog starts above every id in the directory, and ids are
//!   assigned by the one thread that prepares segments, in the order they become active.
//! * The directory belongs to the commitlog: nothing else may truncate or write its files while
//!   they are mapped.

mod replay;
mod segment;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, OptionError, Result};
use crate::fault::{Faults, Operation};
use crate::io::Wait;
use segment::{
    header_crc, list_dir, payload_crc, sync_dir, FileKind, Recycled, Segment, END_MARKER,
    HEADER_SIZE, RECORD_OVERHEAD,
};

pub use replay::{replay, ReplayProblem, ReplayReport};

/// Path of segment `id` in `dir` (names a segment in reports).
pub fn segment_path(dir: &Path, id: u64) -> PathBuf {
    segment::segment_path(dir, id)
}

/// Identifies a table (its schema UUID as a number).
pub type TableId = u128;

/// Default `commitlog_segment_size_in_mb`: 32 MiB.
pub const DEFAULT_SEGMENT_SIZE: u64 = 32 << 20;
/// Default `commitlog_sync_period_in_ms`: 10 s.
pub const DEFAULT_SYNC_PERIOD: Duration = Duration::from_secs(10);
/// Smallest accepted segment size.
pub const MIN_SEGMENT_SIZE: u64 = 4096;

/// When appended records are made durable. See the module docs for exactly what survives what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Append returns once the record is in the page cache; a background thread syncs every
    /// `period` (`commitlog_sync_period_in_ms`).
    Periodic { period: Duration },
    /// Append returns once the record is durable; concurrent appends share syncs.
    Batch,
}

/// Commitlog settings.
#[derive(Debug, Clone)]
pub struct CommitlogConfig {
    /// Directory holding the segment files (created if missing).
    pub dir: PathBuf,
    /// Size of every segment file (`commitlog_segment_size_in_mb`); the largest record is this
    /// minus 40 bytes of headers.
    pub segment_size: u64,
    /// Durability mode (`commitlog_sync`).
    pub sync: SyncMode,
    /// Released segment files kept for reuse instead of deleted.
    pub max_recycled_segments: usize,
    /// Where write and sync failures are reported (`commit_failure_policy`); without it a
    /// failed sync stops the commitlog, as the policy `stop_commit` does.
    pub faults: Option<Arc<Faults>>,
}

impl CommitlogConfig {
    /// The defaults: 32 MiB segments, periodic sync every 10 s, up to 2 recycled segments.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        CommitlogConfig {
            dir: dir.into(),
            segment_size: DEFAULT_SEGMENT_SIZE,
            sync: SyncMode::Periodic {
                period: DEFAULT_SYNC_PERIOD,
            },
            max_recycled_segments: 2,
            faults: None,
        }
    }
}

/// A point in the log: records are ordered by `(segment_id, offset)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct CommitlogPosition {
    pub segment_id: u64,
    pub offset: u32,
}

impl CommitlogPosition {
    /// Before every record (segment ids start at 1).
    pub const NONE: CommitlogPosition = CommitlogPosition {
        segment_id: 0,
        offset: 0,
    };
}

/// Counters since open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitlogStats {
    /// Record bytes appended, record headers and checksums included.
    pub bytes_written: u64,
    /// Records appended.
    pub records: u64,
    /// msync rounds that made new records durable.
    pub syncs: u64,
    /// Batch mode: the most records one sync made durable.
    pub max_group_size: u64,
    /// Batch mode: records made durable by syncs (`/ syncs` = mean group size).
    pub total_grouped_records: u64,
    /// Segments holding records that may still be needed: the active one plus released-pending.
    pub active_segments: usize,
    /// Released segment files waiting for reuse.
    pub recycled_segments: usize,
    /// Bytes of all segment files this commitlog manages on disk (including replayed ones not
    /// yet released and the pre-created spare).
    pub disk_bytes: u64,
}

/// Per-segment dirty set: table → start offset of its last record in the segment.
type DirtyMap = HashMap<TableId, u32, BuildHasherDefault<TableIdHasher>>;

/// Hasher for table ids: they are UUIDs, already uniformly random, so a multiply-fold is enough
/// and keeps the per-append dirty-set update to a few nanoseconds (SipHash would dominate).
#[derive(Default)]
struct TableIdHasher(u64);

impl Hasher for TableIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }
}

/// The commitlog. Cheap to share behind an `Arc`; all methods take `&self`.
pub struct Commitlog {
    inner: Arc<Inner>,
    threads: Vec<JoinHandle<()>>,
}

struct Inner {
    dir: PathBuf,
    segment_size: u32,
    mode: SyncMode,
    max_recycled: usize,
    /// The short lock every append takes: reservation, copy, dirty set, counters.
    alloc: Mutex<Alloc>,
    /// Id of the active segment, read without the lock to pre-compute checksums.
    active_id: AtomicU64,
    /// Switched-away segments and released files.
    segments: Mutex<Segments>,
    /// Hand-off of the pre-created next segment.
    spare: Mutex<Spare>,
    spare_cv: Condvar,
    /// Group-commit state.
    sync: Mutex<SyncState>,
    sync_cv: Condvar,
    /// Set when an msync failed (or a segment could not be made) and `commit_failure_policy`
    /// stops commits: after a failed fsync the kernel may have dropped the dirty pages, so
    /// nothing written since can be promised durable; every later append fails.
    poisoned: AtomicBool,
    /// Where failures are reported (see [`CommitlogConfig::faults`]).
    faults: Option<Arc<Faults>>,
    shutdown: Mutex<bool>,
    shutdown_cv: Condvar,
    next_id: AtomicU64,
    disk_bytes: AtomicU64,
    syncs: AtomicU64,
    max_group: AtomicU64,
    grouped: AtomicU64,
    /// Record count covered by the last sync (only the current sync leader touches it).
    synced_records: AtomicU64,
}

struct Alloc {
    active: Arc<Segment>,
    offset: u32,
    dirty: DirtyMap,
    /// Switched-away segments whose tail may not be msynced yet, with their end offsets.
    unsynced: Vec<(Arc<Segment>, u32)>,
    records: u64,
    bytes: u64,
}

struct Closed {
    seg: Arc<Segment>,
    dirty: DirtyMap,
}

struct Segments {
    closed: BTreeMap<u64, Closed>,
    pool: Vec<Recycled>,
    /// Segment files found at open, to be released by `release_replayed`: (path, size).
    replayed: Vec<(PathBuf, u64)>,
}

struct Spare {
    ready: Option<Segment>,
    failed: Option<Error>,
    /// The last attempt failed: wait for an appender to ask before trying again.
    backoff: bool,
    shutdown: bool,
}

struct SyncState {
    synced: CommitlogPosition,
    leader: bool,
}

impl Commitlog {
    /// Opens a commitlog in `config.dir`, starting a new segment with an id above every segment
    /// file already there. Existing segments are left untouched: replay them with [`replay`],
    /// then call [`Commitlog::release_replayed`].
    pub fn open(config: CommitlogConfig) -> Result<Commitlog> {
        let segment_size = validate(&config)?;
        let dir = config.dir.clone();
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;

        let mut max_id = 0;
        let mut replayed = Vec::new();
        let mut pool = Vec::new();
        let mut disk_bytes = 0;
        let mut removed = false;
        let mut listed = list_dir(&dir)?;
        listed.sort_by_key(|l| match l.kind {
            FileKind::Segment(id) | FileKind::Recycled(id) => id,
            _ => 0,
        });
        for l in listed {
            match l.kind {
                FileKind::Segment(id) => {
                    max_id = max_id.max(id);
                    let len = std::fs::metadata(&l.path)
                        .map_err(|e| Error::io(&l.path, e))?
                        .len();
                    disk_bytes += len;
                    replayed.push((l.path, len));
                }
                FileKind::Recycled(id) => {
                    max_id = max_id.max(id);
                    // Adopt spare files left by a previous run; drop what does not fit.
                    if pool.len() < config.max_recycled_segments {
                        if let Ok(r) = Segment::map_for_recycling(l.path.clone(), segment_size) {
                            disk_bytes += u64::from(segment_size);
                            pool.push(r);
                            continue;
                        }
                    }
                    remove_logged(&l.path);
                    removed = true;
                }
                FileKind::Temporary => {
                    // A segment whose creation was interrupted; never renamed, never read.
                    remove_logged(&l.path);
                    removed = true;
                }
                FileKind::Other => {}
            }
        }
        if removed {
            sync_dir(&dir)?;
        }

        let first_id = max_id + 1;
        let first = match pool.pop() {
            Some(r) => Segment::recycle(&dir, r, first_id)?,
            None => {
                disk_bytes += u64::from(segment_size);
                Segment::create(&dir, first_id, segment_size)?
            }
        };
        first.prefault();
        let inner = Arc::new(Inner {
            dir,
            segment_size,
            mode: config.sync,
            max_recycled: config.max_recycled_segments,
            active_id: AtomicU64::new(first_id),
            alloc: Mutex::new(Alloc {
                active: Arc::new(first),
                offset: HEADER_SIZE,
                dirty: DirtyMap::default(),
                unsynced: Vec::new(),
                records: 0,
                bytes: 0,
            }),
            segments: Mutex::new(Segments {
                closed: BTreeMap::new(),
                pool,
                replayed,
            }),
            spare: Mutex::new(Spare {
                ready: None,
                failed: None,
                backoff: false,
                shutdown: false,
            }),
            spare_cv: Condvar::new(),
            sync: Mutex::new(SyncState {
                synced: CommitlogPosition {
                    segment_id: first_id,
                    offset: HEADER_SIZE,
                },
                leader: false,
            }),
            sync_cv: Condvar::new(),
            poisoned: AtomicBool::new(false),
            faults: config.faults.clone(),
            shutdown: Mutex::new(false),
            shutdown_cv: Condvar::new(),
            next_id: AtomicU64::new(first_id + 1),
            disk_bytes: AtomicU64::new(disk_bytes),
            syncs: AtomicU64::new(0),
            max_group: AtomicU64::new(0),
            grouped: AtomicU64::new(0),
            synced_records: AtomicU64::new(0),
        });

        let mut threads = Vec::new();
        let spare_inner = Arc::clone(&inner);
        threads.push(
            std::thread::Builder::new()
                .name("commitlog-spare".into())
                .spawn(move || spare_inner.spare_loop())
                .map_err(|e| Error::io(&inner.dir, e))?,
        );
        if let SyncMode::Periodic { period } = inner.mode {
            let sync_inner = Arc::clone(&inner);
            let spawned = std::thread::Builder::new()
                .name("commitlog-sync".into())
                .spawn(move || sync_inner.periodic_loop(period));
            match spawned {
                Ok(t) => threads.push(t),
                Err(e) => {
                    let log = Commitlog {
                        inner: Arc::clone(&inner),
                        threads,
                    };
                    drop(log);
                    return Err(Error::io(&inner.dir, e));
                }
            }
        }
        Ok(Commitlog { inner, threads })
    }

    /// Appends one record and returns its start position. `tables` are the tables the record
    /// holds data for; the segment stays until each of them has flushed past it.
    ///
    /// Returns once the record is in the page cache (Periodic) or durable (Batch); see the module
    /// docs. Fails with [`Error::InvalidMutation`] for an empty or too-large payload, with an I/O
    /// error when a new segment cannot be created (the append can be retried), and with
    /// [`Error::CommitlogStopped`] once a failure stopped the commitlog. Under [`Wait::Never`] an append that would wait
    /// — for its sync (Batch), or for a segment not prepared yet — is [`Error::WouldBlock`],
    /// with nothing written.
    pub fn append(
        &self,
        payload: &[u8],
        tables: &[TableId],
        wait: Wait,
    ) -> Result<CommitlogPosition> {
        let inner = &*self.inner;
        if payload.is_empty() {
            return Err(Error::InvalidMutation("empty commitlog record"));
        }
        let max_payload = (inner.segment_size - HEADER_SIZE - RECORD_OVERHEAD) as usize;
        if payload.len() > max_payload {
            return Err(Error::InvalidMutation(
                "mutation is larger than a commitlog segment (commitlog_segment_size_in_mb)",
            ));
        }
        if inner.poisoned.load(Ordering::Relaxed) {
            return Err(inner.stopped());
        }
        if inner.mode == SyncMode::Batch {
            // The append waits for its sync; refuse before writing anything.
            wait.permit()?;
        }
        // `payload.len() <= max_payload < u32::MAX`, so these casts are exact.
        let len = payload.len() as u32;
        let record_len = len + RECORD_OVERHEAD;

        // Checksums depend on the segment id; compute them before taking the lock for the segment
        // that is active now, and redo them under the lock only if a switch happened meanwhile.
        let mut crc_id = inner.active_id.load(Ordering::Relaxed);
        let mut crcs = (header_crc(crc_id, len), payload_crc(crc_id, payload));

        let (pos, end) = {
            let mut a = inner.alloc.lock();
            if u64::from(a.offset) + u64::from(record_len) > u64::from(inner.segment_size) {
                inner.switch_segment(&mut a, wait)?;
            }
            if a.active.id != crc_id {
                crc_id = a.active.id;
                crcs = (header_crc(crc_id, len), payload_crc(crc_id, payload));
            }
            let off = a.offset;
            // Fits: checked above against the segment size, which is at most u32::MAX.
            let end = off + record_len;
            let seg = &a.active;
            // Order matters for crash consistency (see the module invariants): the end marker
            // and body first, the length word last, so an interrupted copy reads as a clean end.
            if u64::from(end) + u64::from(END_MARKER) <= u64::from(inner.segment_size) {
                seg.write_at(end, &[0u8; END_MARKER as usize]);
            }
            seg.write_at(off + 8, payload);
            seg.write_at(off + 8 + len, &crcs.1.to_le_bytes());
            fence(Ordering::Release);
            let mut head = [0u8; 8];
            head[..4].copy_from_slice(&len.to_le_bytes());
            head[4..].copy_from_slice(&crcs.0.to_le_bytes());
            seg.write_at(off, &head);

            let id = seg.id;
            a.offset = end;
            for &t in tables {
                a.dirty.insert(t, off);
            }
            a.records += 1;
            a.bytes += u64::from(record_len);
            (
                CommitlogPosition {
                    segment_id: id,
                    offset: off,
                },
                CommitlogPosition {
                    segment_id: id,
                    offset: end,
                },
            )
        };
        if inner.mode == SyncMode::Batch {
            inner.sync_upto(end)?;
        }
        Ok(pos)
    }

    /// The position the next record would get: every record whose `append` completed before this
    /// call is before it.
    pub fn current_position(&self) -> CommitlogPosition {
        let a = self.inner.alloc.lock();
        CommitlogPosition {
            segment_id: a.active.id,
            offset: a.offset,
        }
    }

    /// Makes every record appended so far durable.
    pub fn sync(&self) -> Result<()> {
        let target = self.current_position();
        self.inner.sync_upto(target)
    }

    /// `table` has flushed everything before `upto`: segments whose records for it all precede
    /// `upto` no longer need it, and segments nobody needs any more are released (recycled up to
    /// `max_recycled_segments`, else deleted). The active segment is never released. Release
    /// failures are logged; the file is then left for a later replay to skip over.
    pub fn discard_completed(&self, table: TableId, upto: CommitlogPosition) {
        let clean = |seg_id: u64, last: u32| {
            seg_id < upto.segment_id || (seg_id == upto.segment_id && last < upto.offset)
        };
        self.inner.mark_clean(|seg_id, dirty| {
            if let Some(&last) = dirty.get(&table) {
                if clean(seg_id, last) {
                    dirty.remove(&table);
                }
            }
        });
    }

    /// `table` was dropped: no segment needs to be kept for it.
    pub fn forget_table(&self, table: TableId) {
        self.inner.mark_clean(|_, dirty| {
            dirty.remove(&table);
        });
    }

    /// Releases (recycles or deletes) every segment file that existed when the commitlog was
    /// opened. Call after replaying them.
    pub fn release_replayed(&self) {
        let inner = &*self.inner;
        let replayed = std::mem::take(&mut inner.segments.lock().replayed);
        if replayed.is_empty() {
            return;
        }
        for (path, len) in replayed {
            let room = inner.segments.lock().pool.len() < inner.max_recycled;
            if room && len == u64::from(inner.segment_size) {
                let to = segment::recycled_path(&inner.dir, file_id(&path));
                let recycled = Segment::map_for_recycling(path.clone(), inner.segment_size)
                    .and_then(|r| r.rename(to));
                match recycled {
                    Ok(r) => {
                        inner.segments.lock().pool.push(r);
                        continue;
                    }
                    Err(e) => tracing::warn!("cannot recycle commitlog segment: {e}"),
                }
            }
            if remove_logged(&path) {
                inner.disk_bytes.fetch_sub(len, Ordering::Relaxed);
            }
        }
        if let Err(e) = sync_dir(&inner.dir) {
            tracing::warn!("{e}");
        }
    }

    /// Counters and sizes.
    pub fn stats(&self) -> CommitlogStats {
        let inner = &*self.inner;
        let (records, bytes) = {
            let a = inner.alloc.lock();
            (a.records, a.bytes)
        };
        let (closed, pool) = {
            let s = inner.segments.lock();
            (s.closed.len(), s.pool.len())
        };
        CommitlogStats {
            bytes_written: bytes,
            records,
            syncs: inner.syncs.load(Ordering::Relaxed),
            max_group_size: inner.max_group.load(Ordering::Relaxed),
            total_grouped_records: inner.grouped.load(Ordering::Relaxed),
            active_segments: closed + 1,
            recycled_segments: pool,
            disk_bytes: inner.disk_bytes.load(Ordering::Relaxed),
        }
    }

    /// Test helper: waits until the spare thread has a segment ready (or failed).
    #[cfg(test)]
    fn wait_for_spare(&self) {
        let mut s = self.inner.spare.lock();
        while s.ready.is_none() && s.failed.is_none() {
            self.inner.spare_cv.wait(&mut s);
        }
    }

    /// The directory of the segment files.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Syncs everything, stops the background threads, and returns the final sync's result.
    /// (Dropping the commitlog does the same and logs a failure.)
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        let result = if self.inner.poisoned.load(Ordering::Relaxed) {
            Err(self.inner.stopped())
        } else {
            self.sync()
        };
        *self.inner.shutdown.lock() = true;
        self.inner.shutdown_cv.notify_all();
        {
            let mut s = self.inner.spare.lock();
            s.shutdown = true;
        }
        self.inner.spare_cv.notify_all();
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                tracing::error!("a commitlog thread panicked");
            }
        }
        // The spare segment holds no records: keep it as a recycled file for the next open.
        let spare = self.inner.spare.lock().ready.take();
        if let Some(seg) = spare {
            match seg.to_recycled(&self.inner.dir) {
                Ok(_) => {}
                Err(e) => tracing::warn!("{e}"),
            }
            if let Err(e) = sync_dir(&self.inner.dir) {
                tracing::warn!("{e}");
            }
        }
        result
    }
}

impl Drop for Commitlog {
    fn drop(&mut self) {
        if self.threads.is_empty() {
            return; // closed already
        }
        if let Err(e) = self.shutdown() {
            tracing::error!("commitlog close: {e}");
        }
    }
}

impl Inner {
    /// Reports a write or sync failure; stops the commitlog when the policy says so. Without a
    /// policy (no [`CommitlogConfig::faults`]) it stops when `otherwise` (a failed sync: what
    /// was written since the last good one can no longer be promised durable).
    fn failed(&self, e: &Error, otherwise: bool) -> bool {
        let stop = match &self.faults {
            Some(f) => f
                .report(Operation::Commit, e)
                .is_none_or(|r| r.stop_commits || r.die),
            None => otherwise,
        };
        if stop {
            self.poisoned.store(true, Ordering::Relaxed);
        }
        stop
    }

    /// The error of an append refused after the commitlog stopped.
    fn stopped(&self) -> Error {
        Error::CommitlogStopped {
            dir: self.dir.clone(),
        }
    }

    /// Makes the pre-created spare the active segment. Called with the allocation lock held, so
    /// appenders wait only if the spare is not ready yet (creation slower than filling), and
    /// only when `wait` allows.
    fn switch_segment(&self, a: &mut Alloc, wait: Wait) -> Result<()> {
        let next = self.take_spare(wait)?;
        let id = next.id;
        let old = std::mem::replace(&mut a.active, Arc::new(next));
        let old_end = std::mem::replace(&mut a.offset, HEADER_SIZE);
        let dirty = std::mem::take(&mut a.dirty);
        a.unsynced.push((Arc::clone(&old), old_end));
        self.active_id.store(id, Ordering::Relaxed);
        self.segments
            .lock()
            .closed
            .insert(old.id, Closed { seg: old, dirty });
        Ok(())
    }

    /// Waits for the spare thread's segment (or its creation error).
    ///
    /// After a failed attempt the spare thread waits to be asked again rather than retrying in a
    /// loop, so a full or broken disk costs one attempt per append that needs a segment. A failure
    /// left from an earlier attempt is stale (the disk may have recovered since): it is dropped
    /// and a fresh attempt requested, whose result this appender gets.
    fn take_spare(&self, wait: Wait) -> Result<Segment> {
        let mut s = self.spare.lock();
        let mut requested = false;
        loop {
            if let Some(seg) = s.ready.take() {
                self.spare_cv.notify_all(); // the slot is free: prepare the next one
                return Ok(seg);
            }
            if let Some(e) = s.failed.take() {
                if requested {
                    return Err(e);
                }
            }
            if s.shutdown {
                return Err(Error::Closed);
            }
            if s.backoff && !requested {
                s.backoff = false;
                requested = true;
                self.spare_cv.notify_all();
            }
            // Nothing is written yet: a caller that may not wait retries where it may.
            wait.permit()?;
            self.spare_cv.wait(&mut s);
        }
    }

    /// Keeps one spare segment ready: recycled if a released file is available, else created.
    fn spare_loop(&self) {
        loop {
            {
                let mut s = self.spare.lock();
                while !s.shutdown && (s.ready.is_some() || s.failed.is_some() || s.backoff) {
                    self.spare_cv.wait(&mut s);
                }
                if s.shutdown {
                    return;
                }
            }
            let result = self.prepare_segment();
            let mut s = self.spare.lock();
            match result {
                Ok(seg) => {
                    // At shutdown too: close() turns an unused spare into a recycled file.
                    s.ready = Some(seg);
                }
                Err(e) => {
                    tracing::error!("cannot prepare commitlog segment: {e}");
                    if self.failed(&e, false) {
                        tracing::error!("commitlog stopped: refusing further appends");
                    }
                    s.failed = Some(e);
                    s.backoff = true;
                }
            }
            drop(s);
            self.spare_cv.notify_all();
        }
    }

    fn prepare_segment(&self) -> Result<Segment> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let recycled = self.segments.lock().pool.pop();
        let seg = match recycled {
            Some(r) => {
                let path = r.path.clone();
                Segment::recycle(&self.dir, r, id).inspect_err(|_| {
                    // A file we cannot rewrite is not worth keeping.
                    if remove_logged(&path) {
                        self.disk_bytes
                            .fetch_sub(u64::from(self.segment_size), Ordering::Relaxed);
                    }
                })
            }
            None => {
                let seg = Segment::create(&self.dir, id, self.segment_size)?;
                self.disk_bytes
                    .fetch_add(u64::from(self.segment_size), Ordering::Relaxed);
                Ok(seg)
            }
        }?;
        seg.prefault();
        Ok(seg)
    }

    fn periodic_loop(&self, period: Duration) {
        let mut stop = self.shutdown.lock();
        loop {
            if *stop {
                return;
            }
            self.shutdown_cv.wait_for(&mut stop, period);
            if *stop {
                return;
            }
            let target = {
                let a = self.alloc.lock();
                CommitlogPosition {
                    segment_id: a.active.id,
                    offset: a.offset,
                }
            };
            let r = parking_lot::MutexGuard::unlocked(&mut stop, || self.sync_upto(target));
            if let Err(e) = r {
                tracing::error!("commitlog periodic sync failed: {e}");
            }
        }
    }

    /// Returns once everything before `target` is durable. Group commit: if no sync is running
    /// this caller becomes the leader and syncs everything written so far (which covers `target`
    /// and every record of the appenders waiting meanwhile); otherwise it waits for the leader.
    fn sync_upto(&self, target: CommitlogPosition) -> Result<()> {
        let mut s = self.sync.lock();
        loop {
            if self.poisoned.load(Ordering::Relaxed) {
                return Err(self.stopped());
            }
            if s.synced >= target {
                return Ok(());
            }
            if s.leader {
                self.sync_cv.wait(&mut s);
                continue;
            }
            s.leader = true;
            let result = parking_lot::MutexGuard::unlocked(&mut s, || self.sync_all_written());
            s.leader = false;
            match result {
                Ok(pos) => {
                    s.synced = s.synced.max(pos);
                    self.sync_cv.notify_all();
                }
                Err(e) => {
                    if self.failed(&e, true) {
                        tracing::error!("commitlog sync failed, refusing further appends: {e}");
                    } else {
                        tracing::error!("commitlog sync failed: {e}");
                    }
                    self.sync_cv.notify_all();
                    return Err(e);
                }
            }
        }
    }

    /// msyncs every record written so far; returns the position it made durable. Only the sync
    /// leader calls this.
    fn sync_all_written(&self) -> Result<CommitlogPosition> {
        let (active, offset, old, records) = {
            let mut a = self.alloc.lock();
            (
                Arc::clone(&a.active),
                a.offset,
                std::mem::take(&mut a.unsynced),
                a.records,
            )
        };
        let pos = CommitlogPosition {
            segment_id: active.id,
            offset,
        };
        let before = self.synced_records.load(Ordering::Relaxed);
        if records == before && old.is_empty() {
            return Ok(pos);
        }
        for (seg, end) in &old {
            seg.flush_upto(*end)?;
        }
        active.flush_upto(offset)?;
        self.synced_records.store(records, Ordering::Relaxed);
        self.syncs.fetch_add(1, Ordering::Relaxed);
        if self.mode == SyncMode::Batch {
            let group = records - before;
            self.grouped.fetch_add(group, Ordering::Relaxed);
            self.max_group.fetch_max(group, Ordering::Relaxed);
        }
        Ok(pos)
    }

    /// Applies `update` to the dirty set of the active and every closed segment, then releases
    /// the closed segments nobody needs any more.
    fn mark_clean(&self, mut update: impl FnMut(u64, &mut DirtyMap)) {
        // Lock order: alloc before segments (as in switch_segment).
        let mut a = self.alloc.lock();
        let id = a.active.id;
        update(id, &mut a.dirty);
        let mut segs = self.segments.lock();
        drop(a);
        let mut released = Vec::new();
        for (&id, c) in segs.closed.iter_mut() {
            update(id, &mut c.dirty);
            if c.dirty.is_empty() {
                released.push(id);
            }
        }
        let released: Vec<Arc<Segment>> = released
            .into_iter()
            .filter_map(|id| segs.closed.remove(&id).map(|c| c.seg))
            .collect();
        drop(segs);
        if !released.is_empty() {
            self.release(released);
        }
    }

    /// Recycles (up to the pool limit) or deletes released segments, then fsyncs the directory.
    fn release(&self, released: Vec<Arc<Segment>>) {
        for seg in released {
            let room = self.segments.lock().pool.len() < self.max_recycled;
            if room {
                match seg.to_recycled(&self.dir) {
                    Ok(r) => {
                        self.segments.lock().pool.push(r);
                        continue;
                    }
                    Err(e) => tracing::warn!("cannot recycle commitlog segment: {e}"),
                }
            }
            if remove_logged(&seg.path) {
                self.disk_bytes
                    .fetch_sub(u64::from(seg.size), Ordering::Relaxed);
            }
        }
        if let Err(e) = sync_dir(&self.dir) {
            tracing::warn!("{e}");
        }
        self.spare_cv.notify_all();
    }
}

fn validate(config: &CommitlogConfig) -> Result<u32> {
    let invalid = |option, message: String| Error::Option(OptionError::Invalid { option, message });
    if config.segment_size < MIN_SEGMENT_SIZE || config.segment_size > u64::from(u32::MAX) {
        return Err(invalid(
            "commitlog_segment_size_in_mb",
            format!(
                "commitlog segment size must be between {MIN_SEGMENT_SIZE} bytes and 4 GiB (got {})",
                config.segment_size
            ),
        ));
    }
    if let SyncMode::Periodic { period } = config.sync {
        if period.is_zero() {
            return Err(invalid(
                "commitlog_sync_period_in_ms",
                "commitlog_sync_period_in_ms must be positive".into(),
            ));
        }
    }
    // Checked against u32::MAX above.
    Ok(config.segment_size as u32)
}

/// Id from a segment file name (0 if it does not parse, which `open` never lists).
fn file_id(path: &Path) -> u64 {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(segment::classify)
        .and_then(|k| match k {
            FileKind::Segment(id) | FileKind::Recycled(id) => Some(id),
            _ => None,
        })
        .unwrap_or(0)
}

/// Deletes a file, logging a failure; true when it is gone.
fn remove_logged(path: &Path) -> bool {
    match std::fs::remove_file(path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => {
            tracing::warn!("cannot delete {}: {e}", path.display());
            false
        }
    }
}
