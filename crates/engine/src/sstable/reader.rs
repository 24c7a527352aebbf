//! Reading one sstable: open, point lookup, lazy row iteration, index scans, deletion.
//!
//! Opening loads the small components into memory (summary, bloom filter, packed chunk
//! offsets, statistics) and keeps the data, index and row-index files open. A point lookup
//! costs one index-page read; a partition of one block costs the chunk(s) it lies in; a large
//! partition is read block by block through its clustering-block index, forward or reversed,
//! so `LIMIT 1` on a 100 MB partition reads about one block.
//!
//! Forward reads through a scan cursor that start at a partition's first row (full scans,
//! range scans, compaction) do not use the clustering-block index: they stream through the
//! partition body and decode one row per `next` straight out of the [`DataCursor`]'s
//! decompressed chunk, so keys and cell values are slices of that buffer (no copy). A row that
//! straddles a chunk boundary is decoded after its head is carried in front of the next chunk.
//! Invariant: the cursor only ever writes into its buffer when nothing else references it
//! (checked with `Bytes::try_into_mut`), so rows a caller keeps are never overwritten; a caller
//! that keeps rows costs one fresh buffer per chunk, one that drops them costs none. Point
//! reads copy what they return instead, so a small result never pins a whole chunk. Every
//! chunk's CRC is verified before it is decompressed, on every path.
//!
//! Index pages: with the row cache on, the partition-index pages of point lookups that use it
//! ([`SourceQuery::index_cache`]: queries not bypassing the cache) are kept in the cache's LRU
//! ([`crate::cache::index_pages`]) and served from it, so a point lookup whose page is cached
//! reads the data chunk alone. A page served from the cache is counted as neither an
//! index-page read nor bytes read. Scans, compaction and tools read pages from disk and do
//! not cache them: they read each page once, in order, and would only push out the pages
//! point lookups use (ScyllaDB keeps compaction and `BYPASS CACHE` out of its index cache too).
//!
//! [`SourceQuery::index_cache`]: crate::read::source::SourceQuery::index_cache
//!
//! One file of about 1 100 lines: the sstable, its row iterator ([`RowIter`], [`DataCursor`])
//! and its index scanner ([`IndexScanner`]) share private state both ways — the sstable
//! builds them from its internals and they read its files through its private methods — so
//! split into files they would import each other.
//!
//! Deletion: [`SSTable::mark_deleted`] only flags the sstable; the files go when the last
//! `Arc<SSTable>` is dropped, so a reader that holds it keeps reading consistent data.

use super::bloom::BloomFilter;
use super::chunked::{ChunkOffsets, ChunkedReader, ReadWindow};
use super::compression::Compressor;
use super::format::*;
use super::index::{Page, PageRef, Summary};
use super::stats::SSTableStats;
use crate::cache::IndexPageCache;
use crate::error::{CorruptionKind, Error, IoResultExt, Result};
use crate::io::{check_crc, Wait};
use crate::metrics::{IoCounters, ReadKind};
use crate::model::codec::{get_deletion, get_range_tombstone, get_row, DecodeError, Decoder};
use crate::model::{
    ClusteringKey, ClusteringRange, DecoratedKey, DeletionTime, PartitionPos, RangeTombstone, Row,
    Slice,
};
use crate::schema::compression::CompressionParams;
use bytes::{Bytes, BytesMut};
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where a partition lives in the data stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The partition key.
    pub key: DecoratedKey,
    /// Uncompressed stream position of the partition.
    pub data_pos: u64,
    /// Serialized length.
    pub len: u64,
    /// Length of the header (key, deletion, static row, range tombstones).
    pub header_len: u64,
    /// Offset and length of the clustering-block index summary in `Rows.db`.
    pub rows_ref: Option<(u64, u32)>,
}

/// A partition's header data.
#[derive(Debug, Clone, Default)]
pub struct PartitionHeader {
    /// Partition tombstone.
    pub deletion: Option<DeletionTime>,
    /// Static row.
    pub static_row: Option<Row>,
    /// Range tombstones.
    pub range_tombstones: Vec<RangeTombstone>,
}

/// An open sstable.
pub struct SSTable {
    /// Generation number.
    pub generation: u64,
    dir: PathBuf,
    data: ChunkedReader,
    index_file: File,
    /// Kept so reads name the file in errors without formatting its path each time.
    index_path: PathBuf,
    rows_file: File,
    rows_path: PathBuf,
    summary: Summary,
    bloom: BloomFilter,
    /// Statistics.
    pub stats: SSTableStats,
    /// Codec and chunk size the sstable was written with.
    pub compression: CompressionParams,
    offsets_memory: usize,
    offset_bytes_per_chunk: f64,
    disk_bytes: u64,
    io: Arc<IoCounters>,
    deleted: AtomicBool,
    /// The cache of this sstable's index pages (with the row cache on).
    index_cache: Option<IndexPageCache>,
    /// Values kept alive until this sstable is dropped (after its files are deleted, since
    /// fields drop after `Drop::drop`): a compaction's transaction log must outlive the
    /// files of the inputs it removed.
    holds: parking_lot::Mutex<Vec<Arc<dyn std::any::Any + Send + Sync>>>,
}

