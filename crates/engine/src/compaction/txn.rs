//! The compaction transaction log: how a job swaps its inputs for its outputs atomically on
//! disk, so that a crash at any instant leaves either the inputs or the outputs live.
//!
//! A job appends records to `txn-<id>.log` in the table directory, each fsynced before the
//! step it announces:
//! - `Add(gen)` before the output `gen` is created: if the job dies before committing it,
//!   startup deletes that output even if its TOC made it look complete;
//! - `Commit { outputs, removed }` once the outputs are complete and durable: from then on the
//!   outputs are live and the removed inputs are dead. Incremental jobs commit once per output
//!   fragment, releasing the inputs that fragment exhausted; others commit once at the end.
//!
//! Record: `u32 body_len | u32 crc32(body) | body`, little-endian; body = tag byte + uvarints.
//! A torn or corrupt tail ends the log: what follows was never acknowledged.
//!
//! Startup ([`recover`]) applies every log it finds: deletes uncommitted outputs, deletes
//! committed removals (they may still exist if readers held them when the process died),
//! then deletes the log. At run time the log is deleted once every removed input's files are
//! gone ([`TxnLog`] is dropped when the last holder drops), because until then a crash would
//! otherwise bring those inputs back next to the outputs — and outputs may have purged the
//! tombstones that kept the inputs' old data dead.

use crate::error::{IoResultExt, Result};
use crate::model::codec::{put_uvarint, DecodeResult, Decoder};
use crate::sstable::format::delete_sstable_files;
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

const TAG_ADD: u8 = 1;
const TAG_COMMIT: u8 = 2;
const PREFIX: &str = "txn-";
const SUFFIX: &str = ".log";

/// An open transaction log. Dropping it deletes the file (see the module docs for when that
/// is safe: hold it until the removed inputs' files are gone).
pub struct TxnLog {
    path: PathBuf,
    dir: PathBuf,
    file: Mutex<File>,
}

impl TxnLog {
    /// Creates `txn-<id>.log` in `dir`, durably.
    pub fn create(dir: &Path, id: u64) -> Result<TxnLog> {
        let path = dir.join(format!("{PREFIX}{id}{SUFFIX}"));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_path(&path)?;
        crate::io::sync_dir(dir)?;
        Ok(TxnLog {
            path,
            dir: dir.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Announces output `generation`, before its first file is created.
    pub fn add(&self, generation: u64) -> Result<()> {
        let mut body = vec![TAG_ADD];
        put_uvarint(&mut body, generation);
        self.append(&body)
    }

    /// Makes `outputs` live and `removed` dead, durably.
    pub fn commit(&self, outputs: &[u64], removed: &[u64]) -> Result<()> {
        let mut body = vec![TAG_COMMIT];
        for list in [outputs, removed] {
            put_uvarint(&mut body, list.len() as u64);
            for g in list {
                put_uvarint(&mut body, *g);
            }
        }
        self.append(&body)
    }

    fn append(&self, body: &[u8]) -> Result<()> {
        let mut rec = Vec::with_capacity(body.len() + 8);
        rec.extend_from_slice(&(body.len() as u32).to_le_bytes());
        rec.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        rec.extend_from_slice(body);
        let mut f = self.file.lock();
        f.write_all(&rec).with_path(&self.path)?;
        f.sync_data().with_path(&self.path)
    }
}

impl Drop for TxnLog {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(path = %self.path.display(), "could not remove compaction log: {e}");
        } else if let Err(e) = crate::io::sync_dir(&self.dir) {
            tracing::warn!("{e}");
        }
    }
}

/// What one log says.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LogContents {
    /// Outputs announced.
    pub added: BTreeSet<u64>,
    /// Outputs committed.
    pub committed: BTreeSet<u64>,
    /// Inputs committed as removed.
    pub removed: BTreeSet<u64>,
    /// Where a torn or corrupt tail began, if any.
    pub torn_at: Option<u64>,
}

/// Parses a log, stopping at the first torn or corrupt record.
pub fn parse(buf: &[u8]) -> LogContents {
    let mut out = LogContents::default();
    let mut pos = 0usize;
    while pos < buf.len() {
        let Some(header) = buf.get(pos..pos + 8) else {
            out.torn_at = Some(pos as u64);
            break;
        };
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        let Some(body) = buf.get(pos + 8..pos + 8 + len) else {
            out.torn_at = Some(pos as u64);
            break;
        };
        if crc32fast::hash(body) != crc || apply_record(body, &mut out).is_err() {
            out.torn_at = Some(pos as u64);
            break;
        }
        pos += 8 + len;
    }
    out
}

