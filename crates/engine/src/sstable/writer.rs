//! Writes one sstable from partitions given in key order.
//!
//! Partitions are serialized into the data stream (chunked and compressed by
//! [`super::chunked::ChunkedWriter`]) while the partition index, the clustering-block index of
//! large partitions, the bloom filter and the statistics are built alongside. `finish` writes
//! the metadata components, fsyncs everything, and commits the sstable by writing its TOC
//! last. A writer dropped before `finish` removes its files: a half-written sstable is never
//! opened.
//!
//! Small-partition alignment: when the data is compressed and a partition that fits in one
//! chunk would straddle a chunk boundary, the stream is padded to the boundary first, so a
//! point read of a small partition decompresses exactly one chunk. The zero padding costs
//! almost nothing once compressed; uncompressed tables are not padded.

use super::bloom::BloomFilter;
use super::chunked::ChunkedWriter;
use super::format::*;
use super::index::PagedIndexWriter;
use super::stats::{LogPos, SSTableStats};
use crate::error::{Error, IoResultExt, Result};
use crate::io::WritebackFile;
use crate::metrics::{IoCounters, WriteKind};
use crate::model::codec::{put_bytes, put_deletion, put_range_tombstone, put_row, put_uvarint};
use crate::model::{
    ClusteringKey, DecoratedKey, DeletionTime, Partition, RangeTombstone, Row, NO_DELETION_TIME,
};
use crate::schema::compression::{Codec, CompressionParams};
use crate::schema::SerializationHeader;
use bytes::Bytes;
use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Partitions bigger than this are streamed to the data file as they grow.
const SPILL_THRESHOLD: usize = 64 * 1024;

/// How to write an sstable.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Codec and chunk size.
    pub compression: CompressionParams,
    /// Bloom filter false-positive chance.
    pub bloom_fp_chance: f64,
    /// Expected number of partitions (sizes the bloom filter).
    pub expected_partitions: u64,
    /// Uncompressed bytes per clustering block in large partitions.
    pub column_index_size: usize,
    /// Bytes per partition-index page.
    pub index_page_size: usize,
    /// Level recorded in statistics.
    pub level: u32,
    /// Run id recorded in statistics.
    pub run_id: u128,
    /// Commitlog interval covered.
    pub commitlog_interval: (LogPos, LogPos),
    /// Base for timestamp deltas (the smallest timestamp expected).
    pub timestamp_base: i64,
    /// What the written bytes are counted as.
    pub purpose: WriteKind,
    /// The columns recorded in statistics (see [`SerializationHeader`]).
    pub header: Option<SerializationHeader>,
}

impl WriterOptions {
    /// Defaults for a table's compression settings.
    pub fn new(compression: CompressionParams) -> Self {
        WriterOptions {
            compression,
            bloom_fp_chance: 0.01,
            expected_partitions: 1024,
            column_index_size: 4096,
            index_page_size: 4096,
            level: 0,
            run_id: 0,
            commitlog_interval: ((0, 0), (0, 0)),
            timestamp_base: 0,
            purpose: WriteKind::Flush,
            header: None,
        }
    }
}

/// What `finish` produced.
#[derive(Debug, Clone)]
pub struct WrittenSSTable {
    /// Generation of the new sstable.
    pub generation: u64,
    /// Bytes written to all components.
    pub bytes_written: u64,
    /// Bytes of `Data.db`.
    pub data_bytes: u64,
    /// Its statistics.
    pub stats: SSTableStats,
    /// Timing of compress calls (for the stall experiment).
    pub codec_stats: super::chunked::CodecStats,
    /// Average bytes per chunk of the packed chunk offsets.
    pub offset_bytes_per_chunk: f64,
}

/// Reusable per-partition buffers (empty between partitions).
#[derive(Default)]
struct Spare {
    buf: Vec<u8>,
    blocks: Vec<(Bytes, u64)>,
    /// The partition's index entry: key, then value.
    index_key: Vec<u8>,
    index_value: Vec<u8>,
}

struct OpenPartition {
    key: DecoratedKey,
    buf: Vec<u8>,
    spilled: bool,
    start: u64,
    written: u64,
    header_len: u64,
    blocks: Vec<(Bytes, u64)>,
    block_start: u64,
    cells: u64,
    last_row: Option<ClusteringKey>,
}

