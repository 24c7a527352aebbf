//! Reading chunks back: positioned reads (`pread`) for point reads, a read-ahead window (mapped
//! by default) for sequential ones; every chunk's CRC checked before it is decompressed.

use super::offsets::{ChunkOffsets, CRC_LEN};
use super::stats::{elapsed_nanos, CodecStats};
use crate::error::{CorruptionKind, Error, IoResultExt, Result};
use crate::io::Wait;
use crate::schema::compression::Codec;
use crate::sstable::compression::Compressor;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Reads chunks of a data file written by [`ChunkedWriter`](super::ChunkedWriter). `Send + Sync`: share it.
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
        wait: Wait,
    ) -> Result<u64> {
        let mut stats = CodecStats::default();
        self.read_chunk_timed(i, decompressor, out, &mut stats, wait)
    }

    /// [`ChunkedReader::read_chunk`], also recording the decompress call's time in `stats`.
    pub fn read_chunk_timed(
        &self,
        i: usize,
        decompressor: &mut Compressor,
        out: &mut Vec<u8>,
        stats: &mut CodecStats,
        wait: Wait,
    ) -> Result<u64> {
        out.clear();
        self.with_disk_chunk(i, decompressor, wait, |offset, raw, d| {
            self.decode_chunk(i, offset, raw, d, out, stats)
        })
    }

    /// Reads chunk `i`'s on-disk bytes into the decompressor's scratch buffer and hands them
    /// (with their file offset) to `decode`; returns the bytes read from disk.
    fn with_disk_chunk(
        &self,
        i: usize,
        decompressor: &mut Compressor,
        wait: Wait,
        decode: impl FnOnce(u64, &[u8], &mut Compressor) -> Result<()>,
    ) -> Result<u64> {
        let (offset, disk_len) = self.chunk_range_checked(i)?;
        let mut buf = std::mem::take(&mut decompressor.scratch);
        buf.clear();
        buf.resize(disk_len as usize, 0);
        let result = self
            .read_exact(&mut buf, offset, wait)
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
        wait: Wait,
    ) -> Result<u64> {
        self.with_disk_chunk(i, decompressor, wait, |offset, raw, d| {
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
        wait: Wait,
    ) -> Result<u64> {
        out.clear();
        out.resize(self.uncompressed_chunk_len(i), 0);
        match self.read_chunk_ahead_into(i, window, decompressor, out, wait) {
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
        wait: Wait,
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
            self.read_exact(buf, offset, wait)?;
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

    fn read_exact(&self, buf: &mut [u8], offset: u64, wait: Wait) -> Result<()> {
        crate::io::read_exact_at(&self.file, &self.path, buf, offset, wait)
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
                // Verification runs where it may wait (a tool, a REST request's thread).
                self.read_exact(slot, offset, Wait::Allowed)?;
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
    pub(super) map: Option<memmap2::Mmap>,
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
