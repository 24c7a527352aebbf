//! SSTables: immutable, sorted, chunk-compressed files of partitions.
//!
//! See `docs/sstable-format.md` for the byte layout. Pieces: [`format`](mod@format) (names and
//! stream
//! tags), [`compression`] (codecs and options), [`chunked`] (the checksummed chunk layer and
//! packed chunk offsets), [`index`] (paged partition and clustering-block indexes),
//! [`bloom`], [`histogram`], [`stats`], [`writer`] and [`reader`].

pub mod bloom;
pub mod chunked;
pub mod compression;
pub mod format;
pub mod histogram;
pub mod index;
pub mod reader;
pub mod stats;
pub mod writer;
