//! Where each chunk of a data file starts and how long it is on disk, bit-packed (see the
//! parent module's "Memory for offsets"), and their serialized form.

use crate::error::{CorruptionKind, Result};

/// Chunks per absolute base offset in [`ChunkOffsets`].
pub const GROUP: usize = 64;

/// Bytes of checksum after each chunk's compressed bytes.
pub const CRC_LEN: u32 = 4;

/// Where each chunk of a data file starts and how long it is on disk, packed (see module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkOffsets {
    count: usize,
    /// Bits per packed length (0 only when there are no chunks).
    width: u32,
    /// Absolute file offset of chunk `g * GROUP`.
    bases: Vec<u64>,
    /// Lengths, `width` bits each, little-endian bit order across words.
    packed: Vec<u64>,
}

fn words_for(count: usize, width: u32) -> Option<usize> {
    count
        .checked_mul(width as usize)
        .map(|bits| bits.div_ceil(64))
}

impl ChunkOffsets {
    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.count
    }

    /// On-disk length of chunk `i` (compressed bytes + CRC).
    pub(super) fn length(&self, i: usize) -> Option<u32> {
        if i >= self.count {
            return None;
        }
        if self.width == 0 {
            return Some(0);
        }
        let w = self.width as usize;
        let bit = i * w;
        let (word, shift) = (bit / 64, bit % 64);
        let mut v = *self.packed.get(word)? >> shift;
        if shift + w > 64 {
            v |= *self.packed.get(word + 1)? << (64 - shift);
        }
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        u32::try_from(v & mask).ok()
    }

    /// File offset and on-disk length (compressed bytes + CRC) of chunk `i`.
    pub fn chunk_range(&self, i: usize) -> Option<(u64, u32)> {
        let len = self.length(i)?;
        let group_start = i / GROUP * GROUP;
        let mut off = *self.bases.get(i / GROUP)?;
        for j in group_start..i {
            off += u64::from(self.length(j)?);
        }
        Some((off, len))
    }

    /// Total on-disk bytes of all chunks (the data file's expected length).
    pub fn total_len(&self) -> u64 {
        match self.count.checked_sub(1).and_then(|l| self.chunk_range(l)) {
            Some((off, len)) => off + u64::from(len),
            None => 0,
        }
    }

    /// Memory this structure holds, including itself.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.bases.capacity() * 8 + self.packed.capacity() * 8
    }

    /// [`ChunkOffsets::memory_bytes`] per chunk (0 with no chunks).
    pub fn bytes_per_chunk(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.memory_bytes() as f64 / self.count as f64
        }
    }

    /// Serialises as: `u64 count | u8 width | count.div_ceil(64) × u64 base |
    /// ceil(count*width/64) × u64 packed`, all little-endian. No checksum: the caller's file has one.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.count as u64).to_le_bytes());
        out.push(self.width as u8);
        for b in &self.bases {
            out.extend_from_slice(&b.to_le_bytes());
        }
        for w in &self.packed {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// Parses [`ChunkOffsets::encode`]'s output, checking that it is self-consistent (exact
    /// length, base offsets agreeing with the lengths, no length below the CRC size).
    pub fn decode(bytes: &[u8]) -> Result<ChunkOffsets, CorruptionKind> {
        let mut r = Reader { bytes };
        let count =
            usize::try_from(r.u64()?).map_err(|_| CorruptionKind::Invalid("chunk count"))?;
        let width = u32::from(r.u8()?);
        if width > 32 || (width == 0) != (count == 0) {
            return Err(CorruptionKind::Invalid("chunk offsets bit width"));
        }
        let n_bases = count.div_ceil(GROUP);
        let n_words = words_for(count, width).ok_or(CorruptionKind::Invalid("chunk count"))?;
        // Check the size before allocating so a garbage count cannot ask for a huge Vec.
        let need = n_bases
            .checked_add(n_words)
            .and_then(|n| n.checked_mul(8))
            .ok_or(CorruptionKind::Invalid("chunk count"))?;
        if r.bytes.len() < need {
            return Err(CorruptionKind::Truncated);
        }
        if r.bytes.len() > need {
            return Err(CorruptionKind::Invalid(
                "trailing bytes after chunk offsets",
            ));
        }
        let bases = (0..n_bases)
            .map(|_| r.u64())
            .collect::<Result<Vec<_>, _>>()?;
        let packed = (0..n_words)
            .map(|_| r.u64())
            .collect::<Result<Vec<_>, _>>()?;
        let offsets = ChunkOffsets {
            count,
            width,
            bases,
            packed,
        };
        // Walk every chunk once: base offsets must equal the running sum of lengths.
        let mut pos = 0u64;
        for i in 0..count {
            if i % GROUP == 0 && offsets.bases.get(i / GROUP) != Some(&pos) {
                return Err(CorruptionKind::Invalid("chunk base offset"));
            }
            let len = offsets
                .length(i)
                .ok_or(CorruptionKind::Invalid("chunk length"))?;
            if len < CRC_LEN {
                return Err(CorruptionKind::Invalid("chunk length"));
            }
            pos = pos
                .checked_add(u64::from(len))
                .ok_or(CorruptionKind::Invalid("chunk offset"))?;
        }
        Ok(offsets)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], CorruptionKind> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<N>()
            .ok_or(CorruptionKind::Truncated)?;
        self.bytes = rest;
        Ok(*head)
    }
    fn u64(&mut self) -> Result<u64, CorruptionKind> {
        self.take::<8>().map(u64::from_le_bytes)
    }
    fn u8(&mut self) -> Result<u8, CorruptionKind> {
        self.take::<1>().map(|b| b[0])
    }
}

/// Collects chunk lengths while a data file is written, then packs them.
#[derive(Debug, Default, Clone)]
pub struct ChunkOffsetsBuilder {
    // Plain lengths while writing (4 bytes per chunk, only for the writer's lifetime); packing
    // needs the maximum, which is known only at the end.
    lengths: Vec<u32>,
}

impl ChunkOffsetsBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next chunk's on-disk length (compressed bytes + CRC).
    pub fn push(&mut self, len: u32) {
        self.lengths.push(len);
    }

    /// Packs the lengths.
    pub fn finish(self) -> ChunkOffsets {
        let count = self.lengths.len();
        let max = self.lengths.iter().copied().max().unwrap_or(0);
        let width = if count == 0 {
            0
        } else {
            (32 - max.leading_zeros()).max(1)
        };
        let mut packed = vec![0u64; words_for(count, width).unwrap_or(0)];
        let mut bases = Vec::with_capacity(count.div_ceil(GROUP));
        let mut pos = 0u64;
        for (i, &len) in self.lengths.iter().enumerate() {
            if i % GROUP == 0 {
                bases.push(pos);
            }
            pos += u64::from(len);
            let bit = i * width as usize;
            let (word, shift) = (bit / 64, bit % 64);
            if let Some(w) = packed.get_mut(word) {
                *w |= u64::from(len) << shift;
            }
            if shift + width as usize > 64 {
                if let Some(w) = packed.get_mut(word + 1) {
                    *w |= u64::from(len) >> (64 - shift);
                }
            }
        }
        ChunkOffsets {
            count,
            width,
            bases,
            packed,
        }
    }
}
