//! Segment files: on-disk format, creation (zero-filled), recycling, and the mapped writer.
//!
//! Layout of `CommitLog-1-<id>.log` (all integers little-endian):
//!
//! ```text
//! header (24 bytes):  magic "CairnCL\0" | u32 version | u64 segment_id | u32 crc32(previous 20 bytes)
//! record:             u32 len | u32 crc32(id ‖ len) | payload[len] | u32 crc32(id ‖ payload)
//! ```
//!
//! `id` is the segment id as 8 little-endian bytes. Seeding both checksums with it is what makes
//! recycling safe: a recycled file keeps the records of its previous life, and none of them can
//! validate under the new id. A length of 0 marks the end of the records; every append writes a
//! zero length word right after its record (the next append overwrites it), so a segment that was
//! switched away from or closed always ends cleanly even when the bytes after it are stale.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use memmap2::{MmapOptions, MmapRaw};

use crate::error::{CorruptionKind, Error, IoResultExt, Result};

/// Magic bytes at the start of every segment.
pub(crate) const MAGIC: [u8; 8] = *b"CairnCL\0";
/// Format version written by this build.
pub(crate) const VERSION: u32 = 1;
/// Bytes taken by the segment header; the first record starts here.
pub(crate) const HEADER_SIZE: u32 = 24;
/// Bytes a record adds around its payload: length, header CRC, payload CRC.
pub(crate) const RECORD_OVERHEAD: u32 = 12;
/// The zero length word written after each record (the clean-end marker).
pub(crate) const END_MARKER: u32 = 4;

const SEGMENT_PREFIX: &str = "CommitLog-1-";
const SEGMENT_SUFFIX: &str = ".log";
/// Released segments waiting for reuse. The name does not match the segment pattern, so replay
/// never reads them, and a crash while one sits here loses nothing (its data was flushed).
const RECYCLED_PREFIX: &str = "Recycled-CommitLog-1-";
const TMP_SUFFIX: &str = ".tmp";

/// File name of segment `id`.
pub(crate) fn segment_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{SEGMENT_PREFIX}{id}{SEGMENT_SUFFIX}"))
}

pub(crate) fn recycled_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{RECYCLED_PREFIX}{id}{SEGMENT_SUFFIX}"))
}

/// What a directory entry is, judged by its name only.
pub(crate) enum FileKind {
    Segment(u64),
    Recycled(u64),
    Temporary,
    Other,
}

pub(crate) fn classify(name: &str) -> FileKind {
    let id_of = |rest: &str| -> Option<u64> {
        let digits = rest.strip_suffix(SEGMENT_SUFFIX)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    };
    if let Some(rest) = name.strip_prefix(RECYCLED_PREFIX) {
        if let Some(id) = id_of(rest) {
            return FileKind::Recycled(id);
        }
    } else if let Some(rest) = name.strip_prefix(SEGMENT_PREFIX) {
        if rest.ends_with(TMP_SUFFIX) {
            return FileKind::Temporary;
        }
        if let Some(id) = id_of(rest) {
            return FileKind::Segment(id);
        }
    }
    FileKind::Other
}

/// One directory entry the commitlog cares about.
pub(crate) struct Listed {
    pub kind: FileKind,
    pub path: PathBuf,
}

/// Lists the commitlog files of `dir` (a missing directory lists as empty).
pub(crate) fn list_dir(dir: &Path) -> Result<Vec<Listed>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.with_path(dir)?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let kind = classify(&name);
        if !matches!(kind, FileKind::Other) {
            out.push(Listed {
                kind,
                path: entry.path(),
            });
        }
    }
    Ok(out)
}

/// fsyncs a directory so that file creations, renames and deletions in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).with_path(dir)
}

pub(crate) fn encode_header(id: u64) -> [u8; HEADER_SIZE as usize] {
    let mut h = [0u8; HEADER_SIZE as usize];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..20].copy_from_slice(&id.to_le_bytes());
    let crc = crc32fast::hash(&h[0..20]);
    h[20..24].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Checks a segment header and returns the segment id it names.
