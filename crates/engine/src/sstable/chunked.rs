//! The chunked, checksummed (and usually compressed) data file layer.
//!
//! # Format (Cairn's own)
//!
//! A data file is a plain sequence of chunks with nothing before, between or after them:
//!
//! ```text
//! chunk 0 | chunk 1 | ... | chunk n-1
//! chunk i = compressed bytes of uncompressed [i*L, min((i+1)*L, total)) | CRC32 (4 bytes, LE)
//! ```
//!
//! where `L` is the table's `chunk_length` and the CRC32 (IEEE, as Cassandra and ScyllaDB use)
//! covers the compressed bytes. Only the last chunk may hold fewer than `L` uncompressed bytes,
//! and no chunk is empty. Uncompressed tables ([`Codec::None`]) use the same layout, so every byte
//! on disk is covered by a checksum either way.
//!
//! Where each chunk starts is not in the data file; the writer returns a [`ChunkOffsets`] that
//! the sstable writer persists elsewhere (with [`ChunkOffsets::encode`], inside a file that has its
//! own CRC).
//!
//! # Memory for offsets
//!
//! A large sstable has millions of chunks, and the offsets of every open sstable stay in memory,
//! so [`ChunkOffsets`] stores each chunk's on-disk length (compressed + 4) bit-packed at one width
//! (the bits the largest length needs: at most 18 for 128 KiB chunks) plus an absolute `u64`
//! offset every [`GROUP`] chunks. That is at most `18/8 + 8/64 = 2.375` bytes per chunk, against 8
//! for a plain `u64` array; the price is summing up to 63 lengths per lookup.
//!
//! Readers are `Send + Sync` and use positioned reads (`pread`), so many threads can share one
//! [`ChunkedReader`]; each thread brings its own [`Compressor`] (codec contexts and read buffer).
//! Sequential readers (scans, compaction) instead read the file through a read-only memory map
//! held by their [`ReadWindow`] by default, which spares copying every compressed byte out of
//! the page cache; point reads keep `pread`, so a small read never faults in more than it
//! needs. Either way every chunk's CRC is checked before it is decompressed. See
//! [`ChunkedReader::map_sequential_reads`] for the one price of the map: a data file truncated by
//! another process while mapped faults the reader (SIGBUS) instead of returning an error.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::error::{CorruptionKind, Error, IoResultExt, Result};
use crate::schema::compression::{Codec, CompressionParams};
use crate::sstable::compression::Compressor;

/// Chunks per absolute base offset in [`ChunkOffsets`].
pub const GROUP: usize = 64;

/// Bytes of checksum after each chunk's compressed bytes.
pub const CRC_LEN: u32 = 4;

/// Timing of codec calls, for spotting calls long enough to stall a thread-per-core reactor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodecStats {
    /// Number of compress (or decompress) calls.
    pub calls: u64,
    /// Total time spent in them.
    pub total_nanos: u64,
    /// Calls that took 1 ms or more.
    pub stalls: u64,
    /// The longest single call.
    pub max_call_nanos: u64,
}

impl CodecStats {
    /// A call counts as a stall from this duration on.
    pub const STALL_NANOS: u64 = 1_000_000;

    /// Records one call of `nanos`.
    pub fn record(&mut self, nanos: u64) {
        self.calls += 1;
        self.total_nanos = self.total_nanos.saturating_add(nanos);
        if nanos >= Self::STALL_NANOS {
            self.stalls += 1;
        }
        self.max_call_nanos = self.max_call_nanos.max(nanos);
    }

    /// Adds another set of stats into this one.
    pub fn merge(&mut self, other: &CodecStats) {
        self.calls += other.calls;
        self.total_nanos = self.total_nanos.saturating_add(other.total_nanos);
        self.stalls += other.stalls;
        self.max_call_nanos = self.max_call_nanos.max(other.max_call_nanos);
    }
}

