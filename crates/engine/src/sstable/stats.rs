//! SSTable statistics (`Statistics.db`): what compaction, reads and operators need to know
//! about an sstable without reading its data.
//!
//! Reads skip sstables by key range, clustering range and timestamps; compaction strategies
//! use level, run id, sizes and the tombstone drop-time histogram; recovery uses the commitlog
//! interval the sstable covers; `tablehistograms` shows the partition-size and cell-count
//! histograms.

use crate::error::{CorruptionKind, Error, Result};
use crate::metrics::histogram::{EstimatedHistogram, TombstoneHistogram};
use crate::model::clustering::Order;
use crate::model::codec::{put_bytes, put_uvarint, put_varint, DecodeError, Decoder};
use crate::model::DecoratedKey;
use crate::schema::{ColumnKind, HeaderColumn, SerializationHeader};
use bytes::Bytes;
use std::path::Path;

/// Buckets of the partition-size histogram (Cassandra's `estimated_partition_size`).
pub const PARTITION_SIZE_BUCKETS: usize = 150;
/// Buckets of the cells-per-partition histogram (Cassandra's `estimated_cell_count`).
pub const CELL_COUNT_BUCKETS: usize = 114;

/// A commitlog position as stored in statistics: (segment id, offset).
pub type LogPos = (u64, u32);

/// Everything `Statistics.db` records.
#[derive(Debug, Clone)]
pub struct SSTableStats {
    /// Partitions written.
    pub partition_count: u64,
    /// Clustering rows written (static rows not included).
    pub row_count: u64,
    /// Cells written.
    pub cell_count: u64,
    /// Tombstones of every kind (partition, range, row, cell).
    pub tombstone_count: u64,
    /// Smallest timestamp in the sstable.
    pub min_timestamp: i64,
    /// Largest timestamp in the sstable.
    pub max_timestamp: i64,
    /// Largest partition-deletion timestamp (i64::MIN when none).
    pub max_partition_deletion: i64,
    /// Smallest local deletion / expiry time (u32::MAX when none).
    pub min_local_deletion_time: u32,
    /// Largest local deletion / expiry time; `u32::MAX` when the sstable holds data that never
    /// expires, so a value before `gc_before` means the whole sstable is droppable (Cassandra's
    /// `maxLocalDeletionTime`). 0 for an empty sstable.
    pub max_local_deletion_time: u32,
    /// Smallest clustering key (empty when no rows).
    pub min_clustering: Bytes,
    /// Largest clustering key (empty when no rows).
    pub max_clustering: Bytes,
    /// First partition key.
    pub first_key: DecoratedKey,
    /// Last partition key.
    pub last_key: DecoratedKey,
    /// Serialized partition sizes.
    pub partition_sizes: EstimatedHistogram,
    /// Cells per partition.
    pub cells_per_partition: EstimatedHistogram,
    /// Local deletion times of tombstones and expiring cells.
    pub tombstone_drop_times: TombstoneHistogram,
    /// Bytes of the uncompressed data stream.
    pub uncompressed_length: u64,
    /// Bytes of `Data.db`.
    pub data_length: u64,
    /// Level (leveled compaction); 0 for flushes.
    pub level: u32,
    /// Run identifier (sstables of one run share it).
    pub run_id: u128,
    /// Commitlog interval whose writes this sstable holds: `[lower, upper)`.
    pub commitlog_lower: LogPos,
    /// See `commitlog_lower`.
    pub commitlog_upper: LogPos,
    /// Seconds since the epoch when the sstable was written.
    pub created_at: u64,
    /// Base of the timestamp deltas in the data stream.
    pub timestamp_base: i64,
    /// The columns of the schema the sstable was written with (`None` in sstables written
    /// before Cairn recorded it; `refresh` refuses those, having nothing to check them by).
    pub header: Option<SerializationHeader>,
}