impl std::fmt::Debug for SSTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SSTable({}/{})", self.dir.display(), self.generation)
    }
}

fn read_checked(path: &Path) -> Result<Vec<u8>> {
    let buf = std::fs::read(path).with_path(path)?;
    check_crc(&buf, path)?;
    Ok(buf)
}

fn corrupt(path: &Path, base: u64) -> impl Fn(DecodeError) -> Error + '_ {
    move |e| Error::corruption(path, base + e.offset as u64, e.kind)
}

/// Decodes the next item of a partition body: a clustering row, or `None` at the end tag.
///
/// On a buffer that holds only a prefix of the item this fails with
/// [`CorruptionKind::Truncated`] and no other kind (every other check needs bytes that are
/// there), which the streaming reader uses to tell "the row continues in the next chunk" from
/// damage.
fn get_body_item(
    d: &mut Decoder<'_>,
    base: i64,
) -> Result<Option<(ClusteringKey, Row)>, DecodeError> {
    match d.u8()? {
        TAG_ROW => {
            let ck = ClusteringKey(d.bytes()?);
            let row = get_row(d, base)?;
            Ok(Some((ck, row)))
        }
        TAG_END => Ok(None),
        _ => Err(DecodeError {
            offset: d.position() - 1,
            kind: CorruptionKind::Invalid("row tag"),
        }),
    }
}

impl SSTable {
    /// How its sequential reads read the data file (see
    /// [`ChunkedReader::map_sequential_reads`]; mapped by default).
    pub fn map_sequential_reads(mut self, on: bool) -> Self {
        self.data.set_map_sequential_reads(on);
        self
    }

    /// Drops the sstable's pages from the index-page cache (its table stopped using it).
    pub fn drop_cached_index_pages(&self) {
        if let Some(c) = &self.index_cache {
            c.clear();
        }
    }

    /// Keeps the index pages queries read in `cache` (see the module doc).
    pub fn with_index_cache(mut self, cache: Option<IndexPageCache>) -> Self {
        self.index_cache = cache;
        self
    }