fn elapsed_nanos(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

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
    fn length(&self, i: usize) -> Option<u32> {
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

/// What [`ChunkedWriter::finish`] reports.
#[derive(Debug, Clone)]
pub struct ChunkedSummary {
    pub offsets: ChunkOffsets,
    /// Uncompressed bytes written.
    pub uncompressed_len: u64,
    /// Bytes written to the file (chunks + CRCs).
    pub compressed_len: u64,
    /// Timing of the compress calls.
    pub codec_stats: CodecStats,
}

/// Writes an uncompressed byte stream as chunks (see module docs) to `out`.
pub struct ChunkedWriter<W: Write> {
    out: W,
    path: PathBuf,
    compressor: Compressor,
    chunk_length: usize,
    /// The current partial chunk (always shorter than `chunk_length` between calls).
    buf: Vec<u8>,
    /// Compressed chunk + CRC being written; reused across chunks.
    comp: Vec<u8>,
    builder: ChunkOffsetsBuilder,
    chunks_uncompressed: u64,
    compressed_len: u64,
    stats: CodecStats,
    /// Set after a failed write: the file no longer matches the offsets, so refuse more.
    failed: bool,
}

impl<W: Write> ChunkedWriter<W> {
    /// A writer producing chunks of `params.chunk_length` uncompressed bytes with `params.codec`.
    pub fn new(out: W, params: &CompressionParams) -> Self {
        // A zero chunk length would never fill; parsed params are >= 1 KiB, this guards direct
        // construction.
        let chunk_length = (params.chunk_length as usize).max(1);
        ChunkedWriter {
            out,
            path: PathBuf::new(),
            compressor: Compressor::new(params.codec),
            chunk_length,
            buf: Vec::with_capacity(chunk_length),
            comp: Vec::new(),
            builder: ChunkOffsetsBuilder::new(),
            chunks_uncompressed: 0,
            compressed_len: 0,
            stats: CodecStats::default(),
            failed: false,
        }
    }

    /// Names the file being written, for errors returned by [`ChunkedWriter::finish`].
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = path.into();
        self
    }

    /// Uncompressed bytes accepted so far.
    pub fn position(&self) -> u64 {
        self.chunks_uncompressed + self.buf.len() as u64
    }

    /// Bytes of compressed chunks (with their CRCs) handed to `out` so far.
    pub fn compressed_len(&self) -> u64 {
        self.compressed_len
    }

    fn write_chunk(&mut self, data: &[u8]) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other("chunked writer failed earlier"));
        }
        self.failed = true;
        self.comp.clear();
        let start = Instant::now();
        self.compressor
            .compress(data, &mut self.comp)
            .map_err(io::Error::other)?;
        self.stats.record(elapsed_nanos(start));
        let crc = crc32fast::hash(&self.comp);
        self.comp.extend_from_slice(&crc.to_le_bytes());
        let len = u32::try_from(self.comp.len())
            .map_err(|_| io::Error::other("compressed chunk longer than 4 GiB"))?;
        self.out.write_all(&self.comp)?;
        self.builder.push(len);
        self.compressed_len += u64::from(len);
        self.chunks_uncompressed += data.len() as u64;
        self.failed = false;
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        let buf = std::mem::take(&mut self.buf);
        let r = self.write_chunk(&buf);
        self.buf = buf;
        self.buf.clear();
        r
    }

    /// Writes the last (partial) chunk, flushes `out`, and returns it with the summary.
    pub fn finish(mut self) -> Result<(W, ChunkedSummary)> {
        if !self.buf.is_empty() {
            self.flush_buf().with_path(&self.path)?;
        }
        if self.failed {
            return Err(Error::io(
                &self.path,
                io::Error::other("chunked writer failed earlier"),
            ));
        }
        self.out.flush().with_path(&self.path)?;
        let summary = ChunkedSummary {
            offsets: self.builder.finish(),
            uncompressed_len: self.chunks_uncompressed,
            compressed_len: self.compressed_len,
            codec_stats: self.stats,
        };
        Ok((self.out, summary))
    }
}

impl<W: Write> Write for ChunkedWriter<W> {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        let total = data.len();
        while !data.is_empty() {
            if self.buf.is_empty() && data.len() >= self.chunk_length {
                // Whole chunks straight from the caller's buffer, skipping the copy.
                let (chunk, rest) = data.split_at(self.chunk_length);
                self.write_chunk(chunk)?;
                data = rest;
                continue;
            }
            let take = (self.chunk_length - self.buf.len()).min(data.len());
            let (head, rest) = data.split_at(take);
            self.buf.extend_from_slice(head);
            data = rest;
            if self.buf.len() == self.chunk_length {
                self.flush_buf()?;
            }
        }
        Ok(total)
    }

    /// Flushes `out` only: a partial chunk stays buffered until it fills or `finish` is called,
    /// because every chunk but the last must be full.
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Reads chunks of a data file written by [`ChunkedWriter`]. `Send + Sync`: share it.
#[derive(Debug)]
pub struct ChunkedReader {
    file: File,
    path: PathBuf,
    offsets: Arc<ChunkOffsets>,
    uncompressed_len: u64,
    codec: Codec,
    chunk_length: u32,
    /// Whether sequential reads go through a map of the file
    /// ([`ChunkedReader::map_sequential_reads`]).
    map_sequential: bool,
}

impl ChunkedReader {
    /// Opens a reader; checks that the chunk count matches the lengths and that the file holds
    /// every chunk, so truncation shows up here rather than on some later read.
    pub fn new(
        file: File,
        path: PathBuf,
        offsets: Arc<ChunkOffsets>,
        uncompressed_len: u64,
        codec: Codec,
        chunk_length: u32,
    ) -> Result<Self> {
        if chunk_length == 0
            || uncompressed_len.div_ceil(u64::from(chunk_length)) != offsets.chunk_count() as u64
        {
            return Err(Error::corruption(
                path,
                0,
                CorruptionKind::Invalid("chunk count for the data length"),
            ));
        }
        let file_len = file.metadata().with_path(&path)?.len();
        let need = offsets.total_len();
        if file_len < need {
            return Err(Error::corruption(path, file_len, CorruptionKind::Truncated));
        }
        Ok(ChunkedReader {
            file,
            path,
            offsets,
            uncompressed_len,
            codec,
            chunk_length,
            map_sequential: true,
        })
    }

    /// Chooses how this reader's sequential reads (scans, compaction) read the data file:
    /// through a read-only memory map (`true`, the default; Cassandra's `disk_access_mode:
    /// mmap`), or with `pread` into a read-ahead window (`false`, `standard`). The map spares
    /// copying the compressed bytes out of the page cache (5–6 % of a full LZ4 scan's CPU,
    /// less the page faults that replace it); the price is that a data file truncated behind
    /// Cairn's back faults the process instead of returning an error. Each reader's window
    /// maps the file for as long as the window lives (one scan, one compaction input), so
    /// mapped pages do not stay in the process's RSS afterwards. Point reads always `pread`.
    pub fn map_sequential_reads(mut self, on: bool) -> Self {
        self.set_map_sequential_reads(on);
        self
    }

