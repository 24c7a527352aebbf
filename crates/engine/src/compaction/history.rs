//! The compaction history on disk, so `compactionhistory` and `system.compaction_history`
//! survive a restart.
//!
//! `compaction_history.log` in the data directory is a sequence of records framed as the
//! compaction transaction logs are, `u32 body_len | u32 crc32(body) | body` (little-endian);
//! the body is one [`JobReport`] (format version byte, then varints and length-prefixed
//! strings; see `docs/sstable-format.md`).
//!
//! Invariants:
//! * records are only appended, except when the file is rewritten whole (temp file, fsync,
//!   rename): after a load that found a torn or corrupt tail (a crash mid-append), and when
//!   the file holds more than twice [`HISTORY_LEN`](super::manager::HISTORY_LEN) records, so
//!   it stays bounded;
//! * a load returns only records whose CRC matched, the newest `HISTORY_LEN` of them; a bad
//!   record ends the load (what follows it cannot be framed reliably) and is not an error —
//!   the history is a diagnostic, never a reason to refuse to start.

use super::job::JobReport;
use super::purge::PurgeCounts;
use super::strategy::JobKind;
use crate::error::{Error, IoResultExt, Result};
use crate::model::codec::{put_bytes, put_uvarint, Decoder};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// File name in the data directory.
pub const HISTORY_FILE: &str = "compaction_history.log";

const VERSION: u8 = 1;

fn kind_code(k: JobKind) -> u8 {
    match k {
        JobKind::Regular => 0,
        JobKind::Tombstone => 1,
        JobKind::SpaceAmplification => 2,
        JobKind::DropExpired => 3,
        JobKind::Major => 4,
    }
}

fn kind_of(code: u8) -> Option<JobKind> {
    Some(match code {
        0 => JobKind::Regular,
        1 => JobKind::Tombstone,
        2 => JobKind::SpaceAmplification,
        3 => JobKind::DropExpired,
        4 => JobKind::Major,
        _ => return None,
    })
}

/// One record's payload.
fn encode(r: &JobReport) -> Vec<u8> {
    let mut out = vec![VERSION];
    put_uvarint(&mut out, r.id);
    put_bytes(&mut out, r.keyspace.as_bytes());
    put_bytes(&mut out, r.table.as_bytes());
    out.push(kind_code(r.kind));
    for list in [&r.inputs, &r.outputs, &r.merged_from] {
        put_uvarint(&mut out, list.len() as u64);
        for v in list {
            put_uvarint(&mut out, *v);
        }
    }
    for v in [
        u64::from(r.output_level),
        r.bytes_in,
        r.bytes_out,
        r.partitions_out,
        r.purged.tombstones_purged,
        r.purged.expired_cells,
        r.started_at_ms,
        u64::try_from(r.duration.as_micros()).unwrap_or(u64::MAX),
    ] {
        put_uvarint(&mut out, v);
    }
    out
}

/// Decodes a payload; `None` when it is not one this version wrote.
fn decode(buf: &[u8]) -> Option<JobReport> {
    let mut d = Decoder::new(buf);
    if d.u8().ok()? != VERSION {
        return None;
    }
    let id = d.uvarint().ok()?;
    let keyspace = String::from_utf8(d.bytes().ok()?.to_vec()).ok()?;
    let table = String::from_utf8(d.bytes().ok()?.to_vec()).ok()?;
    let kind = kind_of(d.u8().ok()?)?;
    let mut lists: [Vec<u64>; 3] = Default::default();
    for list in &mut lists {
        let n = d.len().ok()?;
        for _ in 0..n {
            list.push(d.uvarint().ok()?);
        }
    }
    let mut v = [0u64; 8];
    for x in &mut v {
        *x = d.uvarint().ok()?;
    }
    if !d.is_empty() {
        return None;
    }
    let [inputs, outputs, merged_from] = lists;
    let [level, bytes_in, bytes_out, partitions_out, purged, expired, started_at_ms, micros] = v;
    Some(JobReport {
        id,
        keyspace,
        table,
        kind,
        inputs,
        outputs,
        output_level: u32::try_from(level).ok()?,
        bytes_in,
        bytes_out,
        partitions_out,
        merged_from,
        purged: PurgeCounts {
            tombstones_purged: purged,
            expired_cells: expired,
        },
        started_at_ms,
        duration: Duration::from_micros(micros),
    })
}

fn frame(r: &JobReport) -> Vec<u8> {
    let payload = encode(r);
    let mut out = Vec::with_capacity(payload.len() + 8);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// Splits `buf` into records; returns them and whether the whole buffer was valid.
fn parse(buf: &[u8]) -> (Vec<JobReport>, bool) {
    let mut out = Vec::new();
    let mut rest = buf;
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return (out, false);
        };
        let len = u32::from_le_bytes(*len) as usize;
        let Some((crc, tail)) = tail.split_first_chunk::<4>() else {
            return (out, false);
        };
        if tail.len() < len {
            return (out, false);
        }
        let (payload, tail) = tail.split_at(len);
        if crc32fast::hash(payload) != u32::from_le_bytes(*crc) {
            return (out, false);
        }
        let Some(r) = decode(payload) else {
            return (out, false);
        };
        out.push(r);
        rest = tail;
    }
    (out, true)
}

