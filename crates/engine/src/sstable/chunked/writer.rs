//! Writing a data file chunk by chunk: compress, checksum, append, and record each chunk's
//! length.

use super::offsets::{ChunkOffsets, ChunkOffsetsBuilder};
use super::stats::{elapsed_nanos, CodecStats};
use crate::error::{Error, IoResultExt, Result};
use crate::schema::compression::CompressionParams;
use crate::sstable::compression::Compressor;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;

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