fn apply_record(body: &[u8], out: &mut LogContents) -> DecodeResult<()> {
    let mut d = Decoder::new(body);
    match d.u8()? {
        TAG_ADD => {
            out.added.insert(d.uvarint()?);
        }
        TAG_COMMIT => {
            for set in [&mut out.committed, &mut out.removed] {
                let n = d.len()?;
                for _ in 0..n {
                    set.insert(d.uvarint()?);
                }
            }
        }
        _ => return Err(d.error(crate::error::CorruptionKind::Invalid("txn record tag"))),
    }
    Ok(())
}

/// Applies and removes every transaction log in `dir` (startup). Returns the logs applied.
pub fn recover(dir: &Path) -> Result<Vec<(PathBuf, LogContents)>> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(dir).with_path(dir)? {
        let entry = entry.with_path(dir)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(PREFIX) && name.ends_with(SUFFIX) {
            logs.push(entry.path());
        }
    }
    logs.sort();
    let mut applied = Vec::new();
    for path in logs {
        let buf = std::fs::read(&path).with_path(&path)?;
        let log = parse(&buf);
        if let Some(at) = log.torn_at {
            tracing::info!(path = %path.display(), offset = at, "compaction log ends in a torn record");
        }
        for g in log.added.difference(&log.committed) {
            tracing::info!(
                generation = g,
                "removing output of an unfinished compaction"
            );
            delete_sstable_files(dir, *g)?;
        }
        for g in &log.removed {
            delete_sstable_files(dir, *g)?;
        }
        crate::io::sync_dir(dir)?;
        std::fs::remove_file(&path).with_path(&path)?;
        crate::io::sync_dir(dir)?;
        applied.push((path, log));
    }
    Ok(applied)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sstable::format::{component_path, Component};

    fn touch_sstable(dir: &Path, gen: u64) {
        for c in Component::ALL {
            std::fs::write(component_path(dir, gen, c), b"x").unwrap();
        }
    }

    fn exists(dir: &Path, gen: u64) -> bool {
        component_path(dir, gen, Component::Toc).exists()
    }

    #[test]
    fn uncommitted_outputs_go_committed_removals_go() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for g in [1, 2, 3, 4, 5] {
            touch_sstable(d, g);
        }
        let log = TxnLog::create(d, 7).unwrap();
        log.add(4).unwrap();
        log.commit(&[4], &[1]).unwrap();
        log.add(5).unwrap();
        std::mem::forget(log); // a crash: the log stays
        let applied = recover(d).unwrap();
        assert_eq!(applied.len(), 1);
        assert!(!exists(d, 1), "committed removal");
        assert!(exists(d, 2) && exists(d, 3), "inputs not yet released stay");
        assert!(exists(d, 4), "committed output stays");
        assert!(!exists(d, 5), "uncommitted output goes");
        assert!(recover(d).unwrap().is_empty(), "the log is gone");
    }

    #[test]
    fn every_torn_prefix_is_a_consistent_state() {
        let dir = tempfile::tempdir().unwrap();
        let log = TxnLog::create(dir.path(), 1).unwrap();
        log.add(10).unwrap();
        log.add(11).unwrap();
        log.commit(&[10, 11], &[1, 2, 3]).unwrap();
        let full = std::fs::read(log.path()).unwrap();
        drop(log);
        let whole = parse(&full);
        assert_eq!(whole.committed, BTreeSet::from([10, 11]));
        assert_eq!(whole.removed, BTreeSet::from([1, 2, 3]));
        assert_eq!(whole.torn_at, None);
        for cut in 0..full.len() {
            let p = parse(&full[..cut]);
            // Either the commit is wholly there or not at all.
            assert!(p.committed.is_empty() && p.removed.is_empty(), "cut {cut}");
        }
        for i in 0..full.len() {
            let mut bad = full.clone();
            bad[i] ^= 0x40;
            let p = parse(&bad);
            assert!(
                (p.committed.is_empty() && p.removed.is_empty()) || p == whole,
                "flip at {i}"
            );
        }
    }

    #[test]
    fn dropping_the_log_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = TxnLog::create(dir.path(), 3).unwrap();
        let path = log.path().to_path_buf();
        assert!(path.exists());
        drop(log);
        assert!(!path.exists());
    }
}
