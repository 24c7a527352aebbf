//! Replay: reads every segment of a commitlog directory in id order and hands each valid record
//! to a callback.
//!
//! Segments are read with plain reads (not mmap, so a file truncated under us cannot SIGBUS the
//! process). Within a segment, records are read until the first one that is not valid:
//!
//! * a length word of 0 (or fewer than 4 bytes left, all zero) is the clean end of the records —
//!   zero-filled and recycled tails both read this way, because every append leaves a zero length
//!   word after its record; no problem is reported unless a valid record of this segment is found
//!   further on (then data in between was lost, which is reported as corruption);
//! * a record whose checksums fail or that runs past the end of the file ends the segment with a
//!   [`ReplayProblem`]. It is a *torn tail* when no valid record of this segment follows it (the
//!   expected result of a crash during a write or before a periodic sync: only unacknowledged or
//!   not-yet-synced records are lost), and corruption otherwise.
//!
//! Either way replay continues with the next segment; a segment whose header is bad is skipped
//! with a problem. Replay never panics on any bytes. Errors from the callback and I/O errors
//! reading the directory or a file abort the replay.

use std::path::{Path, PathBuf};

use super::segment::{
    decode_header, header_crc, list_dir, payload_crc, read_u32, FileKind, HEADER_SIZE,
    RECORD_OVERHEAD,
};
use super::CommitlogPosition;
use crate::error::{CorruptionKind, Error, IoResultExt, Result};

/// What a replay found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayReport {
    /// Segment files examined (including ones skipped for a bad header).
    pub segments: usize,
    /// Records handed to the callback.
    pub records: u64,
    /// Bytes of those records, record headers and checksums included.
    pub bytes: u64,
    /// Highest segment id among the files examined (0 if none).
    pub max_segment_id: u64,
    /// Where replay stopped reading a segment early, in segment order.
    pub problems: Vec<ReplayProblem>,
}

/// A segment whose records ended on bad data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayProblem {
    /// The segment file.
    pub path: PathBuf,
    /// Byte offset in the file of the first bad record (or header field).
    pub offset: u64,
    /// What was wrong there.
    pub kind: CorruptionKind,
    /// True when nothing valid follows in this segment: a write interrupted by a crash, not
    /// damage to data that was acknowledged before later data.
    pub torn_tail: bool,
}

impl ReplayProblem {
    /// The problem as an engine error (for callers that refuse to start on corruption).
    pub fn to_error(&self) -> Error {
        Error::corruption(&self.path, self.offset, self.kind.clone())
    }
}