impl OpenPartition {
    fn rel_offset(&self) -> u64 {
        self.written + self.buf.len() as u64
    }
}

/// Streams partitions into a new sstable.
pub struct SSTableWriter {
    dir: PathBuf,
    generation: u64,
    /// Paths of the streamed components, made once: errors name them, and formatting them
    /// per row cost ~10 % of a flush of small partitions.
    data_path: PathBuf,
    index_path: PathBuf,
    rows_path: PathBuf,
    opts: WriterOptions,
    data: Option<ChunkedWriter<BufWriter<WritebackFile>>>,
    index_file: Option<BufWriter<WritebackFile>>,
    index: Option<PagedIndexWriter>,
    index_bytes: u64,
    rows_file: Option<BufWriter<WritebackFile>>,
    rows_offset: u64,
    bloom: BloomFilter,
    stats: SSTableStats,
    cur: Option<OpenPartition>,
    last_key: Option<DecoratedKey>,
    /// Buffers of the last partition, reused by the next: a flush of tiny partitions
    /// otherwise allocates and frees each of them once per partition.
    spare: Spare,
    io: Arc<IoCounters>,
    /// Bytes already added to `io`: the data, index and rows bytes are counted as partitions
    /// are written, so rates sampled during a long write (compaction throughput) are smooth
    /// rather than one spike when the sstable is sealed.
    counted: u64,
    finished: bool,
}

fn create(path: &Path) -> Result<BufWriter<WritebackFile>> {
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_path(path)?;
    Ok(BufWriter::with_capacity(256 * 1024, WritebackFile::new(f)))
}

impl SSTableWriter {
    /// Starts writing generation `generation` in `dir`.
    pub fn create(
        dir: &Path,
        generation: u64,
        opts: WriterOptions,
        io: Arc<IoCounters>,
    ) -> Result<Self> {
        let data_path = component_path(dir, generation, Component::Data);
        let index_path = component_path(dir, generation, Component::Index);
        let rows_path = component_path(dir, generation, Component::Rows);
        let data = ChunkedWriter::new(create(&data_path)?, &opts.compression);
        let index_file = create(&index_path)?;
        let rows_file = create(&rows_path)?;
        let bloom = BloomFilter::new(opts.expected_partitions.max(1), opts.bloom_fp_chance)?;
        let mut stats = SSTableStats::new(opts.level, opts.run_id);
        stats.timestamp_base = opts.timestamp_base;
        stats.header = opts.header.clone();
        Ok(SSTableWriter {
            dir: dir.to_path_buf(),
            generation,
            data_path,
            index_path,
            rows_path,
            index: Some(PagedIndexWriter::new(opts.index_page_size, 0)),
            opts,
            data: Some(data),
            index_file: Some(index_file),
            index_bytes: 0,
            rows_file: Some(rows_file),
            rows_offset: 0,
            bloom,
            stats,
            cur: None,
            last_key: None,
            spare: Spare::default(),
            io,
            counted: 0,
            finished: false,
        })
    }

    /// Generation being written.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Uncompressed bytes written so far (used to split compaction output).
    pub fn uncompressed_position(&self) -> u64 {
        self.data.as_ref().map_or(0, |d| d.position())
    }

    /// Writes a whole partition.
    pub fn write_partition(&mut self, key: &DecoratedKey, p: &Partition) -> Result<()> {
        self.write_parts(
            key,
            p.deletion,
            p.static_row.as_ref(),
            &p.range_tombstones,
            &p.rows,
        )
    }

