//! SSTables: immutable, sorted, chunk-compressed files of partitions.
//!
//! See `docs/sstable-format.md` for the byte layout. Pieces: [`format`](mod@format) (names and
//! stream tags), [`compression`] (the chunk codecs; a table's compression options are in
//! [`crate::schema::compression`]), [`chunked`] (the checksummed chunk layer and packed chunk
//! offsets), [`index`] (paged partition and clustering-block indexes), [`bloom`], [`stats`]
//! (whose histograms are [`crate::metrics::histogram`]'s), [`writer`] and [`reader`]; [`source`] makes an sstable a source of the read path.

pub mod bloom;
pub mod chunked;
pub mod compression;
pub mod format;
pub mod index;
pub mod reader;
pub mod source;
pub mod stats;
pub mod writer;