pub(crate) fn decode_header(path: &Path, bytes: &[u8]) -> Result<u64> {
    let bad = |offset: u64, kind| Error::corruption(path, offset, kind);
    if bytes.len() < HEADER_SIZE as usize {
        return Err(bad(bytes.len() as u64, CorruptionKind::Truncated));
    }
    if bytes[0..8] != MAGIC {
        return Err(bad(0, CorruptionKind::BadMagic));
    }
    let stored = read_u32(bytes, 20);
    let actual = crc32fast::hash(&bytes[0..20]);
    if stored != actual {
        return Err(bad(
            20,
            CorruptionKind::ChecksumMismatch {
                expected: stored,
                actual,
            },
        ));
    }
    let version = read_u32(bytes, 8);
    if version != VERSION {
        return Err(bad(8, CorruptionKind::UnsupportedVersion(version)));
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&bytes[12..20]);
    Ok(u64::from_le_bytes(id))
}

/// Little-endian u32 at `at`; callers have checked `at + 4 <= bytes.len()`.
pub(crate) fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(w)
}

/// CRC of the record header: seeded with the segment id so stale records never validate.
pub(crate) fn header_crc(id: u64, len: u32) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&id.to_le_bytes());
    h.update(&len.to_le_bytes());
    h.finalize()
}

/// CRC of a record payload, seeded with the segment id.
pub(crate) fn payload_crc(id: u64, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&id.to_le_bytes());
    h.update(payload);
    h.finalize()
}

/// A segment file mapped read-write for its whole length.
pub(crate) struct Segment {
    pub id: u64,
    pub path: PathBuf,
    /// Shared so a recycled file keeps its mapping across ids (the inode survives the rename).
    map: Arc<MmapRaw>,
    pub size: u32,
    /// Offset up to which records have been msynced (only the syncer advances it).
    synced: AtomicU32,
}

impl Segment {
    /// Creates segment `id` at full size: zero-filled with real writes so every block is
    /// allocated (ENOSPC surfaces here, never as SIGBUS on a mapped write, and later fdatasyncs
    /// are overwrites that need no journal commit), written under a temporary name and renamed
    /// into place only once complete and synced.
    pub fn create(dir: &Path, id: u64, size: u32) -> Result<Segment> {
        let path = segment_path(dir, id);
        let tmp = dir.join(format!("{SEGMENT_PREFIX}{id}{SEGMENT_SUFFIX}{TMP_SUFFIX}"));
        let result = (|| {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&tmp)
                .with_path(&tmp)?;
            let chunk_len = (size as usize).min(1 << 20);
            let mut chunk = vec![0u8; chunk_len];
            chunk[..HEADER_SIZE as usize].copy_from_slice(&encode_header(id));
            let mut left = size as usize;
            while left > 0 {
                let n = left.min(chunk_len);
                file.write_all(&chunk[..n]).with_path(&tmp)?;
                if left == size as usize {
                    // Only the first chunk carries the header.
                    chunk[..HEADER_SIZE as usize].fill(0);
                }
                left -= n;
            }
            file.sync_all().with_path(&tmp)?;
            let map = MmapOptions::new()
                .len(size as usize)
                .map_raw(&file)
                .with_path(&tmp)?;
            fs::rename(&tmp, &path).with_path(&path)?;
            sync_dir(dir)?;
            Ok(map)
        })();
        match result {
            Ok(map) => Ok(Segment {
                id,
                path,
                map: Arc::new(map),
                size,
                synced: AtomicU32::new(HEADER_SIZE),
            }),
            Err(e) => {
                // Best effort: the temporary name is never read, open() also removes leftovers.
                let _ = fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Reuses a released segment file as segment `id`: rewrites the header and the first
    /// record's length word (so the file reads as empty), makes that durable, then renames it.
    pub fn recycle(dir: &Path, from: Recycled, id: u64) -> Result<Segment> {
        let seg = Segment {
            id,
            path: segment_path(dir, id),
            size: from.size,
            map: from.map,
            synced: AtomicU32::new(HEADER_SIZE),
        };
        seg.write_at(0, &encode_header(id));
        seg.write_at(HEADER_SIZE, &[0u8; END_MARKER as usize]);
        seg.map
            .flush_range(0, (HEADER_SIZE + END_MARKER) as usize)
            .with_path(&from.path)?;
        fs::rename(&from.path, &seg.path).with_path(&seg.path)?;
        sync_dir(dir)?;
        Ok(seg)
    }

    /// Faults every page of the mapping in writable, so appends are plain memory copies.
    ///
    /// Without this, the first store to each page of a shared file mapping takes a write fault
    /// whose `page_mkwrite` (on ext4: a journal handle for the mtime update) costs microseconds
    /// and can block for milliseconds behind a journal commit — measured at ~0.4 µs per 150-byte
    /// append plus multi-ms stalls. Done on the spare thread, it moves that cost off the append
    /// path. The pages become dirty, but they are written back once the segment fills (or after
    /// the kernel's dirty-expiry interval), so a busy log writes each page about once.
    /// Best effort: kernels before 5.14 lack MADV_POPULATE_WRITE and keep the fault path.
    pub fn prefault(&self) {
        #[cfg(target_os = "linux")]
        if let Err(e) = self.map.advise(memmap2::Advice::PopulateWrite) {
            tracing::debug!("MADV_POPULATE_WRITE on {}: {e}", self.path.display());
        }
    }

    /// Maps an existing file of the configured size for recycling.
    pub fn map_for_recycling(path: PathBuf, size: u32) -> Result<Recycled> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .with_path(&path)?;
        let len = file.metadata().with_path(&path)?.len();
        if len != u64::from(size) {
            return Err(Error::io(
                &path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "recycled segment has a different size",
                ),
            ));
        }
        let map = MmapOptions::new()
            .len(size as usize)
            .map_raw(&file)
            .with_path(&path)?;
        Ok(Recycled {
            path,
            map: Arc::new(map),
            size,
        })
    }