    /// Writes a whole partition given as its parts (a memtable's partition is not held as a
    /// [`Partition`]); `rows` in increasing key order.
    pub fn write_parts<'a>(
        &mut self,
        key: &DecoratedKey,
        deletion: Option<DeletionTime>,
        static_row: Option<&Row>,
        rts: &[RangeTombstone],
        rows: impl IntoIterator<Item = (&'a ClusteringKey, &'a Row)>,
    ) -> Result<()> {
        self.begin_partition(key, deletion, static_row, rts)?;
        for (ck, row) in rows {
            self.add_row(ck, row)?;
        }
        self.end_partition()
    }

    /// Opens a partition: its deletion, static row and range tombstones.
    pub fn begin_partition(
        &mut self,
        key: &DecoratedKey,
        deletion: Option<DeletionTime>,
        static_row: Option<&Row>,
        rts: &[RangeTombstone],
    ) -> Result<()> {
        if self.cur.is_some() {
            return Err(Error::InvalidMutation(
                "sstable writer: partition already open",
            ));
        }
        if self.last_key.as_ref().is_some_and(|last| last >= key) {
            return Err(Error::InvalidMutation(
                "sstable writer: partitions out of order",
            ));
        }
        let base = self.opts.timestamp_base;
        let mut buf = std::mem::take(&mut self.spare.buf);
        buf.push(TAG_PARTITION);
        put_bytes(&mut buf, &key.key);
        let mut flags = 0;
        if deletion.is_some() {
            flags |= PART_HAS_DELETION;
        }
        if static_row.is_some() {
            flags |= PART_HAS_STATIC;
        }
        if !rts.is_empty() {
            flags |= PART_HAS_RTS;
        }
        buf.push(flags);
        let s = &mut self.stats;
        let mut cells = 0;
        if let Some(d) = &deletion {
            put_deletion(&mut buf, d, base);
            s.max_partition_deletion = s.max_partition_deletion.max(d.marked_at);
            note_deletion(s, d);
        }
        if let Some(row) = static_row {
            put_row(&mut buf, row, base);
            cells += note_row(s, row);
        }
        if !rts.is_empty() {
            put_uvarint(&mut buf, rts.len() as u64);
            for rt in rts {
                put_range_tombstone(&mut buf, rt, base);
                note_deletion(s, &rt.deletion);
                // Reads skip sstables by clustering range: the range must cover tombstones too.
                note_clustering(s, &rt.range.start);
                note_clustering(s, &rt.range.end);
            }
        }
        let header_len = buf.len() as u64;
        if s.partition_count == 0 {
            s.first_key = key.clone();
        }
        self.cur = Some(OpenPartition {
            key: key.clone(),
            buf,
            spilled: false,
            start: 0,
            written: 0,
            header_len,
            blocks: std::mem::take(&mut self.spare.blocks),
            block_start: header_len,
            cells,
            last_row: None,
        });
        Ok(())
    }

    /// Adds a clustering row (keys in increasing order).
    pub fn add_row(&mut self, ck: &ClusteringKey, row: &Row) -> Result<()> {
        let base = self.opts.timestamp_base;
        let block_size = self.opts.column_index_size as u64;
        let cur = self
            .cur
            .as_mut()
            .ok_or(Error::InvalidMutation("sstable writer: no open partition"))?;
        if cur.last_row.as_ref().is_some_and(|last| last >= ck) {
            return Err(Error::InvalidMutation("sstable writer: rows out of order"));
        }
        let rel = cur.rel_offset();
        if cur.blocks.is_empty() || rel - cur.block_start >= block_size {
            cur.blocks.push((ck.0.clone(), rel));
            cur.block_start = rel;
        }
        cur.buf.push(TAG_ROW);
        put_bytes(&mut cur.buf, &ck.0);
        put_row(&mut cur.buf, row, base);
        cur.cells += note_row(&mut self.stats, row);
        self.stats.row_count += 1;
        note_clustering(&mut self.stats, &ck.0);
        cur.last_row = Some(ck.clone());
        if cur.buf.len() >= SPILL_THRESHOLD {
            let data = self.data.as_mut().ok_or(Error::Closed)?;
            if !cur.spilled {
                cur.spilled = true;
                cur.start = data.position();
            }
            data.write_all(&cur.buf)
                .map_err(|e| Error::io(&self.data_path, e))?;
            cur.written += cur.buf.len() as u64;
            cur.buf.clear();
        }
        Ok(())
    }

    /// Closes the open partition and indexes it.
    pub fn end_partition(&mut self) -> Result<()> {
        let mut cur = self
            .cur
            .take()
            .ok_or(Error::InvalidMutation("sstable writer: no open partition"))?;
        cur.buf.push(TAG_END);
        let data_path = &self.data_path;
        let data = self.data.as_mut().ok_or(Error::Closed)?;
        if !cur.spilled {
            let total = cur.buf.len() as u64;
            let chunk = u64::from(self.opts.compression.chunk_length.max(1));
            let pos = data.position();
            let within = pos % chunk;
            if self.opts.compression.codec != Codec::None
                && total <= chunk
                && within != 0
                && within + total > chunk
            {
                let pad = vec![TAG_PADDING; (chunk - within) as usize];
                data.write_all(&pad).map_err(|e| Error::io(data_path, e))?;
            }
            cur.start = data.position();
        }
        data.write_all(&cur.buf)
            .map_err(|e| Error::io(data_path, e))?;
        let total_len = cur.written + cur.buf.len() as u64;

        // Clustering-block index for partitions spanning more than one block.
        let mut rows_ref = (0u64, 0u32);
        if cur.blocks.len() > 1 {
            let mut w = PagedIndexWriter::new(self.opts.index_page_size, self.rows_offset);
            let n = cur.blocks.len();
            for i in 0..n {
                let (first, off) = &cur.blocks[i];
                let end = cur.blocks.get(i + 1).map_or(total_len - 1, |b| b.1);
                let mut v = Vec::with_capacity(8);
                put_uvarint(&mut v, *off);
                put_uvarint(&mut v, end - off);
                if let Some(page) = w.add(first, &v) {
                    self.append_rows(&page)?;
                }
            }
            let (last, summary) = w.finish();
            if let Some(page) = last {
                self.append_rows(&page)?;
            }
            let mut enc = Vec::new();
            summary.encode(&mut enc);
            let enc = crate::io::with_crc(enc);
            rows_ref = (self.rows_offset, enc.len() as u32);
            self.append_rows(&enc)?;
        }

        let (ik, v) = (&mut self.spare.index_key, &mut self.spare.index_value);
        ik.clear();
        put_index_key(ik, &cur.key);
        v.clear();
        put_uvarint(v, cur.start);
        put_uvarint(v, total_len);
        put_uvarint(v, cur.header_len);
        put_uvarint(v, rows_ref.0);
        put_uvarint(v, u64::from(rows_ref.1));
        if let Some(page) = self.index.as_mut().and_then(|ix| ix.add(ik, v)) {
            self.index_file
                .as_mut()
                .ok_or(Error::Closed)?
                .write_all(&page)
                .with_path(&self.index_path)?;
            self.index_bytes += page.len() as u64;
        }
        self.bloom
            .add(crate::model::token::murmur3_x64_128(&cur.key.key, 0));
        let s = &mut self.stats;
        s.partition_count += 1;
        s.partition_sizes.add(total_len);
        s.cells_per_partition.add(cur.cells);
        self.last_key = Some(cur.key);
        cur.buf.clear();
        cur.blocks.clear();
        self.spare.buf = cur.buf;
        self.spare.blocks = cur.blocks;
        let so_far = self.data.as_ref().map_or(0, |d| d.compressed_len())
            + self.index_bytes
            + self.rows_offset;
        if so_far > self.counted {
            self.io
                .add_written(self.opts.purpose, so_far - self.counted);
            self.counted = so_far;
        }
        Ok(())
    }

    /// Appends bytes to `Rows.db`, keeping `rows_offset` in step.
    fn append_rows(&mut self, bytes: &[u8]) -> Result<()> {
        let file = self.rows_file.as_mut().ok_or(Error::Closed)?;
        file.write_all(bytes).with_path(&self.rows_path)?;
        self.rows_offset += bytes.len() as u64;
        Ok(())
    }

    /// Sets the commitlog interval the sstable records (read at [`finish`](Self::finish)): a
    /// flush written as several fragments gives its upper end to the last one only.
    pub fn set_commitlog_interval(&mut self, interval: (LogPos, LogPos)) {
        self.opts.commitlog_interval = interval;
    }

    /// Writes the metadata, fsyncs every component and commits the sstable with its TOC.
    /// Returns `None` (and removes the files) when no partition was written.
    pub fn finish(mut self) -> Result<Option<WrittenSSTable>> {
        if self.cur.is_some() {
            return Err(Error::InvalidMutation(
                "sstable writer: partition still open",
            ));
        }
        if self.stats.partition_count == 0 {
            return Ok(None);
        }
        if let Some(last) = self.last_key.take() {
            self.stats.last_key = last;
        }
        let dir = self.dir.clone();
        let gen = self.generation;
        let path = |c| component_path(&dir, gen, c);
        let data = self.data.take().ok_or(Error::Closed)?;
        let (data_file, summary) = data.finish()?;
        sync_buffered(data_file, &path(Component::Data))?;
        let (last, index_summary) = self.index.take().ok_or(Error::Closed)?.finish();
        if let Some(page) = last {
            self.index_file
                .as_mut()
                .ok_or(Error::Closed)?
                .write_all(&page)
                .with_path(&path(Component::Index))?;
            self.index_bytes += page.len() as u64;
        }
        sync_buffered(
            self.index_file.take().ok_or(Error::Closed)?,
            &path(Component::Index),
        )?;
        sync_buffered(
            self.rows_file.take().ok_or(Error::Closed)?,
            &path(Component::Rows),
        )?;

        let mut written = summary.compressed_len + self.index_bytes + self.rows_offset;

        let mut s = Vec::new();
        index_summary.encode(&mut s);
        written += write_synced(&path(Component::Summary), &crate::io::with_crc(s))?;

        let mut f = Vec::new();
        self.bloom.encode(&mut f);
        written += write_synced(&path(Component::Filter), &crate::io::with_crc(f))?;

        let mut ci = Vec::new();
        ci.extend_from_slice(MAGIC);
        ci.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let opts = self.opts.compression.to_options();
        put_uvarint(&mut ci, opts.len() as u64);
        for (k, v) in &opts {
            put_bytes(&mut ci, k.as_bytes());
            put_bytes(&mut ci, v.as_bytes());
        }
        put_uvarint(&mut ci, u64::from(self.opts.compression.chunk_length));
        put_uvarint(&mut ci, summary.uncompressed_len);
        let mut offs = Vec::new();
        summary.offsets.encode(&mut offs);
        put_bytes(&mut ci, &offs);
        written += write_synced(&path(Component::CompressionInfo), &crate::io::with_crc(ci))?;

        self.stats.uncompressed_length = summary.uncompressed_len;
        self.stats.data_length = summary.compressed_len;
        self.stats.commitlog_lower = self.opts.commitlog_interval.0;
        self.stats.commitlog_upper = self.opts.commitlog_interval.1;
        self.stats.created_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        written += write_synced(
            &path(Component::Statistics),
            &crate::io::with_crc(self.stats.encode()),
        )?;

        let toc: String = Component::ALL
            .iter()
            .map(|c| format!("{}\n", c.suffix()))
            .collect();
        crate::io::write_file_atomically(&path(Component::Toc), toc.as_bytes())?;
        written += toc.len() as u64;
        self.io
            .add_written(self.opts.purpose, written.saturating_sub(self.counted));
        self.finished = true;
        Ok(Some(WrittenSSTable {
            generation: gen,
            bytes_written: written,
            data_bytes: summary.compressed_len,
            stats: self.stats.clone(),
            codec_stats: summary.codec_stats,
            offset_bytes_per_chunk: summary.offsets.bytes_per_chunk(),
        }))
    }
}

