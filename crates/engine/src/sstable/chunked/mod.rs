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
//! and no chunk is empty. Uncompressed tables ([`Codec::None`](crate::schema::compression::Codec::None)) use the same layout, so every byte
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
//! [`ChunkedReader`]; each thread brings its own [`Compressor`](crate::sstable::compression::Compressor) (codec contexts and read buffer).
//! Sequential readers (scans, compaction) instead read the file through a read-only memory map
//! held by their [`ReadWindow`] by default, which spares copying every compressed byte out of
//! the page cache; point reads keep `pread`, so a small read never faults in more than it
//! needs. Either way every chunk's CRC is checked before it is decompressed. See
//! [`ChunkedReader::map_sequential_reads`] for the one price of the map: a data file truncated by
//! another process while mapped faults the reader (SIGBUS) instead of returning an error.

//!
//! Pieces: `offsets` (the packed chunk offsets), `writer`, `reader` (with its read window),
//! `stats` (codec call timing).

mod offsets;
mod reader;
mod stats;
#[cfg(test)]
mod tests;
mod writer;

pub use offsets::{ChunkOffsets, ChunkOffsetsBuilder, CRC_LEN, GROUP};
pub use reader::{ChunkedReader, ReadWindow};
pub use stats::CodecStats;
pub use writer::{ChunkedSummary, ChunkedWriter};