    /// Opens a committed sstable (its TOC must exist).
    pub fn open(dir: &Path, generation: u64, io: Arc<IoCounters>) -> Result<SSTable> {
        let path = |c| component_path(dir, generation, c);
        let toc = path(Component::Toc);
        if !toc.exists() {
            return Err(Error::io(
                &toc,
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        }

        let summary_path = path(Component::Summary);
        let buf = read_checked(&summary_path)?;
        let body = &buf[..buf.len() - 4];
        let summary =
            Summary::decode(&mut Decoder::new(body)).map_err(corrupt(&summary_path, 0))?;

        let filter_path = path(Component::Filter);
        let buf = read_checked(&filter_path)?;
        let bloom = BloomFilter::decode(&buf[..buf.len() - 4])
            .map_err(|k| Error::corruption(&filter_path, 0, k))?;

        let ci_path = path(Component::CompressionInfo);
        let buf = read_checked(&ci_path)?;
        let mut d = Decoder::new(&buf[..buf.len() - 4]);
        let (opts, chunk_length, uncompressed_len, offsets) = (|| {
            if d.raw(4)? != MAGIC {
                return Err(DecodeError {
                    offset: 0,
                    kind: CorruptionKind::BadMagic,
                });
            }
            let v = d.u32_le()?;
            if v != FORMAT_VERSION {
                return Err(DecodeError {
                    offset: 4,
                    kind: CorruptionKind::UnsupportedVersion(v),
                });
            }
            let n = d.len()?;
            let mut opts = Vec::with_capacity(n);
            for _ in 0..n {
                let k = String::from_utf8_lossy(&d.bytes()?).into_owned();
                let v = String::from_utf8_lossy(&d.bytes()?).into_owned();
                opts.push((k, v));
            }
            let chunk_length = d.uvarint32()?;
            let uncompressed_len = d.uvarint()?;
            let at = d.position();
            let raw = d.bytes()?;
            let offsets =
                ChunkOffsets::decode(&raw).map_err(|kind| DecodeError { offset: at, kind })?;
            Ok((opts, chunk_length, uncompressed_len, offsets))
        })()
        .map_err(corrupt(&ci_path, 0))?;
        let mut compression = CompressionParams::from_options(&opts)?;
        compression.chunk_length = chunk_length;

        let stats_path = path(Component::Statistics);
        let buf = read_checked(&stats_path)?;
        let stats = SSTableStats::decode(&buf[..buf.len() - 4], &stats_path)?;

        let data_path = path(Component::Data);
        let data_file = File::open(&data_path).with_path(&data_path)?;
        let offsets = Arc::new(offsets);
        let offsets_memory = offsets.memory_bytes();
        let offset_bytes_per_chunk = offsets.bytes_per_chunk();
        let data = ChunkedReader::new(
            data_file,
            data_path,
            offsets,
            uncompressed_len,
            compression.codec,
            chunk_length,
        )?;
        let index_path = path(Component::Index);
        let index_file = File::open(&index_path).with_path(&index_path)?;
        let rows_path = path(Component::Rows);
        let rows_file = File::open(&rows_path).with_path(&rows_path)?;
        let mut disk_bytes = 0;
        for c in Component::ALL {
            disk_bytes += std::fs::metadata(path(c)).map(|m| m.len()).unwrap_or(0);
        }
        Ok(SSTable {
            generation,
            dir: dir.to_path_buf(),
            data,
            index_file,
            index_path,
            rows_file,
            rows_path,
            summary,
            bloom,
            stats,
            compression,
            offsets_memory,
            offset_bytes_per_chunk,
            disk_bytes,
            io,
            deleted: AtomicBool::new(false),
            index_cache: None,
            holds: parking_lot::Mutex::new(Vec::new()),
        })
    }

    /// Reads every byte of the streamed components once and checks every checksum the
    /// format has — each data chunk's, each partition index page's and each clustering-block
    /// index's (`open` checked the small components) — and that index entries are in key
    /// order, point inside the data and span the sstable's first to last key. Errors name the
    /// file and the offset. Returns the bytes read. `buf_size` is the data file's read size.
    pub fn verify(&self, buf_size: usize) -> Result<u64> {
        let mut bytes = self.data.verify_checksums(buf_size)?;
        // Index pages are read in order, a few KiB each: have the whole file read ahead.
        crate::io::advise_sequential(&self.index_file);
        crate::io::advise_will_need(&self.index_file, 0, 0);
        let mut prev: Option<Bytes> = None;
        let mut entries = 0u64;
        for r in &self.summary.pages {
            let page = Page::read(&self.index_file, &self.index_path, r, Wait::Allowed)?;
            bytes += u64::from(r.len);
            for (k, v) in &page.entries {
                if prev.as_ref().is_some_and(|p| p >= k) {
                    return Err(Error::corruption(
                        &self.index_path,
                        r.offset,
                        CorruptionKind::Invalid("index keys out of order"),
                    ));
                }
                let entry = self.parse_entry(k, v, r.offset)?;
                if entries == 0 && entry.key != self.stats.first_key {
                    return Err(Error::corruption(
                        &self.index_path,
                        r.offset,
                        CorruptionKind::Invalid("first index key differs from the statistics'"),
                    ));
                }
                if let Some(rows) = entry.rows_ref {
                    let summary = self.read_rows_summary(rows, ReadKind::Other, Wait::Allowed)?;
                    bytes += u64::from(rows.1);
                    for p in &summary.pages {
                        Page::read(&self.rows_file, &self.rows_path, p, Wait::Allowed)?;
                        bytes += u64::from(p.len);
                    }
                }
                prev = Some(k.clone());
                entries += 1;
            }
        }
        let last_ok = prev
            .as_ref()
            .and_then(decorated_from_index_key)
            .is_some_and(|k| k == self.stats.last_key);
        if entries != self.stats.partition_count || !last_ok {
            return Err(Error::corruption(
                &self.index_path,
                0,
                CorruptionKind::Invalid("index entries differ from the statistics"),
            ));
        }
        Ok(bytes)
    }

    /// Path of one of this sstable's components.
    pub fn path(&self, c: Component) -> PathBuf {
        component_path(&self.dir, self.generation, c)
    }

    /// Bytes on disk over all components.
    pub fn disk_bytes(&self) -> u64 {
        self.disk_bytes
    }

    /// Heap bytes of in-memory metadata: (chunk offsets, index summary, bloom filter).
    pub fn memory_bytes(&self) -> (usize, usize, usize) {
        (
            self.offsets_memory,
            self.summary.memory_bytes(),
            self.bloom.memory_bytes(),
        )
    }

    /// Average in-memory bytes per chunk offset.
    pub fn offset_bytes_per_chunk(&self) -> f64 {
        self.offset_bytes_per_chunk
    }

    /// Keeps `value` alive until this sstable is dropped (and, if marked deleted, its files
    /// are gone).
    pub fn hold_until_dropped(&self, value: Arc<dyn std::any::Any + Send + Sync>) {
        self.holds.lock().push(value);
    }

    /// Flags the sstable for deletion once no reader holds it.
    pub fn mark_deleted(&self) {
        if !self.deleted.swap(true, Ordering::SeqCst) {
            self.io.add_obsolete(self.disk_bytes);
        }
    }

    /// True when `key` may be in this sstable (key range, then bloom filter). `hash` is
    /// `murmur3_x64_128(key, 0)`, computed once per read by the caller rather than once per
    /// sstable.
    pub fn may_contain(&self, key: &DecoratedKey, hash: (u64, u64)) -> bool {
        if *key < self.stats.first_key || *key > self.stats.last_key {
            return false;
        }
        self.bloom.may_contain(hash)
    }

    fn load_index_page(&self, page_no: usize, kind: ReadKind, wait: Wait) -> Result<Option<Page>> {
        let Some(r) = self.summary.pages.get(page_no) else {
            return Ok(None);
        };
        let page = Page::read(&self.index_file, &self.index_path, r, wait)?;
        self.count_index_page(kind, r.len);
        Ok(Some(page))
    }

    /// The verified body of index page `page_no` (at `r`) through the index-page cache: from
    /// the cache, or read (and counted) and cached. `None` when the read does not go through
    /// the cache (no cache, `use_cache` false, or not a query).
    fn cached_index_page(
        &self,
        page_no: usize,
        r: &PageRef,
        kind: ReadKind,
        use_cache: bool,
        wait: Wait,
    ) -> Result<Option<Bytes>> {
        let (Some(cache), ReadKind::Query, true, Ok(page_no)) =
            (&self.index_cache, kind, use_cache, u32::try_from(page_no))
        else {
            return Ok(None);
        };
        if let Some(body) = cache.get(page_no) {
            return Ok(Some(body));
        }
        let body = Page::read_body(&self.index_file, &self.index_path, r, wait)?;
        self.count_index_page(kind, r.len);
        cache.insert(page_no, body.clone());
        Ok(Some(body))
    }

    /// Counts an index page of `len` bytes read from disk.
    fn count_index_page(&self, kind: ReadKind, len: u32) {
        self.io.add_index_page_read();
        self.io.add_read(kind, u64::from(len));
    }

    /// The index entry under index key `k` with value `v` (in the page at `page_offset`).
    fn parse_entry(&self, k: &Bytes, v: &[u8], page_offset: u64) -> Result<IndexEntry> {
        let key = decorated_from_index_key(k).ok_or_else(|| {
            Error::corruption(
                &self.index_path,
                page_offset,
                CorruptionKind::Invalid("index key"),
            )
        })?;
        self.entry_value(key, v, page_offset)
    }

    /// The index entry of `key` from its index value `v` (in the page at `page_offset`).
    fn entry_value(&self, key: DecoratedKey, v: &[u8], page_offset: u64) -> Result<IndexEntry> {
        let index_path = &self.index_path;
        let mut d = Decoder::new(v);
        let r = (|| {
            let data_pos = d.uvarint()?;
            let len = d.uvarint()?;
            let header_len = d.uvarint()?;
            let ro = d.uvarint()?;
            let rl = d.uvarint32()?;
            Ok((data_pos, len, header_len, (rl > 0).then_some((ro, rl))))
        })();
        let (data_pos, len, header_len, rows_ref) =
            r.map_err(|e: DecodeError| Error::corruption(index_path, page_offset, e.kind))?;
        if data_pos
            .checked_add(len)
            .is_none_or(|end| end > self.data.uncompressed_len())
            || header_len > len
        {
            return Err(Error::corruption(
                index_path,
                page_offset,
                CorruptionKind::Invalid("index entry points outside the data"),
            ));
        }
        Ok(IndexEntry {
            key,
            data_pos,
            len,
            header_len,
            rows_ref,
        })
    }

    /// Finds a partition's index entry: one index-page read, none when `use_cache` and the
    /// page is in the index-page cache.
    pub fn find(
        &self,
        key: &DecoratedKey,
        kind: ReadKind,
        use_cache: bool,
        wait: Wait,
    ) -> Result<Option<IndexEntry>> {
        let ik = index_key(key);
        let Some((page_no, r)) = self
            .summary
            .floor(&ik)
            .and_then(|n| Some((n, self.summary.pages.get(n)?)))
        else {
            return Ok(None);
        };
        let value = match self.cached_index_page(page_no, r, kind, use_cache, wait)? {
            Some(body) => Page::lookup_in(&body, &self.index_path, r.offset, &ik)?,
            None => {
                let value = Page::lookup(&self.index_file, &self.index_path, r, &ik, wait)?;
                self.count_index_page(kind, r.len);
                value
            }
        };
        match value {
            Some(v) => Ok(Some(self.entry_value(key.clone(), &v, r.offset)?)),
            None => Ok(None),
        }
    }

    /// [`SSTable::find`] for a key [`SSTable::may_contain`] admitted, counting the bloom
    /// filter's answer as a true or a false positive in the table's counters.
    pub fn find_admitted(
        &self,
        key: &DecoratedKey,
        kind: ReadKind,
        use_cache: bool,
        wait: Wait,
    ) -> Result<Option<IndexEntry>> {
        let entry = self.find(key, kind, use_cache, wait)?;
        self.io.add_bloom_outcome(entry.is_some());
        Ok(entry)
    }

    /// A cursor for point reads: reads exactly the chunks it needs. What it reads waits for
    /// the disk as `wait` says.
    pub fn cursor(&self, kind: ReadKind, wait: Wait) -> DataCursor {
        DataCursor {
            buf: Bytes::new(),
            buf_pos: 0,
            decomp: Compressor::new(self.compression.codec),
            kind,
            wait,
            window: None,
        }
    }

    /// A cursor for sequential reads (scans, compaction): reads ahead [`SCAN_READ_AHEAD`]
    /// bytes of chunks per system call.
    pub fn scan_cursor(&self, kind: ReadKind, wait: Wait) -> DataCursor {
        DataCursor {
            window: Some(ReadWindow::new(SCAN_READ_AHEAD)),
            ..self.cursor(kind, wait)
        }
    }

    /// Reads `len` uncompressed bytes at `pos` (a copy: point reads keep no chunk alive).
    pub fn read_range(&self, cur: &mut DataCursor, pos: u64, len: u64) -> Result<Bytes> {
        let end = pos.saturating_add(len);
        if end > self.data.uncompressed_len() {
            return Err(Error::corruption(
                self.data.path(),
                pos,
                CorruptionKind::Truncated,
            ));
        }
        let mut out = Vec::with_capacity(len as usize);
        let mut p = pos;
        while p < end {
            if !cur.holds(p) {
                self.load_chunk(cur, self.data.chunk_of(p), None)?;
            }
            let off = (p - cur.buf_pos) as usize;
            let avail = cur.buf.len().saturating_sub(off);
            if avail == 0 {
                return Err(Error::corruption(
                    self.data.path(),
                    p,
                    CorruptionKind::Truncated,
                ));
            }
            let take = avail.min((end - p) as usize);
            out.extend_from_slice(cur.buf.get(off..off + take).unwrap_or_default());
            p += take as u64;
        }
        Ok(Bytes::from(out))
    }

    /// Makes `cur` hold chunk `ci`, preceded by the bytes from stream position `carry_from` to
    /// the end of what it holds now (`None`: nothing carried). Carrying lets a row that straddles
    /// a chunk boundary be decoded from one contiguous buffer; only that row's head is copied.
    ///
    /// The buffer is reused in place when no row decoded from it is still alive (the common
    /// case in a scan, whose caller drops each row), so steady-state scanning neither allocates
    /// nor zero-fills; otherwise a fresh buffer is allocated and the old one lives on in the
    /// rows that point into it.
    fn load_chunk(&self, cur: &mut DataCursor, ci: usize, carry_from: Option<u64>) -> Result<()> {
        let chunk_len = self.data.uncompressed_chunk_len(ci);
        let chunk_start = ci as u64 * u64::from(self.data.chunk_length());
        // Carry only what ends exactly where chunk `ci` starts, so the buffer stays contiguous.
        let carry = match carry_from {
            Some(p) if cur.holds(p) && cur.end() == chunk_start => {
                (p - cur.buf_pos) as usize..cur.buf.len()
            }
            _ => 0..0,
        };
        let keep = carry.len();
        let need = keep + chunk_len;
        let old = std::mem::take(&mut cur.buf);
        let mut buf = match old.try_into_mut() {
            Ok(mut m) => {
                if keep > 0 && carry.start > 0 {
                    m.copy_within(carry, 0);
                }
                // Grows (zero-filling only the growth) or shrinks; the chunk's bytes are
                // overwritten below either way.
                m.resize(need, 0);
                m
            }
            Err(old) => {
                let mut m = BytesMut::with_capacity(need.max(self.data.chunk_length() as usize));
                m.extend_from_slice(old.get(carry).unwrap_or_default());
                m.resize(need, 0);
                m
            }
        };
        let dst = buf.get_mut(keep..need).unwrap_or_default();
        let n = match cur.window.as_mut() {
            Some(w) => self
                .data
                .read_chunk_ahead_into(ci, w, &mut cur.decomp, dst, cur.wait)?,
            None => self
                .data
                .read_chunk_into(ci, &mut cur.decomp, dst, cur.wait)?,
        };
        self.io.add_read(cur.kind, n);
        self.io.add_chunk_read();
        cur.buf = buf.freeze();
        cur.buf_pos = chunk_start - keep as u64;
        Ok(())
    }

    /// Reads a partition's header.
    pub fn read_header(&self, entry: &IndexEntry, cur: &mut DataCursor) -> Result<PartitionHeader> {
        let buf = self.read_range(cur, entry.data_pos, entry.header_len)?;
        self.decode_header(&buf, entry)
    }

    fn decode_header(&self, buf: &Bytes, entry: &IndexEntry) -> Result<PartitionHeader> {
        let base = self.timestamp_base();
        let mut d = Decoder::from_bytes(buf);
        let r = (|| {
            if d.u8()? != TAG_PARTITION {
                return Err(DecodeError {
                    offset: 0,
                    kind: CorruptionKind::Invalid("partition tag"),
                });
            }
            let key = d.bytes()?;
            if key != entry.key.key {
                return Err(DecodeError {
                    offset: 1,
                    kind: CorruptionKind::Invalid("partition key differs from index"),
                });
            }
            let flags = d.u8()?;
            let deletion = if flags & PART_HAS_DELETION != 0 {
                Some(get_deletion(&mut d, base)?)
            } else {
                None
            };
            let static_row = if flags & PART_HAS_STATIC != 0 {
                Some(get_row(&mut d, base)?)
            } else {
                None
            };
            let mut range_tombstones = Vec::new();
            if flags & PART_HAS_RTS != 0 {
                let n = d.len()?;
                for _ in 0..n {
                    range_tombstones.push(get_range_tombstone(&mut d, base)?);
                }
            }
            Ok(PartitionHeader {
                deletion,
                static_row,
                range_tombstones,
            })
        })();
        r.map_err(corrupt(self.data.path(), entry.data_pos))
    }

    fn timestamp_base(&self) -> i64 {
        self.stats.timestamp_base
    }

    fn decode_rows(
        &self,
        buf: &Bytes,
        pos: u64,
        out: &mut Vec<(ClusteringKey, Row)>,
    ) -> Result<()> {
        let base = self.timestamp_base();
        let mut d = Decoder::from_bytes(buf);
        let r = (|| {
            while !d.is_empty() {
                match get_body_item(&mut d, base)? {
                    Some(row) => out.push(row),
                    None => break,
                }
            }
            Ok(())
        })();
        r.map_err(corrupt(self.data.path(), pos))
    }

    /// Iterates the partition's rows in `slice`, forward or reversed, reading lazily. Pass the
    /// cursor that read the header, so the chunk it holds is not read again.
    pub fn rows(
        self: &Arc<Self>,
        entry: &IndexEntry,
        slice: &Slice,
        reversed: bool,
        cursor: DataCursor,
    ) -> RowIter {
        let mut ranges = slice.ranges().to_vec();
        if reversed {
            ranges.reverse();
        }
        // Sequential (scan) cursors reading forward from the partition's first row stream
        // straight through the body: no clustering-block index, no per-block copy, one row
        // decoded per `next`. Point reads keep copying the rows they return, so a small result
        // never pins a whole decompressed chunk in memory.
        let from_start = ranges.len() == 1 && ranges.first().is_some_and(|r| r.start.is_empty());
        let sequential = cursor.window.is_some();
        let stream =
            (sequential && !reversed && (entry.rows_ref.is_none() || from_start)).then(|| Stream {
                pos: entry.data_pos + entry.header_len,
                end: entry.data_pos + entry.len,
            });
        RowIter {
            table: Arc::clone(self),
            entry: entry.clone(),
            ranges,
            range_idx: 0,
            reversed,
            cursor,
            stream,
            pending: VecDeque::new(),
            row_index: None,
            block: None,
            small_done: false,
            failed: false,
        }
    }

    /// Iterates index entries from `start` in key order.
    pub fn scan(
        self: &Arc<Self>,
        start: &PartitionPos,
        kind: ReadKind,
        wait: Wait,
    ) -> IndexScanner {
        let probe = match start {
            PartitionPos::TokenStart(t) => index_key(&DecoratedKey {
                token: *t,
                key: Bytes::new(),
            }),
            PartitionPos::After(k) | PartitionPos::At(k) => index_key(k),
        };
        let page_no = self.summary.floor(&probe).unwrap_or(0);
        IndexScanner {
            table: Arc::clone(self),
            page_no,
            page: None,
            idx: 0,
            start: start.clone(),
            kind,
            wait,
        }
    }

    fn read_rows_summary(
        &self,
        (off, len): (u64, u32),
        kind: ReadKind,
        wait: Wait,
    ) -> Result<Summary> {
        let path = &self.rows_path;
        let mut buf = vec![0u8; len as usize];
        crate::io::read_exact_at(&self.rows_file, path, &mut buf, off, wait)?;
        self.io.add_read(kind, u64::from(len));
        let body = check_crc(&buf, path).map_err(|e| match e {
            Error::Corruption { kind, .. } => Error::corruption(path, off, kind),
            other => other,
        })?;
        Summary::decode(&mut Decoder::new(body)).map_err(corrupt(path, off))
    }

    fn read_rows_page(
        &self,
        summary: &Summary,
        page_no: usize,
        kind: ReadKind,
        wait: Wait,
    ) -> Result<Option<Page>> {
        let Some(r) = summary.pages.get(page_no) else {
            return Ok(None);
        };
        let page = Page::read(&self.rows_file, &self.rows_path, r, wait)?;
        self.count_index_page(kind, r.len);
        Ok(Some(page))
    }
}

impl Drop for SSTable {
    fn drop(&mut self) {
        if self.deleted.load(Ordering::SeqCst) {
            // TOC first: a crash midway leaves components without a TOC, which startup removes.
            let _ = std::fs::remove_file(self.path(Component::Toc));
            for c in Component::ALL {
                let _ = std::fs::remove_file(self.path(c));
            }
            self.io.remove_obsolete(self.disk_bytes);
        }
    }
}

/// Bytes a scan cursor reads per system call.
pub const SCAN_READ_AHEAD: usize = 256 * 1024;

/// Decompression state for reading one sstable's data stream.
///
/// Holds the last decompressed chunk (possibly preceded by the carried-over head of a row that
/// started in the chunk before), so consecutive reads of the same chunk decompress it once.
pub struct DataCursor {
    /// Decompressed stream bytes `[buf_pos, buf_pos + buf.len())`; empty when nothing is held.
    buf: Bytes,
    buf_pos: u64,
    decomp: Compressor,
    kind: ReadKind,
    /// Whether its reads may wait for the disk (the read's mode, for its whole life).
    wait: Wait,
    window: Option<ReadWindow>,
}

impl DataCursor {
    /// True when stream position `p` is in the held bytes.
    fn holds(&self, p: u64) -> bool {
        p >= self.buf_pos && p < self.end()
    }

    /// Stream position just past the held bytes.
    fn end(&self) -> u64 {
        self.buf_pos + self.buf.len() as u64
    }
}

struct RowIndexState {
    summary: Summary,
    page_no: usize,
    page: Page,
}

/// The unread part `[pos, end)` of a partition body read front to back.
struct Stream {
    pos: u64,
    end: u64,
}

/// Lazily reads a partition's rows within a slice.
pub struct RowIter {
    table: Arc<SSTable>,
    entry: IndexEntry,
    ranges: Vec<ClusteringRange>,
    range_idx: usize,
    reversed: bool,
    cursor: DataCursor,
    /// Set for reads that stream through the partition body (see [`SSTable::rows`]).
    stream: Option<Stream>,
    pending: VecDeque<(ClusteringKey, Row)>,
    row_index: Option<RowIndexState>,
    /// Current block within the row index: (page, entry), or None to seek for the range.
    block: Option<(usize, usize)>,
    small_done: bool,
    failed: bool,
}

impl RowIter {
    fn fill(&mut self) -> Result<()> {
        let t = Arc::clone(&self.table);
        let Some(rows_ref) = self.entry.rows_ref else {
            // Small partition: one read, then filter.
            if self.small_done {
                return Ok(());
            }
            self.small_done = true;
            let body_len = self.entry.len - self.entry.header_len;
            let buf = t.read_range(
                &mut self.cursor,
                self.entry.data_pos + self.entry.header_len,
                body_len,
            )?;
            let mut rows = Vec::new();
            t.decode_rows(&buf, self.entry.data_pos + self.entry.header_len, &mut rows)?;
            let ranges = &self.ranges;
            rows.retain(|(k, _)| ranges.iter().any(|r| r.contains(&k.0)));
            if self.reversed {
                rows.reverse();
            }
            self.pending.extend(rows);
            return Ok(());
        };
        let (kind, wait) = (self.cursor.kind, self.cursor.wait);
        if self.row_index.is_none() {
            let summary = t.read_rows_summary(rows_ref, kind, wait)?;
            let Some(page) = t.read_rows_page(&summary, 0, kind, wait)? else {
                self.range_idx = self.ranges.len();
                return Ok(());
            };
            self.row_index = Some(RowIndexState {
                summary,
                page_no: 0,
                page,
            });
        }
        while self.pending.is_empty() && self.range_idx < self.ranges.len() {
            let range = self.ranges[self.range_idx].clone();
            let Some(ri) = self.row_index.as_mut() else {
                return Ok(());
            };
            // Position on the first block to read for this range.
            let (page_no, idx) = match self.block {
                Some(b) => b,
                None => {
                    let probe = if self.reversed {
                        &range.end
                    } else {
                        &range.start
                    };
                    let page_no = ri.summary.floor(probe).unwrap_or(0);
                    if ri.page_no != page_no {
                        if let Some(p) = t.read_rows_page(&ri.summary, page_no, kind, wait)? {
                            ri.page = p;
                            ri.page_no = page_no;
                        }
                    }
                    (page_no, ri.page.floor(probe).unwrap_or(0))
                }
            };
            if ri.page_no != page_no {
                match t.read_rows_page(&ri.summary, page_no, kind, wait)? {
                    Some(p) => {
                        ri.page = p;
                        ri.page_no = page_no;
                    }
                    None => {
                        self.next_range();
                        continue;
                    }
                }
            }
            let Some((first_key, value)) = ri.page.entries.get(idx).cloned() else {
                self.next_range();
                continue;
            };
            let rows_path = &t.rows_path;
            let offset = ri.summary.pages.get(page_no).map_or(0, |p| p.offset);
            let mut d = Decoder::new(&value);
            let (off, len) = (|| Ok((d.uvarint()?, d.uvarint()?)))()
                .map_err(|e: DecodeError| Error::corruption(rows_path, offset, e.kind))?;
            if off.checked_add(len).is_none_or(|end| end > self.entry.len) {
                return Err(Error::corruption(
                    rows_path,
                    offset,
                    CorruptionKind::Invalid("row index entry"),
                ));
            }
            let pos = self.entry.data_pos + off;
            let buf = t.read_range(&mut self.cursor, pos, len)?;
            let mut rows = Vec::new();
            t.decode_rows(&buf, pos, &mut rows)?;
            rows.retain(|(k, _)| range.contains(&k.0));
            if self.reversed {
                rows.reverse();
            }
            self.pending.extend(rows);
            // Advance to the neighbouring block, or finish the range.
            if self.reversed {
                if first_key.as_ref() <= range.start.as_ref() {
                    self.next_range();
                } else if idx > 0 {
                    self.block = Some((page_no, idx - 1));
                } else if page_no > 0 {
                    match t.read_rows_page(&ri.summary, page_no - 1, kind, wait)? {
                        Some(pg) => {
                            let last = pg.entries.len().saturating_sub(1);
                            ri.page = pg;
                            ri.page_no = page_no - 1;
                            self.block = Some((page_no - 1, last));
                        }
                        None => self.next_range(),
                    }
                } else {
                    self.next_range();
                }
            } else {
                let next = if idx + 1 < ri.page.entries.len() {
                    ri.page
                        .entries
                        .get(idx + 1)
                        .map(|e| (page_no, idx + 1, e.0.clone()))
                } else {
                    ri.summary
                        .pages
                        .get(page_no + 1)
                        .map(|p| (page_no + 1, 0, p.first_key.clone()))
                };
                match next {
                    Some((p, i, k)) if k.as_ref() < range.end.as_ref() => self.block = Some((p, i)),
                    _ => self.next_range(),
                }
            }
        }
        Ok(())
    }

    fn next_range(&mut self) {
        self.range_idx += 1;
        self.block = None;
    }

    /// The next row of a streamed read: decoded straight from the cursor's chunk buffer (cell
    /// values and keys are slices of it), filtered by the slice's ranges.
    fn next_streamed(&mut self) -> Result<Option<(ClusteringKey, Row)>> {
        let t = &self.table;
        let base = t.timestamp_base();
        let Some(st) = self.stream.as_mut() else {
            return Ok(None);
        };
        loop {
            if st.pos >= st.end || self.range_idx >= self.ranges.len() {
                st.pos = st.end;
                return Ok(None);
            }
            let cur = &mut self.cursor;
            if !cur.holds(st.pos) {
                t.load_chunk(cur, t.data.chunk_of(st.pos), None)?;
            }
            let from = (st.pos - cur.buf_pos) as usize;
            let limit = (cur.end().min(st.end) - cur.buf_pos) as usize;
            let mut d = Decoder::from_bytes_range(&cur.buf, from..limit);
            let item = get_body_item(&mut d, base);
            let used = d.position() as u64;
            match item {
                Ok(Some((ck, row))) => {
                    st.pos += used;
                    // Ranges are sorted and disjoint: skip those wholly before the key.
                    while self
                        .ranges
                        .get(self.range_idx)
                        .is_some_and(|r| ck.0.as_ref() >= r.end.as_ref())
                    {
                        self.range_idx += 1;
                    }
                    match self.ranges.get(self.range_idx) {
                        Some(r) if ck.0.as_ref() >= r.start.as_ref() => return Ok(Some((ck, row))),
                        Some(_) => continue,
                        None => {
                            st.pos = st.end;
                            return Ok(None);
                        }
                    }
                }
                Ok(None) => {
                    st.pos = st.end;
                    return Ok(None);
                }
                Err(e) if e.kind == CorruptionKind::Truncated && cur.end() < st.end => {
                    // The row continues in the next chunk: carry its head over and retry.
                    let next = t.data.chunk_of(cur.end());
                    t.load_chunk(cur, next, Some(st.pos))?;
                    if !cur.holds(st.pos) {
                        return Err(Error::corruption(
                            t.data.path(),
                            st.pos,
                            CorruptionKind::Truncated,
                        ));
                    }
                }
                Err(e) => {
                    return Err(Error::corruption(
                        t.data.path(),
                        st.pos + e.offset as u64,
                        e.kind,
                    ))
                }
            }
        }
    }

    /// The cursor, for the next partition of a scan (keeps its read-ahead window).
    pub fn into_cursor(self) -> DataCursor {
        self.cursor
    }
}

impl Iterator for RowIter {
    type Item = Result<(ClusteringKey, Row)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.stream.is_some() {
            return match self.next_streamed() {
                Ok(row) => row.map(Ok),
                Err(e) => {
                    self.failed = true;
                    Some(Err(e))
                }
            };
        }
        if self.pending.is_empty() {
            if let Err(e) = self.fill() {
                self.failed = true;
                return Some(Err(e));
            }
        }
        self.pending.pop_front().map(Ok)
    }
}

/// Walks index entries in key order from a start position.
pub struct IndexScanner {
    table: Arc<SSTable>,
    page_no: usize,
    page: Option<Page>,
    idx: usize,
    start: PartitionPos,
    kind: ReadKind,
    wait: Wait,
}

impl IndexScanner {
    /// The sstable being scanned.
    pub fn sstable(&self) -> &Arc<SSTable> {
        &self.table
    }

    /// The next entry at or after the start position.
    pub fn next_entry(&mut self) -> Result<Option<IndexEntry>> {
        loop {
            if self.page.is_none() {
                match self
                    .table
                    .load_index_page(self.page_no, self.kind, self.wait)?
                {
                    Some(p) => {
                        self.page = Some(p);
                        self.idx = 0;
                    }
                    None => return Ok(None),
                }
            }
            let Some(page) = self.page.as_ref() else {
                return Ok(None);
            };
            match page.entries.get(self.idx) {
                Some((k, v)) => {
                    self.idx += 1;
                    let offset = self
                        .table
                        .summary
                        .pages
                        .get(self.page_no)
                        .map_or(0, |p| p.offset);
                    let e = self.table.parse_entry(k, v, offset)?;
                    if self.start.admits(&e.key) {
                        return Ok(Some(e));
                    }
                }
                None => {
                    self.page = None;
                    self.page_no += 1;
                }
            }
        }
    }
}