    /// [`ChunkedReader::map_sequential_reads`] on a reader in place.
    pub fn set_map_sequential_reads(&mut self, on: bool) {
        self.map_sequential = on;
    }

    /// The data file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Uncompressed bytes per chunk.
    pub fn chunk_length(&self) -> u32 {
        self.chunk_length
    }

    /// Total uncompressed length.
    pub fn uncompressed_len(&self) -> u64 {
        self.uncompressed_len
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.offsets.chunk_count()
    }

    /// The codec the chunks were written with.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// The chunk holding uncompressed byte `uncompressed_pos`.
    pub fn chunk_of(&self, uncompressed_pos: u64) -> usize {
        usize::try_from(uncompressed_pos / u64::from(self.chunk_length)).unwrap_or(usize::MAX)
    }

    /// Reads, verifies and decompresses chunk `i`, replacing `out`'s contents with its
    /// uncompressed bytes. Returns the bytes read from disk. `decompressor` must be for this
    /// reader's codec; it also supplies the read buffer.
    pub fn read_chunk(
        &self,
        i: usize,
        decompressor: &mut Compressor,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        let mut stats = CodecStats::default();
        self.read_chunk_timed(i, decompressor, out, &mut stats)
    }

    /// [`ChunkedReader::read_chunk`], also recording the decompress call's time in `stats`.
    pub fn read_chunk_timed(
        &self,
        i: usize,
        decompressor: &mut Compressor,
        out: &mut Vec<u8>,
        stats: &mut CodecStats,
    ) -> Result<u64> {
        out.clear();
        self.with_disk_chunk(i, decompressor, |offset, raw, d| {
            self.decode_chunk(i, offset, raw, d, out, stats)
        })
    }

    /// Reads chunk `i`'s on-disk bytes into the decompressor's scratch buffer and hands them
    /// (with their file offset) to `decode`; returns the bytes read from disk.
    fn with_disk_chunk(
        &self,
        i: usize,
        decompressor: &mut Compressor,
        decode: impl FnOnce(u64, &[u8], &mut Compressor) -> Result<()>,
    ) -> Result<u64> {
        let (offset, disk_len) = self.chunk_range_checked(i)?;
        let mut buf = std::mem::take(&mut decompressor.scratch);
        buf.clear();
        buf.resize(disk_len as usize, 0);
        let result = self
            .read_exact(&mut buf, offset)
            .and_then(|()| decode(offset, &buf, decompressor));
        decompressor.scratch = buf;
        result.map(|()| u64::from(disk_len))
    }

    /// [`ChunkedReader::read_chunk`] into memory the caller owns: `dst` must be exactly
    /// [`ChunkedReader::uncompressed_chunk_len`]`(i)` long.
    pub fn read_chunk_into(
        &self,
        i: usize,
        decompressor: &mut Compressor,
        dst: &mut [u8],
    ) -> Result<u64> {
        self.with_disk_chunk(i, decompressor, |offset, raw, d| {
            self.verify_and_decompress(i, offset, raw, d, dst)
        })
    }

    /// Reads chunk `i` through `window`: when the chunk is not in it, one `pread` refills the
    /// window with the chunk and the chunks after it (up to the window's size), so a
    /// sequential reader makes one system call per window instead of one per chunk. Returns
    /// the bytes read from disk (0 when the chunk came from the window). When the file is
    /// mapped (see [`ChunkedReader::map_sequential_reads`]) the chunk is read from the map instead and
    /// its on-disk length is returned.
    pub fn read_chunk_ahead(
        &self,
        i: usize,
        window: &mut ReadWindow,
        decompressor: &mut Compressor,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        out.clear();
        out.resize(self.uncompressed_chunk_len(i), 0);
        match self.read_chunk_ahead_into(i, window, decompressor, out) {
            Ok(n) => Ok(n),
            Err(e) => {
                out.clear();
                Err(e)
            }
        }
    }

    /// Uncompressed length of chunk `i`: the chunk length, less for the last chunk, 0 past the
    /// end.
    pub fn uncompressed_chunk_len(&self, i: usize) -> usize {
        let chunk_start = (i as u64).saturating_mul(u64::from(self.chunk_length));
        self.uncompressed_len
            .saturating_sub(chunk_start)
            .min(u64::from(self.chunk_length)) as usize
    }