impl SSTableStats {
    /// Empty statistics for a writer to fill.
    pub fn new(level: u32, run_id: u128) -> Self {
        let empty = DecoratedKey {
            token: crate::model::Token(0),
            key: Bytes::new(),
        };
        SSTableStats {
            partition_count: 0,
            row_count: 0,
            cell_count: 0,
            tombstone_count: 0,
            min_timestamp: i64::MAX,
            max_timestamp: i64::MIN,
            max_partition_deletion: i64::MIN,
            min_local_deletion_time: u32::MAX,
            max_local_deletion_time: 0,
            min_clustering: Bytes::new(),
            max_clustering: Bytes::new(),
            first_key: empty.clone(),
            last_key: empty,
            partition_sizes: EstimatedHistogram::new(PARTITION_SIZE_BUCKETS),
            cells_per_partition: EstimatedHistogram::new(CELL_COUNT_BUCKETS),
            tombstone_drop_times: TombstoneHistogram::default(),
            uncompressed_length: 0,
            data_length: 0,
            level,
            run_id,
            commitlog_lower: (0, 0),
            commitlog_upper: (0, 0),
            created_at: 0,
            timestamp_base: 0,
            header: None,
        }
    }

    /// Compressed / uncompressed size (1.0 when uncompressed or empty).
    pub fn compression_ratio(&self) -> f64 {
        if self.uncompressed_length == 0 {
            1.0
        } else {
            self.data_length as f64 / self.uncompressed_length as f64
        }
    }

    /// Estimated number of tombstones droppable at `gc_before`, over all cells.
    pub fn droppable_tombstone_ratio(&self, gc_before: u32) -> f64 {
        if self.cell_count + self.row_count == 0 {
            return 0.0;
        }
        self.tombstone_drop_times.sum_before(gc_before) / (self.cell_count + self.row_count) as f64
    }