impl Drop for SSTableWriter {
    fn drop(&mut self) {
        if !self.finished {
            for c in Component::ALL {
                let _ = std::fs::remove_file(component_path(&self.dir, self.generation, c));
            }
        }
    }
}

fn sync_buffered(w: BufWriter<WritebackFile>, path: &Path) -> Result<()> {
    let f = w
        .into_inner()
        .map_err(|e| Error::io(path, e.into_error()))?;
    f.sync_data().with_path(path)
}

/// Writes a new file (`create_new`) and fsyncs it; returns its length. Its directory is the
/// caller's to sync.
pub(crate) fn write_synced(path: &Path, data: &[u8]) -> Result<u64> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_path(path)?;
    f.write_all(data)
        .and_then(|()| f.sync_data())
        .with_path(path)?;
    Ok(data.len() as u64)
}

/// Widens the sstable's clustering range to include `pos` (a key or a tombstone bound).
fn note_clustering(s: &mut SSTableStats, pos: &Bytes) {
    if s.min_clustering.is_empty() || *pos < s.min_clustering {
        s.min_clustering = pos.clone();
    }
    if *pos > s.max_clustering {
        s.max_clustering = pos.clone();
    }
}

fn note_deletion(s: &mut SSTableStats, d: &DeletionTime) {
    s.tombstone_count += 1;
    s.min_timestamp = s.min_timestamp.min(d.marked_at);
    s.max_timestamp = s.max_timestamp.max(d.marked_at);
    note_ldt(s, d.local_deletion_time);
}