/// Replays every segment in `dir` in id order, calling `f(position, payload)` for each valid
/// record. See the module docs for where a segment's records end.
pub fn replay(
    dir: &Path,
    mut f: impl FnMut(CommitlogPosition, &[u8]) -> Result<()>,
) -> Result<ReplayReport> {
    let mut segments: Vec<(u64, PathBuf)> = list_dir(dir)?
        .into_iter()
        .filter_map(|l| match l.kind {
            FileKind::Segment(id) => Some((id, l.path)),
            _ => None,
        })
        .collect();
    segments.sort();

    let mut report = ReplayReport::default();
    let mut buf = Vec::new();
    for (file_id, path) in segments {
        report.segments += 1;
        report.max_segment_id = report.max_segment_id.max(file_id);
        buf.clear();
        {
            use std::io::Read;
            let mut file = std::fs::File::open(&path).with_path(&path)?;
            file.read_to_end(&mut buf).with_path(&path)?;
        }
        let id = match decode_header(&path, &buf) {
            Ok(id) if id == file_id => id,
            Ok(_) => {
                report.problems.push(ReplayProblem {
                    path,
                    offset: 12,
                    kind: CorruptionKind::Invalid("segment id in header does not match file name"),
                    torn_tail: false,
                });
                continue;
            }
            Err(Error::Corruption { offset, kind, .. }) => {
                report.problems.push(ReplayProblem {
                    path,
                    offset,
                    kind,
                    torn_tail: false,
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some((offset, kind, torn_tail)) = replay_segment(id, &buf, &mut report, &mut f)? {
            report.problems.push(ReplayProblem {
                path,
                offset,
                kind,
                torn_tail,
            });
        }
    }
    Ok(report)
}

/// Replays the records of one segment; returns where and why it stopped if that was not a clean
/// end: (offset, kind, torn_tail).
fn replay_segment(
    id: u64,
    buf: &[u8],
    report: &mut ReplayReport,
    f: &mut impl FnMut(CommitlogPosition, &[u8]) -> Result<()>,
) -> Result<Option<(u64, CorruptionKind, bool)>> {
    let mut off = HEADER_SIZE as usize;
    loop {
        match check_record(id, buf, off) {
            Check::Valid(len) => {
                let payload = &buf[off + 8..off + 8 + len];
                // Offsets fit u32: a record only validates inside the file, and files written by
                // this build are at most u32::MAX bytes; longer files stop here as invalid.
                let Ok(offset) = u32::try_from(off) else {
                    return Ok(Some((
                        off as u64,
                        CorruptionKind::Invalid("segment longer than 4 GiB"),
                        false,
                    )));
                };
                f(
                    CommitlogPosition {
                        segment_id: id,
                        offset,
                    },
                    payload,
                )?;
                report.records += 1;
                report.bytes += (len + RECORD_OVERHEAD as usize) as u64;
                off += len + RECORD_OVERHEAD as usize;
            }
            Check::End => {
                if valid_record_after(id, buf, off + 1) {
                    return Ok(Some((
                        off as u64,
                        CorruptionKind::Invalid("zero record length before valid records"),
                        false,
                    )));
                }
                return Ok(None);
            }
            Check::Bad(kind) => {
                let torn = !valid_record_after(id, buf, off + 1);
                return Ok(Some((off as u64, kind, torn)));
            }
        }
    }
}

enum Check {
    /// A valid record with this payload length starts here.
    Valid(usize),
    /// Clean end of the records.
    End,
    /// Bad data starts here.
    Bad(CorruptionKind),
}

fn check_record(id: u64, buf: &[u8], off: usize) -> Check {
    let rest = buf.len().saturating_sub(off);
    if rest < 4 {
        // Too short for a length word: a full segment's last bytes, or a file cut inside one.
        return if buf[off.min(buf.len())..].iter().all(|&b| b == 0) {
            Check::End
        } else {
            Check::Bad(CorruptionKind::Truncated)
        };
    }
    let len = read_u32(buf, off);
    if len == 0 {
        return Check::End;
    }
    if rest < 8 {
        return Check::Bad(CorruptionKind::Truncated);
    }
    let stored = read_u32(buf, off + 4);
    let actual = header_crc(id, len);
    if stored != actual {
        return Check::Bad(CorruptionKind::ChecksumMismatch {
            expected: stored,
            actual,
        });
    }
    let len = len as usize;
    if rest - 8 < len.saturating_add(4) {
        return Check::Bad(CorruptionKind::Truncated);
    }
    let payload = &buf[off + 8..off + 8 + len];
    let stored = read_u32(buf, off + 8 + len);
    let actual = payload_crc(id, payload);
    if stored != actual {
        return Check::Bad(CorruptionKind::ChecksumMismatch {
            expected: stored,
            actual,
        });
    }
    Check::Valid(len)
}

/// True when a valid record of segment `id` starts anywhere at or after `from`. Used only after
/// replay of a segment stopped, to tell a torn tail (nothing valid after) from corruption. The
/// header checksum is seeded with the segment id, so stale records of a recycled file never match
/// and the scan is cheap: most offsets fail on the length or header CRC.
fn valid_record_after(id: u64, buf: &[u8], from: usize) -> bool {
    let last = buf.len().saturating_sub(RECORD_OVERHEAD as usize + 1);
    (from..=last).any(|off| {
        let len = read_u32(buf, off) as usize;
        len != 0
            && len <= buf.len() - off - RECORD_OVERHEAD as usize
            && matches!(check_record(id, buf, off), Check::Valid(_))
    })
}