    /// Serializes the statistics (without the file CRC).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1024);
        out.extend_from_slice(super::format::MAGIC);
        out.extend_from_slice(&super::format::FORMAT_VERSION.to_le_bytes());
        for v in [
            self.partition_count,
            self.row_count,
            self.cell_count,
            self.tombstone_count,
        ] {
            put_uvarint(&mut out, v);
        }
        for v in [
            self.min_timestamp,
            self.max_timestamp,
            self.max_partition_deletion,
        ] {
            put_varint(&mut out, v);
        }
        put_uvarint(&mut out, u64::from(self.min_local_deletion_time));
        put_uvarint(&mut out, u64::from(self.max_local_deletion_time));
        put_bytes(&mut out, &self.min_clustering);
        put_bytes(&mut out, &self.max_clustering);
        put_bytes(&mut out, &self.first_key.key);
        put_bytes(&mut out, &self.last_key.key);
        let mut h = Vec::new();
        self.partition_sizes.encode(&mut h);
        put_bytes(&mut out, &h);
        h.clear();
        self.cells_per_partition.encode(&mut h);
        put_bytes(&mut out, &h);
        h.clear();
        self.tombstone_drop_times.encode(&mut h);
        put_bytes(&mut out, &h);
        put_uvarint(&mut out, self.uncompressed_length);
        put_uvarint(&mut out, self.data_length);
        put_uvarint(&mut out, u64::from(self.level));
        out.extend_from_slice(&self.run_id.to_le_bytes());
        for (seg, off) in [self.commitlog_lower, self.commitlog_upper] {
            put_uvarint(&mut out, seg);
            put_uvarint(&mut out, u64::from(off));
        }
        put_uvarint(&mut out, self.created_at);
        put_varint(&mut out, self.timestamp_base);
        // Added after the first format: absent means no header.
        if let Some(h) = &self.header {
            put_uvarint(&mut out, h.columns.len() as u64);
            for c in &h.columns {
                put_uvarint(&mut out, u64::from(c.id));
                put_bytes(&mut out, c.name.as_bytes());
                put_bytes(&mut out, c.ty.as_bytes());
                out.push(match c.kind {
                    ColumnKind::PartitionKey => 0,
                    ColumnKind::Clustering => 1,
                    ColumnKind::Static => 2,
                    ColumnKind::Regular => 3,
                });
                out.push(u8::from(c.order == Order::Desc) | (u8::from(c.dropped) << 1));
            }
        }
        out
    }

    /// Parses statistics; `path` names the file in errors.
    pub fn decode(buf: &[u8], path: &Path) -> Result<SSTableStats> {
        let mut d = Decoder::new(buf);
        let hist_err = |d: &Decoder<'_>, kind: CorruptionKind| DecodeError {
            offset: d.position(),
            kind,
        };
        let r = (|| -> std::result::Result<SSTableStats, DecodeError> {
            if d.raw(4)? != super::format::MAGIC {
                return Err(DecodeError {
                    offset: 0,
                    kind: CorruptionKind::BadMagic,
                });
            }
            let version = d.u32_le()?;
            if version != super::format::FORMAT_VERSION {
                return Err(DecodeError {
                    offset: 4,
                    kind: CorruptionKind::UnsupportedVersion(version),
                });
            }
            let mut s = SSTableStats::new(0, 0);
            s.partition_count = d.uvarint()?;
            s.row_count = d.uvarint()?;
            s.cell_count = d.uvarint()?;
            s.tombstone_count = d.uvarint()?;
            s.min_timestamp = d.varint()?;
            s.max_timestamp = d.varint()?;
            s.max_partition_deletion = d.varint()?;
            s.min_local_deletion_time = d.uvarint32()?;
            s.max_local_deletion_time = d.uvarint32()?;
            s.min_clustering = d.bytes()?;
            s.max_clustering = d.bytes()?;
            s.first_key = DecoratedKey::new(d.bytes()?);
            s.last_key = DecoratedKey::new(d.bytes()?);
            let h = d.bytes()?;
            s.partition_sizes = EstimatedHistogram::decode(&h).map_err(|k| hist_err(&d, k))?;
            let h = d.bytes()?;
            s.cells_per_partition = EstimatedHistogram::decode(&h).map_err(|k| hist_err(&d, k))?;
            let h = d.bytes()?;
            s.tombstone_drop_times = TombstoneHistogram::decode(&h).map_err(|k| hist_err(&d, k))?;
            s.uncompressed_length = d.uvarint()?;
            s.data_length = d.uvarint()?;
            s.level = d.uvarint32()?;
            let mut id = [0u8; 16];
            id.copy_from_slice(d.raw(16)?);
            s.run_id = u128::from_le_bytes(id);
            s.commitlog_lower = (d.uvarint()?, d.uvarint32()?);
            s.commitlog_upper = (d.uvarint()?, d.uvarint32()?);
            s.created_at = d.uvarint()?;
            s.timestamp_base = d.varint()?;
            if !d.is_empty() {
                s.header = Some(decode_header(&mut d)?);
            }
            Ok(s)
        })();
        r.map_err(|e| Error::corruption(path, e.offset as u64, e.kind))
    }
}

fn decode_header(d: &mut Decoder<'_>) -> std::result::Result<SerializationHeader, DecodeError> {
    let text = |d: &mut Decoder<'_>| {
        let at = d.position();
        String::from_utf8(d.bytes()?.to_vec()).map_err(|_| DecodeError {
            offset: at,
            kind: CorruptionKind::Invalid("utf-8 column name or type"),
        })
    };
    let n = d.len()?;
    let mut columns = Vec::with_capacity(n.min(4096));
    for _ in 0..n {
        let id = d.uvarint32()?;
        let name = text(d)?;
        let ty = text(d)?;
        let kind = match d.u8()? {
            0 => ColumnKind::PartitionKey,
            1 => ColumnKind::Clustering,
            2 => ColumnKind::Static,
            3 => ColumnKind::Regular,
            _ => return Err(d.error(CorruptionKind::Invalid("header column kind"))),
        };
        let flags = d.u8()?;
        columns.push(HeaderColumn {
            id,
            name,
            ty,
            kind,
            order: if flags & 1 != 0 {
                Order::Desc
            } else {
                Order::Asc
            },
            dropped: flags & 2 != 0,
        });
    }
    Ok(SerializationHeader { columns })
}