/// The open history file.
pub struct HistoryLog {
    path: PathBuf,
    file: File,
    /// Records in the file.
    records: usize,
    /// Keep at most this many records after a rewrite.
    keep: usize,
}

impl HistoryLog {
    /// Opens (or creates) the log at `path`; returns it with the newest `keep` records,
    /// oldest first.
    pub fn open(path: &Path, keep: usize) -> Result<(HistoryLog, VecDeque<JobReport>)> {
        let buf = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(path, e)),
        };
        let (mut records, clean) = parse(&buf);
        if !clean {
            tracing::warn!(
                "{}: dropped a torn or corrupt tail after {} records",
                path.display(),
                records.len()
            );
        }
        let start = records.len().saturating_sub(keep);
        let kept: VecDeque<JobReport> = records.drain(start..).collect();
        if !clean || start > 0 {
            rewrite(path, kept.iter())?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_path(path)?;
        let log = HistoryLog {
            path: path.to_path_buf(),
            file,
            records: kept.len(),
            keep,
        };
        Ok((log, kept))
    }

    /// Appends one record. `current` is the history after it (newest last): past twice the
    /// bound the file is rewritten with the newest `keep` of them.
    pub fn append<'a>(
        &mut self,
        r: &JobReport,
        current: impl DoubleEndedIterator<Item = &'a JobReport> + ExactSizeIterator,
    ) -> Result<()> {
        if self.records + 1 > self.keep.saturating_mul(2) {
            let n = current.len();
            let kept = current.skip(n.saturating_sub(self.keep));
            let written = rewrite(&self.path, kept)?;
            self.file = OpenOptions::new()
                .append(true)
                .open(&self.path)
                .with_path(&self.path)?;
            self.records = written;
            return Ok(());
        }
        self.file
            .write_all(&frame(r))
            .and_then(|()| self.file.sync_data())
            .with_path(&self.path)?;
        self.records += 1;
        Ok(())
    }
}

/// Writes `records` as the whole file, atomically; returns how many.
fn rewrite<'a>(path: &Path, records: impl Iterator<Item = &'a JobReport>) -> Result<usize> {
    let mut buf = Vec::new();
    let mut n = 0;
    for r in records {
        buf.extend_from_slice(&frame(r));
        n += 1;
    }
    crate::io::write_file_atomically(path, &buf)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn report(id: u64) -> JobReport {
        JobReport {
            id,
            keyspace: "ks".into(),
            table: format!("t{id}"),
            kind: JobKind::SpaceAmplification,
            inputs: vec![1, 2, 300],
            outputs: vec![301],
            output_level: 2,
            bytes_in: 1 << 40,
            bytes_out: 12345,
            partitions_out: 7,
            merged_from: vec![5, 0, 2],
            purged: PurgeCounts {
                tombstones_purged: 3,
                expired_cells: 4,
            },
            started_at_ms: 1_700_000_000_000 + id,
            duration: Duration::from_micros(1_500_001),
        }
    }

    fn same(a: &JobReport, b: &JobReport) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn records_round_trip_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        let (mut log, h) = HistoryLog::open(&path, 10).unwrap();
        assert!(h.is_empty());
        let mut all = VecDeque::new();
        for id in 1..=3 {
            all.push_back(report(id));
            log.append(&report(id), all.iter()).unwrap();
        }
        drop(log);
        let (_, h) = HistoryLog::open(&path, 10).unwrap();
        assert_eq!(h.len(), 3);
        assert!(h.iter().zip(all.iter()).all(|(a, b)| same(a, b)));
    }

    #[test]
    fn torn_tail_is_dropped_and_the_file_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        let (mut log, _) = HistoryLog::open(&path, 10).unwrap();
        let mut all = VecDeque::new();
        for id in 1..=2 {
            all.push_back(report(id));
            log.append(&report(id), all.iter()).unwrap();
        }
        drop(log);
        // A crash in the middle of a third append.
        let third = frame(&report(3));
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&third[..third.len() / 2]).unwrap();
        drop(f);
        let (mut log, h) = HistoryLog::open(&path, 10).unwrap();
        assert_eq!(h.len(), 2);
        // Appends after the repair are readable.
        let mut all: VecDeque<JobReport> = h;
        all.push_back(report(4));
        log.append(&report(4), all.iter()).unwrap();
        drop(log);
        let (_, h) = HistoryLog::open(&path, 10).unwrap();
        let ids: Vec<u64> = h.iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![1, 2, 4]);
        // A flipped byte inside a record ends the load there.
        let mut buf = std::fs::read(&path).unwrap();
        let at = buf.len() - 6;
        buf[at] ^= 0xFF;
        std::fs::write(&path, &buf).unwrap();
        let (_, h) = HistoryLog::open(&path, 10).unwrap();
        assert_eq!(h.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn the_file_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        let (mut log, _) = HistoryLog::open(&path, 4).unwrap();
        let mut all = VecDeque::new();
        for id in 1..=50 {
            all.push_back(report(id));
            if all.len() > 4 {
                all.pop_front();
            }
            log.append(&report(id), all.iter()).unwrap();
            let (records, clean) = parse(&std::fs::read(&path).unwrap());
            assert!(clean);
            assert!(records.len() <= 8, "{} records", records.len());
        }
        drop(log);
        let (_, h) = HistoryLog::open(&path, 4).unwrap();
        assert_eq!(
            h.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![47, 48, 49, 50]
        );
    }
}