    /// Renames this (released) segment to its recycled name; the mapping stays valid.
    pub fn to_recycled(&self, dir: &Path) -> Result<Recycled> {
        let to = recycled_path(dir, self.id);
        fs::rename(&self.path, &to).with_path(&to)?;
        Ok(Recycled {
            path: to,
            map: Arc::clone(&self.map),
            size: self.size,
        })
    }

    /// Copies `bytes` into the mapping at `offset`.
    ///
    /// Callers must own the range: record ranges are handed out under the allocation lock and
    /// written while holding it; header ranges are written before the segment is shared.
    pub fn write_at(&self, offset: u32, bytes: &[u8]) {
        let start = offset as usize;
        let end = start.saturating_add(bytes.len());
        if end > self.map.len() {
            // Unreachable by construction (callers reserve within `size`); refuse rather than
            // write out of bounds.
            debug_assert!(false, "commitlog write out of segment bounds");
            return;
        }
        // SAFETY: `map` is a live MAP_SHARED mapping of `map.len()` bytes that this segment keeps
        // alive through its `Arc`, and `start..end` lies inside it (checked above). The file is
        // never truncated while mapped (it is created at full size and only renamed or unlinked,
        // which leaves the mapping intact), so the pages exist. No Rust reference to the mapped
        // memory is ever created — it is only touched through raw pointers and msync — and the
        // callers guarantee that no other thread writes this range concurrently, so this copy
        // cannot alias or race with another write.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.map.as_mut_ptr().add(start),
                bytes.len(),
            );
        }
    }

    /// msyncs (msync(MS_SYNC) = fdatasync of the range on Linux) everything written up to `end`,
    /// plus the end-marker word after it.
    pub fn flush_upto(&self, end: u32) -> Result<()> {
        let start = self.synced.load(Ordering::Acquire);
        if end <= start {
            return Ok(());
        }
        let stop = end.saturating_add(END_MARKER).min(self.size);
        self.map
            .flush_range(start as usize, (stop - start) as usize)
            .with_path(&self.path)?;
        self.synced.store(end, Ordering::Release);
        Ok(())
    }
}

/// A released segment file kept (mapped) for reuse.
pub(crate) struct Recycled {
    pub path: PathBuf,
    map: Arc<MmapRaw>,
    pub size: u32,
}

impl Recycled {
    /// Renames the file (the mapping follows the inode).
    pub fn rename(self, to: PathBuf) -> Result<Recycled> {
        fs::rename(&self.path, &to).with_path(&to)?;
        Ok(Recycled { path: to, ..self })
    }
}