/// Notes a local deletion time; live data that never expires notes `NO_DELETION_TIME`, so
/// `max_local_deletion_time < gc_before` means "everything here is deleted or expired".
fn note_ldt(s: &mut SSTableStats, ldt: u32) {
    s.max_local_deletion_time = s.max_local_deletion_time.max(ldt);
    if ldt != NO_DELETION_TIME {
        s.min_local_deletion_time = s.min_local_deletion_time.min(ldt);
        s.tombstone_drop_times.add(ldt, 1);
    }
}

/// Folds a row into the statistics; returns its cell count.
fn note_row(s: &mut SSTableStats, row: &Row) -> u64 {
    row.for_each_timestamp(|t| {
        s.min_timestamp = s.min_timestamp.min(t);
        s.max_timestamp = s.max_timestamp.max(t);
    });
    if let Some(d) = &row.deletion {
        s.tombstone_count += 1;
        note_ldt(s, d.local_deletion_time);
    }
    if let Some(m) = &row.marker {
        note_ldt(s, m.local_expiration_time);
    }
    let mut cells = 0;
    for (_, data) in &row.columns {
        match data {
            crate::model::ColumnData::Simple(c) => {
                cells += 1;
                if c.is_tombstone() {
                    s.tombstone_count += 1;
                }
                note_ldt(s, c.local_deletion_time);
            }
            crate::model::ColumnData::Complex(cc) => {
                if let Some(d) = &cc.deletion {
                    s.tombstone_count += 1;
                    note_ldt(s, d.local_deletion_time);
                }
                for (_, c) in &cc.cells {
                    cells += 1;
                    if c.is_tombstone() {
                        s.tombstone_count += 1;
                    }
                    note_ldt(s, c.local_deletion_time);
                }
            }
        }
    }
    s.cell_count += cells;
    cells
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::model::Token;

    /// Bytes are counted as partitions are written, not all at once when the sstable is
    /// sealed; the total is the same.
    #[test]
    fn written_bytes_are_counted_progressively() {
        let dir = tempfile::tempdir().unwrap();
        let io = Arc::new(IoCounters::default());
        let mut opts = WriterOptions::new(CompressionParams {
            codec: Codec::None,
            chunk_length: 4096,
            crc_check_chance: 1.0,
        });
        opts.purpose = WriteKind::Compaction;
        let mut w = SSTableWriter::create(dir.path(), 1, opts, Arc::clone(&io)).unwrap();
        let mut seen = Vec::new();
        for i in 0..20_000i64 {
            let key = DecoratedKey {
                token: Token(i),
                key: Bytes::copy_from_slice(&i.to_be_bytes()),
            };
            let p = Partition {
                deletion: Some(DeletionTime {
                    marked_at: i,
                    local_deletion_time: 1,
                }),
                ..Partition::default()
            };
            w.write_partition(&key, &p).unwrap();
            if i % 5000 == 4999 {
                seen.push(io.written(WriteKind::Compaction));
            }
        }
        assert!(seen[0] > 0, "nothing counted before the seal: {seen:?}");
        assert!(seen.windows(2).all(|p| p[0] < p[1]), "{seen:?}");
        let done = w.finish().unwrap().unwrap();
        assert_eq!(io.written(WriteKind::Compaction), done.bytes_written);
        assert_eq!(io.written(WriteKind::Flush), 0);
    }
}