    /// [`ChunkedReader::read_chunk_ahead`] into memory the caller owns: `dst` must be exactly
    /// [`ChunkedReader::uncompressed_chunk_len`]`(i)` long (anything else is reported as a
    /// decompression error of the chunk). Nothing is allocated or zero-filled, which matters
    /// for scans, where a 4 KiB LZ4 chunk decompresses in about 2 µs.
    pub fn read_chunk_ahead_into(
        &self,
        i: usize,
        window: &mut ReadWindow,
        decompressor: &mut Compressor,
        dst: &mut [u8],
    ) -> Result<u64> {
        // A sequential reader asks for chunk `i` right after chunk `i - 1`: its offset is then
        // the previous one plus its length, sparing the sum over the packed group.
        let (offset, disk_len) = match window.last {
            Some((prev, off, len)) if prev.checked_add(1) == Some(i) => {
                match self.offsets.length(i) {
                    Some(l) if l >= CRC_LEN => (off + u64::from(len), l),
                    _ => self.chunk_range_checked(i)?,
                }
            }
            _ => self.chunk_range_checked(i)?,
        };
        let end = offset + u64::from(disk_len);
        if window.map.is_none() && !window.map_tried {
            window.map_tried = true;
            window.map = self.map_for_window();
        }
        if let Some(map) = &window.map {
            let raw = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(a, b)| map.get(a..b))
                .ok_or_else(|| Error::corruption(&self.path, offset, CorruptionKind::Truncated))?;
            self.verify_and_decompress(i, offset, raw, decompressor, dst)?;
            window.last = Some((i, offset, disk_len));
            return Ok(u64::from(disk_len));
        }
        let mut read = 0;
        if offset < window.start || end > window.start + window.len as u64 {
            let want = (disk_len as usize).max(window.size);
            let len = (self.offsets.total_len().saturating_sub(offset) as usize)
                .min(want)
                .max(disk_len as usize);
            // The buffer only grows and is never cleared: re-zeroing 256 KiB per refill would
            // cost about as much as the read itself.
            if window.bytes.len() < len {
                window.bytes.resize(len, 0);
            }
            window.start = offset;
            window.len = 0;
            window.last = None;
            let buf = window.bytes.get_mut(..len).unwrap_or_default();
            self.read_exact(buf, offset)?;
            window.len = len;
            read = len as u64;
        }
        let from = (offset - window.start) as usize;
        let raw = window
            .bytes
            .get(from..from + disk_len as usize)
            .ok_or_else(|| Error::corruption(&self.path, offset, CorruptionKind::Truncated))?;
        self.verify_and_decompress(i, offset, raw, decompressor, dst)?;
        window.last = Some((i, offset, disk_len));
        Ok(read)
    }

    /// Maps the data file read-only for a sequential reader's window; `None` when mapping is
    /// off for this reader or fails (the window then reads with `pread`).
    fn map_for_window(&self) -> Option<memmap2::Mmap> {
        if !self.map_sequential {
            return None;
        }
        // SAFETY: a published data file is immutable: Cairn never writes to, truncates or
        // replaces one (a rewrite is a new generation), and `new` checked that the file holds
        // every chunk. Another process truncating it while mapped would make a read fault
        // (SIGBUS), as with Cassandra's `disk_access_mode: mmap`; the module docs say so, and
        // `standard` turns mapping off.
        let map = unsafe { memmap2::Mmap::map(&self.file) }.ok()?;
        // The window's reader goes front to back: read ahead generously.
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(map)
    }

    fn chunk_range_checked(&self, i: usize) -> Result<(u64, u32)> {
        match self.offsets.chunk_range(i) {
            Some((offset, disk_len)) if disk_len >= CRC_LEN => Ok((offset, disk_len)),
            Some((offset, _)) => Err(Error::corruption(
                &self.path,
                offset,
                CorruptionKind::Invalid("chunk length"),
            )),
            None => Err(Error::corruption(
                &self.path,
                self.offsets.total_len(),
                CorruptionKind::Invalid("chunk index beyond the end of the data"),
            )),
        }
    }

    fn read_exact(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        crate::io::read_exact_at(&self.file, &self.path, buf, offset)
    }

    /// Reads the whole file once, front to back in `buf_size` reads (`pread`, never a map:
    /// the file may not be a published one), and checks every chunk's CRC; also that the
    /// file ends where the last chunk does. Returns the bytes read. Nothing is decompressed:
    /// a chunk whose CRC holds is the chunk the writer wrote.
    pub fn verify_checksums(&self, buf_size: usize) -> Result<u64> {
        let total = self.offsets.total_len();
        let file_len = self.file.metadata().with_path(&self.path)?.len();
        if file_len != total {
            return Err(Error::corruption(
                &self.path,
                total.min(file_len),
                CorruptionKind::Invalid("data file length (bytes after the last chunk)"),
            ));
        }
        let mut buf = vec![0u8; buf_size.max(1)];
        crate::io::advise_sequential(&self.file);
        // The file bytes in `buf`: [start, start + len).
        let (mut start, mut len) = (0u64, 0usize);
        let mut offset = 0u64;
        for i in 0..self.offsets.chunk_count() {
            let disk_len = match self.offsets.length(i) {
                Some(l) if l >= CRC_LEN => l,
                _ => {
                    return Err(Error::corruption(
                        &self.path,
                        offset,
                        CorruptionKind::Invalid("chunk length"),
                    ))
                }
            };
            let end = offset + u64::from(disk_len);
            if end > start + len as u64 {
                // Refill from this chunk on (a chunk bigger than the buffer grows it).
                let want = ((total - offset) as usize).min(buf.len().max(disk_len as usize));
                if buf.len() < want {
                    buf.resize(want, 0);
                }
                // Ask for the window after this one now, so the disk works while this one's
                // checksums are computed.
                crate::io::advise_will_need(&self.file, offset + want as u64, want as u64);
                let slot = buf.get_mut(..want).unwrap_or_default();
                self.read_exact(slot, offset)?;
                (start, len) = (offset, want);
            }
            let from = (offset - start) as usize;
            let raw = buf
                .get(from..from + disk_len as usize)
                .ok_or_else(|| Error::corruption(&self.path, offset, CorruptionKind::Truncated))?;
            self.verified_payload(offset, raw)?;
            offset = end;
        }
        Ok(total)
    }

    /// Verifies the CRC of chunk `i`'s on-disk bytes `raw` (read at `offset`) and decompresses
    /// them into `out`.
    fn decode_chunk(
        &self,
        i: usize,
        offset: u64,
        raw: &[u8],
        decompressor: &mut Compressor,
        out: &mut Vec<u8>,
        stats: &mut CodecStats,
    ) -> Result<()> {
        let corrupt = |kind| Error::corruption(&self.path, offset, kind);
        let data = self.verified_payload(offset, raw)?;
        let start = Instant::now();
        let r = decompressor.decompress(data, self.uncompressed_chunk_len(i), out);
        stats.record(elapsed_nanos(start));
        r.map_err(corrupt)
    }

    /// [`ChunkedReader::decode_chunk`] into a slice of the chunk's exact uncompressed length,
    /// untimed (scans do not report stalls).
    fn verify_and_decompress(
        &self,
        i: usize,
        offset: u64,
        raw: &[u8],
        decompressor: &mut Compressor,
        dst: &mut [u8],
    ) -> Result<()> {
        let corrupt = |kind| Error::corruption(&self.path, offset, kind);
        let data = self.verified_payload(offset, raw)?;
        if dst.len() != self.uncompressed_chunk_len(i) {
            return Err(corrupt(CorruptionKind::Decompress));
        }
        decompressor.decompress_into(data, dst).map_err(corrupt)
    }

    /// Checks the CRC at the end of a chunk's on-disk bytes and returns the bytes it covers.
    fn verified_payload<'r>(&self, offset: u64, raw: &'r [u8]) -> Result<&'r [u8]> {
        let corrupt = |kind| Error::corruption(&self.path, offset, kind);
        let Some(split) = raw.len().checked_sub(CRC_LEN as usize) else {
            return Err(corrupt(CorruptionKind::Invalid("chunk length")));
        };
        let (data, crc) = raw.split_at(split);
        // Hash before reading the stored CRC: a sequential reader's chunk is usually not in
        // cache yet, and loading its last bytes first costs a whole memory miss per chunk that
        // nothing overlaps; hashing from the front lets the hardware stream the chunk in, and
        // the stored CRC is then in cache (about 2 % of a full LZ4 scan, `docs/benchmarks.md`).
        let actual = crc32fast::hash(data);
        let stored = crc
            .first_chunk::<4>()
            .map(|b| u32::from_le_bytes(*b))
            .unwrap_or(0);
        if stored != actual {
            return Err(corrupt(CorruptionKind::ChecksumMismatch {
                expected: stored,
                actual,
            }));
        }
        Ok(data)
    }
}

