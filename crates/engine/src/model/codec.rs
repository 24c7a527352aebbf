//! Binary encoding of model values, shared by the commitlog and sstables.
//!
//! Integers are LEB128 varints (signed ones zig-zagged); timestamps are written as deltas from a
//! `base` timestamp chosen by the container (a memtable's minimum timestamp, an sstable's, 0 in
//! the commitlog), which keeps them to a byte or two. Decoding never panics: a [`Decoder`]
//! reports the offset inside its buffer where decoding failed, and the caller turns that into
//! an error naming its file.

use super::cell::{Cell, DeletionTime, LivenessInfo, NO_DELETION_TIME};
use super::key::ClusteringRange;
use super::partition::RangeTombstone;
use super::row::{ColumnData, ComplexColumn, Row};
use crate::error::CorruptionKind;
use bytes::Bytes;

/// A decoding failure at `offset` within the decoded buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset inside the buffer where decoding stopped.
    pub offset: usize,
    /// What was wrong.
    pub kind: CorruptionKind,
}

/// Result of decoding.
pub type DecodeResult<T> = std::result::Result<T, DecodeError>;

/// Appends an unsigned LEB128 varint.
pub fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a zig-zag signed varint.
pub fn put_varint(out: &mut Vec<u8>, v: i64) {
    put_uvarint(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// Appends a length-prefixed byte string.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_uvarint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A cursor over an encoded buffer.
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Shared owner of `buf`, so byte strings can be sliced without copying.
    owner: Option<&'a Bytes>,
    /// Where `buf` starts inside `owner`.
    owner_start: usize,
}

impl<'a> Decoder<'a> {
    /// Decodes from a borrowed slice (byte strings are copied).
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder {
            buf,
            pos: 0,
            owner: None,
            owner_start: 0,
        }
    }

    /// Decodes from shared bytes (byte strings are zero-copy slices).
    pub fn from_bytes(buf: &'a Bytes) -> Self {
        Decoder {
            buf: buf.as_ref(),
            pos: 0,
            owner: Some(buf),
            owner_start: 0,
        }
    }

    /// Decodes `owner[range]` (clamped to `owner`), slicing byte strings out of `owner` without
    /// copying; offsets in errors are relative to `range.start`. Saves a reader that decodes
    /// many items from one buffer a `Bytes::slice` per item.
    pub fn from_bytes_range(owner: &'a Bytes, range: std::ops::Range<usize>) -> Self {
        let end = range.end.min(owner.len());
        let start = range.start.min(end);
        Decoder {
            buf: owner.get(start..end).unwrap_or_default(),
            pos: 0,
            owner: Some(owner),
            owner_start: start,
        }
    }

    /// Current offset.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// True when every byte was consumed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// An error at the current offset.
    pub fn error(&self, kind: CorruptionKind) -> DecodeError {
        DecodeError {
            offset: self.pos,
            kind,
        }
    }

    // The primitives below are forced inline: the row decoder calls them for every field, and
    // out of line each returns its `Result` through memory, which the caller then reloads
    // (about 2 % of a full LZ4 scan, `docs/benchmarks.md`).

    /// Reads one byte.
    #[inline(always)]
    pub fn u8(&mut self) -> DecodeResult<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| self.error(CorruptionKind::Truncated))?;
        self.pos += 1;
        Ok(b)
    }

    /// Reads `n` raw bytes.
    #[inline(always)]
    pub fn raw(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or_else(|| self.error(CorruptionKind::Truncated))?;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.error(CorruptionKind::Truncated))?;
        self.pos = end;
        Ok(s)
    }

    /// Reads a little-endian u32.
    pub fn u32_le(&mut self) -> DecodeResult<u32> {
        let s = self.raw(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// Reads a little-endian u64.
    pub fn u64_le(&mut self) -> DecodeResult<u64> {
        let s = self.raw(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }

    /// Reads an unsigned varint.
    #[inline(always)]
    pub fn uvarint(&mut self) -> DecodeResult<u64> {
        // Most varints here (deltas, lengths, flags) fit one byte.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        let start = self.pos;
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError {
            offset: start,
            kind: CorruptionKind::Invalid("varint"),
        })
    }

    /// Reads an unsigned varint that must fit `u32`.
    #[inline(always)]
    pub fn uvarint32(&mut self) -> DecodeResult<u32> {
        let start = self.pos;
        let v = self.uvarint()?;
        u32::try_from(v).map_err(|_| DecodeError {
            offset: start,
            kind: CorruptionKind::Invalid("32-bit varint"),
        })
    }

    /// Reads a length that must fit in the remaining buffer.
    #[inline(always)]
    pub fn len(&mut self) -> DecodeResult<usize> {
        let start = self.pos;
        let v = self.uvarint()?;
        match usize::try_from(v) {
            Ok(n) if n <= self.remaining() => Ok(n),
            _ => Err(DecodeError {
                offset: start,
                kind: CorruptionKind::Truncated,
            }),
        }
    }

    /// Reads a zig-zag signed varint.
    #[inline(always)]
    pub fn varint(&mut self) -> DecodeResult<i64> {
        let u = self.uvarint()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    /// Reads a length-prefixed byte string.
    #[inline(always)]
    pub fn bytes(&mut self) -> DecodeResult<Bytes> {
        let n = self.len()?;
        let start = self.pos;
        let s = self.raw(n)?;
        Ok(match self.owner {
            Some(owner) => owner.slice(self.owner_start + start..self.owner_start + start + n),
            None => Bytes::copy_from_slice(s),
        })
    }
}

const ROW_HAS_MARKER: u8 = 0x01;
const ROW_MARKER_EXPIRING: u8 = 0x02;
const ROW_HAS_DELETION: u8 = 0x04;

const CELL_TOMBSTONE: u8 = 0x01;
const CELL_EXPIRING: u8 = 0x02;
const CELL_COMPLEX: u8 = 0x04;
const CELL_COMPLEX_DELETION: u8 = 0x08;
/// A live counter cell: its value is a counter context (`super::counter`). Files written
/// before counters never set it, so they read as before.
const CELL_COUNTER: u8 = 0x10;

/// Encodes a deletion time.
pub fn put_deletion(out: &mut Vec<u8>, d: &DeletionTime, base: i64) {
    put_varint(out, d.marked_at.wrapping_sub(base));
    put_uvarint(out, u64::from(d.local_deletion_time));
}

/// Decodes a deletion time.
pub fn get_deletion(d: &mut Decoder<'_>, base: i64) -> DecodeResult<DeletionTime> {
    let marked_at = d.varint()?.wrapping_add(base);
    let local_deletion_time = d.uvarint32()?;
    Ok(DeletionTime {
        marked_at,
        local_deletion_time,
    })
}

fn put_cell(out: &mut Vec<u8>, cell: &Cell, base: i64, extra_flags: u8) {
    let mut flags = extra_flags;
    if cell.is_tombstone() {
        flags |= CELL_TOMBSTONE;
    } else if cell.is_expiring() {
        flags |= CELL_EXPIRING;
    } else if cell.counter {
        flags |= CELL_COUNTER;
    }
    out.push(flags);
    put_varint(out, cell.timestamp.wrapping_sub(base));
    if flags & CELL_TOMBSTONE != 0 {
        put_uvarint(out, u64::from(cell.local_deletion_time));
    } else {
        if flags & CELL_EXPIRING != 0 {
            put_uvarint(out, u64::from(cell.ttl));
            put_uvarint(out, u64::from(cell.local_deletion_time));
        }
        put_bytes(out, &cell.value);
    }
}

/// Decodes a cell after its flags byte (inlined into the row decoder, as the primitives are).
#[inline(always)]
fn get_cell_body(d: &mut Decoder<'_>, flags: u8, base: i64) -> DecodeResult<Cell> {
    let timestamp = d.varint()?.wrapping_add(base);
    if flags & CELL_TOMBSTONE != 0 {
        let local_deletion_time = d.uvarint32()?;
        return Ok(Cell {
            timestamp,
            ttl: 0,
            local_deletion_time,
            value: Bytes::new(),
            counter: false,
        });
    }
    let (ttl, local_deletion_time) = if flags & CELL_EXPIRING != 0 {
        let at = d.position();
        let ttl = d.uvarint32()?;
        if ttl == 0 {
            return Err(DecodeError {
                offset: at,
                kind: CorruptionKind::Invalid("expiring cell ttl"),
            });
        }
        (ttl, d.uvarint32()?)
    } else {
        (0, NO_DELETION_TIME)
    };
    let at = d.position();
    let value = d.bytes()?;
    let counter = flags & CELL_COUNTER != 0;
    if counter && (ttl != 0 || !super::counter::is_valid(&value)) {
        return Err(DecodeError {
            offset: at,
            kind: CorruptionKind::Invalid("counter cell"),
        });
    }
    Ok(Cell {
        timestamp,
        ttl,
        local_deletion_time,
        value,
        counter,
    })
}

/// Encodes a row (marker, deletion, columns).
pub fn put_row(out: &mut Vec<u8>, row: &Row, base: i64) {
    let mut flags = 0;
    if let Some(m) = row.marker {
        flags |= ROW_HAS_MARKER;
        if m.is_expiring() {
            flags |= ROW_MARKER_EXPIRING;
        }
    }
    if row.deletion.is_some() {
        flags |= ROW_HAS_DELETION;
    }
    out.push(flags);
    if let Some(m) = row.marker {
        put_varint(out, m.timestamp.wrapping_sub(base));
        if m.is_expiring() {
            put_uvarint(out, u64::from(m.ttl));
            put_uvarint(out, u64::from(m.local_expiration_time));
        }
    }
    if let Some(d) = &row.deletion {
        put_deletion(out, d, base);
    }
    put_uvarint(out, row.columns.len() as u64);
    let mut prev = 0u32;
    for (id, data) in &row.columns {
        put_uvarint(out, u64::from(id.wrapping_sub(prev)));
        prev = *id;
        match data {
            ColumnData::Simple(cell) => put_cell(out, cell, base, 0),
            ColumnData::Complex(cc) => {
                let mut flags = CELL_COMPLEX;
                if cc.deletion.is_some() {
                    flags |= CELL_COMPLEX_DELETION;
                }
                out.push(flags);
                if let Some(del) = &cc.deletion {
                    put_deletion(out, del, base);
                }
                put_uvarint(out, cc.cells.len() as u64);
                for (path, cell) in &cc.cells {
                    put_bytes(out, path);
                    put_cell(out, cell, base, 0);
                }
            }
        }
    }
}

/// Decodes a row written by [`put_row`].
pub fn get_row(d: &mut Decoder<'_>, base: i64) -> DecodeResult<Row> {
    let flags = d.u8()?;
    let marker = if flags & ROW_HAS_MARKER != 0 {
        let timestamp = d.varint()?.wrapping_add(base);
        if flags & ROW_MARKER_EXPIRING != 0 {
            let ttl = d.uvarint32()?;
            let local_expiration_time = d.uvarint32()?;
            Some(LivenessInfo {
                timestamp,
                ttl,
                local_expiration_time,
            })
        } else {
            Some(LivenessInfo::live(timestamp))
        }
    } else {
        None
    };
    let deletion = if flags & ROW_HAS_DELETION != 0 {
        Some(get_deletion(d, base)?)
    } else {
        None
    };
    let n = d.len()?;
    let mut columns = Vec::with_capacity(n);
    let mut id = 0u32;
    for _ in 0..n {
        let at = d.position();
        let delta = d.uvarint32()?;
        id = id.checked_add(delta).ok_or(DecodeError {
            offset: at,
            kind: CorruptionKind::Invalid("column id"),
        })?;
        let flags = d.u8()?;
        let data = if flags & CELL_COMPLEX != 0 {
            let deletion = if flags & CELL_COMPLEX_DELETION != 0 {
                Some(get_deletion(d, base)?)
            } else {
                None
            };
            let count = d.len()?;
            let mut cells = Vec::with_capacity(count);
            for _ in 0..count {
                let path = d.bytes()?;
                let cflags = d.u8()?;
                cells.push((path, get_cell_body(d, cflags, base)?));
            }
            ColumnData::Complex(ComplexColumn { deletion, cells })
        } else {
            ColumnData::Simple(get_cell_body(d, flags, base)?)
        };
        columns.push((id, data));
    }
    Ok(Row {
        marker,
        deletion,
        columns,
    })
}

/// Encodes a range tombstone.
pub fn put_range_tombstone(out: &mut Vec<u8>, rt: &RangeTombstone, base: i64) {
    put_bytes(out, &rt.range.start);
    put_bytes(out, &rt.range.end);
    put_deletion(out, &rt.deletion, base);
}

/// Decodes a range tombstone.
pub fn get_range_tombstone(d: &mut Decoder<'_>, base: i64) -> DecodeResult<RangeTombstone> {
    let start = d.bytes()?;
    let end = d.bytes()?;
    let deletion = get_deletion(d, base)?;
    Ok(RangeTombstone {
        range: ClusteringRange { start, end },
        deletion,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_round_trip() {
        let row = Row {
            marker: Some(LivenessInfo::expiring(1_000_000, 60, 100)),
            deletion: Some(DeletionTime {
                marked_at: 999,
                local_deletion_time: 5,
            }),
            columns: vec![
                (
                    1,
                    ColumnData::Simple(Cell::live(1_000_001, Bytes::from_static(b"abc"))),
                ),
                (4, ColumnData::Simple(Cell::tombstone(1_000_002, 7))),
                (
                    9,
                    ColumnData::Simple(Cell::expiring(
                        1_000_003,
                        10,
                        100,
                        Bytes::from_static(b"x"),
                    )),
                ),
                (
                    12,
                    ColumnData::Complex(ComplexColumn {
                        deletion: Some(DeletionTime {
                            marked_at: 3,
                            local_deletion_time: 4,
                        }),
                        cells: vec![(
                            Bytes::from_static(b"k"),
                            Cell::live(5, Bytes::from_static(b"v")),
                        )],
                    }),
                ),
            ],
        };
        let mut out = Vec::new();
        put_row(&mut out, &row, 1_000_000);
        let bytes = Bytes::from(out);
        let mut d = Decoder::from_bytes(&bytes);
        assert_eq!(get_row(&mut d, 1_000_000), Ok(row));
        assert!(d.is_empty());
    }

    #[test]
    fn counter_cells_round_trip_and_bad_contexts_are_refused() {
        let shard = crate::model::counter::Shard {
            id: [7; 16],
            clock: 3,
            value: -5,
        };
        let ctx = crate::model::counter::encode(&[shard]);
        let row = Row {
            marker: None,
            deletion: None,
            columns: vec![
                (1, ColumnData::Simple(Cell::counter(42, ctx))),
                (2, ColumnData::Simple(Cell::tombstone(43, 9))),
            ],
        };
        let mut out = Vec::new();
        put_row(&mut out, &row, 40);
        let bytes = Bytes::from(out);
        assert_eq!(get_row(&mut Decoder::from_bytes(&bytes), 40), Ok(row));
        // A counter cell whose context is not whole shards is corrupt.
        let bad = Row {
            marker: None,
            deletion: None,
            columns: vec![(
                1,
                ColumnData::Simple(Cell::counter(1, Bytes::from_static(b"abc"))),
            )],
        };
        let mut out = Vec::new();
        put_row(&mut out, &bad, 0);
        assert!(get_row(&mut Decoder::new(&out), 0).is_err());
    }

    #[test]
    fn truncated_input_never_panics() {
        let row = Row {
            marker: Some(LivenessInfo::live(5)),
            deletion: None,
            columns: vec![(
                1,
                ColumnData::Simple(Cell::live(7, Bytes::from_static(b"hello"))),
            )],
        };
        let mut out = Vec::new();
        put_row(&mut out, &row, 0);
        for cut in 0..out.len() {
            assert!(get_row(&mut Decoder::new(&out[..cut]), 0).is_err());
        }
        // Random garbage: must return, never panic.
        let mut x: u32 = 12345;
        for _ in 0..2000 {
            let buf: Vec<u8> = (0..24)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            let _ = get_row(&mut Decoder::new(&buf), 0);
        }
    }

    #[test]
    fn varints_round_trip() {
        for v in [0i64, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(Decoder::new(&out).varint(), Ok(v));
        }
    }
}