/// Compressed bytes of consecutive chunks read with one `pread` (see
/// [`ChunkedReader::read_chunk_ahead`]).
#[derive(Debug, Default)]
pub struct ReadWindow {
    /// File offset of `bytes[0]`.
    start: u64,
    /// The buffer; only `bytes[..len]` holds file data (it is kept at its largest size so a
    /// refill does not zero it again).
    bytes: Vec<u8>,
    len: usize,
    size: usize,
    /// The chunk read last through this window: (index, offset, on-disk length).
    last: Option<(usize, u64, u32)>,
    /// The whole data file mapped, when sequential reads are mapped (see
    /// [`ChunkedReader::map_sequential_reads`]): chunks are then read from it and `bytes` stays empty.
    /// Unmapped with the window, so a finished scan leaves no file pages in the process.
    map: Option<memmap2::Mmap>,
    map_tried: bool,
}

impl ReadWindow {
    /// A window that reads `size` bytes at a time.
    pub fn new(size: usize) -> Self {
        ReadWindow {
            start: 0,
            bytes: Vec::new(),
            len: 0,
            size,
            last: None,
            map: None,
            map_tried: false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rand::{Rng, RngCore, SeedableRng};

    const KIB: u32 = 1024;

    fn codecs() -> [Codec; 5] {
        [
            Codec::None,
            Codec::Lz4,
            Codec::Snappy,
            Codec::Deflate,
            Codec::Zstd { level: 3 },
        ]
    }

    fn structured(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut s = Vec::with_capacity(len + 100);
        while s.len() < len {
            let id: u32 = rng.gen_range(0..100_000);
            s.extend_from_slice(
                format!(
                    "row key={id:08} col=value-{} ts=17000{}\n",
                    id % 313,
                    id % 7
                )
                .as_bytes(),
            );
        }
        s.truncate(len);
        s
    }

    fn random(len: usize, seed: u64) -> Vec<u8> {
        let mut v = vec![0u8; len];
        rand::rngs::StdRng::seed_from_u64(seed).fill_bytes(&mut v);
        v
    }

    /// Every read verifies the CRC (`crc_check_chance` 1), chunks of `kb` KiB.
    fn params(codec: Codec, kb: u32) -> CompressionParams {
        CompressionParams {
            codec,
            chunk_length: kb * KIB,
            crc_check_chance: 1.0,
        }
    }

    fn write_file(
        data: &[u8],
        params: &CompressionParams,
    ) -> (tempfile::NamedTempFile, ChunkedSummary) {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let f = tmp.reopen().unwrap();
        let mut w = ChunkedWriter::new(io::BufWriter::new(f), params).with_path(tmp.path());
        // Odd-sized writes exercise buffering across chunk boundaries and the direct path.
        let mut rng = rand::rngs::StdRng::seed_from_u64(data.len() as u64);
        let mut rest = data;
        while !rest.is_empty() {
            let n = rng.gen_range(1..=rest.len().min(3 * params.chunk_length as usize));
            w.write_all(&rest[..n]).unwrap();
            rest = &rest[n..];
        }
        assert_eq!(w.position(), data.len() as u64);
        let (_, summary) = w.finish().unwrap();
        (tmp, summary)
    }

    fn reader(
        tmp: &tempfile::NamedTempFile,
        s: &ChunkedSummary,
        params: &CompressionParams,
    ) -> Result<ChunkedReader> {
        ChunkedReader::new(
            File::open(tmp.path()).unwrap(),
            tmp.path().to_path_buf(),
            Arc::new(s.offsets.clone()),
            s.uncompressed_len,
            params.codec,
            params.chunk_length,
        )
    }

    fn read_all(r: &ChunkedReader) -> Vec<u8> {
        let mut dec = Compressor::new(r.codec());
        let mut all = Vec::new();
        let mut out = Vec::new();
        for i in 0..r.chunk_count() {
            r.read_chunk(i, &mut dec, &mut out).unwrap();
            all.extend_from_slice(&out);
        }
        all
    }

    /// Writes 200 KiB of structured data in 4 KiB chunks with `codec`, then reads every chunk
    /// in order through one 32 KiB window, mapped or not: (the data, what was read back, the
    /// bytes each read reported, the compressed length, and the reader, window and
    /// decompressor for more reads).
    #[allow(clippy::type_complexity)]
    fn read_sequentially(
        codec: Codec,
        mapped: bool,
    ) -> (
        Vec<u8>,
        Vec<u8>,
        Vec<u64>,
        u64,
        (
            tempfile::NamedTempFile,
            ChunkedReader,
            ReadWindow,
            Compressor,
        ),
    ) {
        let params = params(codec, 4);
        let data = structured(200 * 1024 + 13, 9);
        let (tmp, s) = write_file(&data, &params);
        let r = reader(&tmp, &s, &params)
            .unwrap()
            .map_sequential_reads(mapped);
        let mut window = ReadWindow::new(32 * 1024);
        let mut dec = Compressor::new(codec);
        let (mut all, mut out, mut reads) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..r.chunk_count() {
            reads.push(
                r.read_chunk_ahead(i, &mut window, &mut dec, &mut out)
                    .unwrap(),
            );
            all.extend_from_slice(&out);
        }
        (data, all, reads, s.compressed_len, (tmp, r, window, dec))
    }

    #[test]
    fn read_ahead_matches_single_chunk_reads_and_reads_once_per_window() {
        for codec in codecs() {
            let (data, all, reads, compressed_len, (_tmp, r, mut window, mut dec)) =
                read_sequentially(codec, false);
            assert_eq!(all, data, "{codec:?}");
            let read: u64 = reads.iter().sum();
            assert!(read >= compressed_len, "every byte is read at least once");
            let syscalls = reads.iter().filter(|&&n| n > 0).count();
            let windows = compressed_len.div_ceil(32 * 1024) as usize;
            assert!(
                syscalls <= windows + 1,
                "{syscalls} reads for {windows} windows"
            );
            // Going back re-reads.
            let mut out = Vec::new();
            assert!(
                r.read_chunk_ahead(0, &mut window, &mut dec, &mut out)
                    .unwrap()
                    > 0
            );
        }
    }

    #[test]
    fn mapped_sequential_reads_match_and_count_each_chunk_once() {
        for codec in codecs() {
            let (data, all, reads, compressed_len, (_tmp, r, mut window, mut dec)) =
                read_sequentially(codec, true);
            assert!(window.map.is_some(), "{codec:?}: the file was not mapped");
            assert_eq!(all, data, "{codec:?}");
            assert_eq!(
                reads.iter().sum::<u64>(),
                compressed_len,
                "{codec:?}: bytes read"
            );
            // Out of order too (a cursor that goes back).
            let mut out = Vec::new();
            r.read_chunk_ahead(0, &mut window, &mut dec, &mut out)
                .unwrap();
            assert_eq!(out, &data[..4 * KIB as usize]);
        }
    }

    #[test]
    fn read_ahead_reports_a_corrupt_chunk_at_its_offset() {
        let params = CompressionParams::default();
        let data = structured(64 * 1024, 3);
        let (tmp, s) = write_file(&data, &params);
        let (off5, _) = s.offsets.chunk_range(5).unwrap();
        let mut bytes = std::fs::read(tmp.path()).unwrap();
        bytes[off5 as usize + 1] ^= 0xFF;
        std::fs::write(tmp.path(), &bytes).unwrap();
        for mapped in [false, true] {
            let r = reader(&tmp, &s, &params)
                .unwrap()
                .map_sequential_reads(mapped);
            let mut window = ReadWindow::new(1 << 20);
            let mut dec = Compressor::new(params.codec);
            let mut out = Vec::new();
            for i in 0..r.chunk_count() {
                let res = r.read_chunk_ahead(i, &mut window, &mut dec, &mut out);
                if i == 5 {
                    match res {
                        Err(Error::Corruption { offset, .. }) => {
                            assert_eq!(offset, off5, "mapped {mapped}")
                        }
                        other => panic!("mapped {mapped}: expected corruption, got {other:?}"),
                    }
                } else {
                    res.unwrap();
                }
            }
        }
    }

    #[test]
    fn round_trip_every_codec_and_chunk_size() {
        for codec in codecs() {
            for kb in [1u32, 4, 16, 64, 128] {
                let params = params(codec, kb);
                // Not a multiple of the chunk length, so the last chunk is short.
                let len = (kb * KIB) as usize * 5 + 777;
                for data in [structured(len, 1), random(len, 2)] {
                    let (tmp, s) = write_file(&data, &params);
                    assert_eq!(s.uncompressed_len, len as u64);
                    assert_eq!(s.offsets.chunk_count(), 6);
                    assert_eq!(s.compressed_len, tmp.as_file().metadata().unwrap().len());
                    assert_eq!(s.offsets.total_len(), s.compressed_len);
                    assert_eq!(s.codec_stats.calls, 6);
                    let r = reader(&tmp, &s, &params).unwrap();
                    assert_eq!(read_all(&r), data, "{codec:?} {kb} KiB");
                    assert_eq!(r.chunk_of(0), 0);
                    assert_eq!(r.chunk_of(u64::from(kb * KIB)), 1);
                    assert_eq!(r.chunk_of(len as u64 - 1), 5);
                }
            }
        }
    }

    #[test]
    fn empty_stream() {
        let params = CompressionParams::default();
        let (tmp, s) = write_file(&[], &params);
        assert_eq!(s.offsets.chunk_count(), 0);
        assert_eq!(s.compressed_len, 0);
        let r = reader(&tmp, &s, &params).unwrap();
        let mut out = Vec::new();
        assert!(r
            .read_chunk(0, &mut Compressor::new(params.codec), &mut out)
            .is_err());
    }

    #[test]
    fn offsets_stay_under_three_bytes_per_chunk() {
        // Worst case for the bit width: every chunk incompressible (stored longer than the chunk
        // length). 4096 chunks so the fixed struct size does not dominate.
        for kb in [1u32, 2, 4, 8, 16, 32, 64, 128] {
            let cl = kb * KIB;
            for (name, len) in [
                (
                    "incompressible",
                    lz4_flex::block::get_maximum_output_size(cl as usize) as u32 + CRC_LEN,
                ),
                ("compressible", cl / 3 + CRC_LEN),
            ] {
                let mut b = ChunkOffsetsBuilder::new();
                let mut rng = rand::rngs::StdRng::seed_from_u64(3);
                for _ in 0..4096 {
                    b.push(rng.gen_range(len / 2..=len));
                }
                let o = b.finish();
                assert!(
                    o.bytes_per_chunk() <= 3.0,
                    "{kb} KiB {name}: {}",
                    o.bytes_per_chunk()
                );
            }
        }
    }

    #[test]
    fn real_files_stay_under_three_bytes_per_chunk() {
        for kb in [1u32, 4, 16, 64, 128] {
            let params = params(Codec::Lz4, kb);
            // 256 chunks each.
            let len = (kb * KIB) as usize * 256;
            for data in [structured(len, 5), random(len, 6)] {
                let (_tmp, s) = write_file(&data, &params);
                let bpc = s.offsets.bytes_per_chunk();
                println!(
                    "{kb:>3} KiB chunks, {} chunks, ratio {:.2}: {bpc:.3} bytes/chunk",
                    s.offsets.chunk_count(),
                    s.compressed_len as f64 / s.uncompressed_len as f64
                );
                assert!(bpc <= 3.0, "{kb} KiB: {bpc}");
            }
        }
    }

    #[test]
    fn chunk_ranges_match_lengths() {
        let mut b = ChunkOffsetsBuilder::new();
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let lens: Vec<u32> = (0..1000).map(|_| rng.gen_range(4..200_000)).collect();
        for &l in &lens {
            b.push(l);
        }
        let o = b.finish();
        let mut pos = 0u64;
        for (i, &l) in lens.iter().enumerate() {
            assert_eq!(o.chunk_range(i), Some((pos, l)));
            pos += u64::from(l);
        }
        assert_eq!(o.chunk_range(lens.len()), None);
        assert_eq!(o.total_len(), pos);
    }

    #[test]
    fn offsets_encode_decode() {
        for n in [0usize, 1, 63, 64, 65, 1000] {
            let mut b = ChunkOffsetsBuilder::new();
            for i in 0..n {
                b.push(4 + (i as u32 * 7919) % 5000);
            }
            let o = b.finish();
            let mut buf = Vec::new();
            o.encode(&mut buf);
            assert_eq!(ChunkOffsets::decode(&buf).unwrap(), o);
            // Every truncation and an extra byte are rejected.
            for cut in 0..buf.len() {
                assert!(ChunkOffsets::decode(&buf[..cut]).is_err());
            }
            let mut longer = buf.clone();
            longer.push(0);
            assert!(ChunkOffsets::decode(&longer).is_err());
            // A wrong base offset is caught.
            if n > 64 {
                let mut bad = buf.clone();
                bad[9 + 8] ^= 1;
                assert!(ChunkOffsets::decode(&bad).is_err());
            }
        }
        // Garbage, including absurd counts, is an error and never a panic or a huge allocation.
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        for _ in 0..1000 {
            let mut g = vec![0u8; rng.gen_range(0..200)];
            rng.fill_bytes(&mut g);
            let _ = ChunkOffsets::decode(&g);
        }
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.push(20);
        assert!(ChunkOffsets::decode(&huge).is_err());
        let mut huge = (1u64 << 40).to_le_bytes().to_vec();
        huge.push(20);
        assert_eq!(ChunkOffsets::decode(&huge), Err(CorruptionKind::Truncated));
    }

    #[test]
    fn flipped_byte_names_the_chunk_and_spares_the_others() {
        for codec in codecs() {
            let params = params(codec, 4);
            let data = structured(4 * 4096 + 100, 8);
            let (tmp, s) = write_file(&data, &params);
            let (off, len) = s.offsets.chunk_range(2).unwrap();
            let mut bytes = std::fs::read(tmp.path()).unwrap();
            bytes[(off + u64::from(len) / 2) as usize] ^= 0x40;
            std::fs::write(tmp.path(), &bytes).unwrap();
            let r = reader(&tmp, &s, &params).unwrap();
            let mut dec = Compressor::new(codec);
            let mut out = Vec::new();
            match r.read_chunk(2, &mut dec, &mut out) {
                Err(Error::Corruption {
                    path,
                    offset,
                    kind: CorruptionKind::ChecksumMismatch { .. },
                }) => {
                    assert_eq!(offset, off);
                    assert_eq!(path, tmp.path());
                }
                other => panic!("{codec:?}: {other:?}"),
            }
            for i in [0usize, 1, 3, 4] {
                r.read_chunk(i, &mut dec, &mut out).unwrap();
                let st = i * 4096;
                assert_eq!(&out[..], &data[st..(st + 4096).min(data.len())]);
            }
        }
    }

    #[test]
    fn bad_compressed_data_with_good_crc_is_decompress_error() {
        // A chunk whose CRC matches but whose contents do not decompress (a writer bug, or a
        // codec mismatch) must say Decompress at the chunk's offset.
        let params = params(Codec::Lz4, 4);
        let data = random(3 * 4096, 1);
        let (tmp, s) = write_file(&data, &params);
        let (off, _) = s.offsets.chunk_range(1).unwrap();
        let r = ChunkedReader::new(
            File::open(tmp.path()).unwrap(),
            tmp.path().to_path_buf(),
            Arc::new(s.offsets.clone()),
            s.uncompressed_len,
            Codec::Zstd { level: 3 },
            params.chunk_length,
        )
        .unwrap();
        let mut out = Vec::new();
        match r.read_chunk(1, &mut Compressor::new(Codec::Zstd { level: 3 }), &mut out) {
            Err(Error::Corruption {
                offset,
                kind: CorruptionKind::Decompress,
                ..
            }) => assert_eq!(offset, off),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_file_is_an_error() {
        let params = CompressionParams::default();
        let data = structured(10 * 4096, 3);
        let (tmp, s) = write_file(&data, &params);
        let full = s.compressed_len;
        // Truncated before opening: refused at open.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(tmp.path())
            .unwrap();
        f.set_len(full - 10).unwrap();
        match reader(&tmp, &s, &params) {
            Err(Error::Corruption {
                kind: CorruptionKind::Truncated,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        // Truncated after opening: the read of the cut chunk fails, earlier chunks still read.
        f.set_len(full).unwrap();
        let r = reader(&tmp, &s, &params).unwrap();
        f.set_len(full - 10).unwrap();
        let mut dec = Compressor::new(params.codec);
        let mut out = Vec::new();
        let last = s.offsets.chunk_count() - 1;
        let (off, _) = s.offsets.chunk_range(last).unwrap();
        match r.read_chunk(last, &mut dec, &mut out) {
            Err(Error::Corruption {
                offset,
                kind: CorruptionKind::Truncated,
                ..
            }) => assert_eq!(offset, off),
            other => panic!("{other:?}"),
        }
        r.read_chunk(0, &mut dec, &mut out).unwrap();
        assert_eq!(&out[..], &data[..4096]);
        // Offsets that do not match the data length are refused.
        assert!(ChunkedReader::new(
            File::open(tmp.path()).unwrap(),
            tmp.path().to_path_buf(),
            Arc::new(s.offsets.clone()),
            s.uncompressed_len + 4096,
            params.codec,
            params.chunk_length,
        )
        .is_err());
    }

    #[test]
    fn reader_is_shared_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<ChunkedReader>();
        let params = params(Codec::Zstd { level: 1 }, 4);
        let data = structured(64 * 4096, 12);
        let (tmp, s) = write_file(&data, &params);
        let r = Arc::new(reader(&tmp, &s, &params).unwrap());
        std::thread::scope(|scope| {
            for t in 0..4 {
                let r = Arc::clone(&r);
                let data = &data;
                scope.spawn(move || {
                    let mut dec = Compressor::new(r.codec());
                    let mut out = Vec::new();
                    let mut stats = CodecStats::default();
                    for i in (t..64).step_by(4) {
                        r.read_chunk_timed(i, &mut dec, &mut out, &mut stats)
                            .unwrap();
                        assert_eq!(&out[..], &data[i * 4096..(i + 1) * 4096]);
                    }
                    assert_eq!(stats.calls, 16);
                });
            }
        });
    }

    #[test]
    fn write_error_surfaces() {
        struct Failing;
        impl Write for Failing {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut w =
            ChunkedWriter::new(Failing, &CompressionParams::default()).with_path("/x/Data.db");
        assert!(w.write_all(&[0u8; 5000]).is_err());
        match w.finish() {
            Err(Error::Io { path, .. }) => assert_eq!(path, Path::new("/x/Data.db")),
            other => panic!("{:?}", other.map(|(_, s)| s)),
        }
    }
}
