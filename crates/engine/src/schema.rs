//! Table definitions: columns, key layout and typed table options, and their on-disk form.
//!
//! A table's schema is stored beside its sstables as `schema.cairn` (written atomically:
//! temp file, fsync, rename, directory fsync), so a data directory describes itself and the
//! commitlog can be replayed at startup before any higher layer runs.

use crate::error::{CorruptionKind, Error, IoResultExt, Result};
use crate::io::write_file_atomically;
use crate::model::clustering::{ClusteringLayout, Order};
use crate::model::codec::{put_bytes, put_uvarint, Decoder};
use crate::model::types::CqlType;
use crate::model::ColumnId;
pub mod compression;
pub mod index;
pub mod view;
pub mod view_filter;

use compression::CompressionParams;
use std::path::Path;

/// A table's id (the CQL `system_schema.tables.id` UUID as an integer).
pub type TableId = u128;

/// What role a column plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// Part of the partition key.
    PartitionKey,
    /// Part of the clustering key.
    Clustering,
    /// A static column (one value per partition).
    Static,
    /// A regular column.
    Regular,
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// Stable id, never reused.
    pub id: ColumnId,
    /// CQL name.
    pub name: String,
    /// CQL type.
    pub ty: CqlType,
    /// Role.
    pub kind: ColumnKind,
    /// Clustering order (meaningful for clustering columns only).
    pub order: Order,
    /// The column's dynamic data mask (`MASKED WITH …`), if any.
    pub mask: Option<ColumnMask>,
}

/// A column's dynamic data mask as the schema keeps it (Cassandra 5.0's `ColumnMask`): a
/// masking function partially applied, its first argument the column's value. The engine
/// only keeps it; what the function does is the CQL layer's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMask {
    /// The function's keyspace (`system` for the native masking functions).
    pub keyspace: String,
    /// The function's name (`mask_inner`).
    pub function: String,
    /// The arguments after the first: type and serialized value (`None` = null).
    pub args: Vec<(CqlType, Option<Vec<u8>>)>,
}

/// Typed table options the engine acts on.
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    /// SSTable compression (codec, chunk length, crc_check_chance).
    pub compression: CompressionParams,
    /// A different codec for memtable flushes only (off by default: flushes write the
    /// table's own codec; compaction rewrites with it either way).
    pub flush_compression: Option<CompressionParams>,
    /// Target false-positive chance of the partition-key bloom filter.
    pub bloom_filter_fp_chance: f64,
    /// Seconds a tombstone is kept before compaction may purge it.
    pub gc_grace_seconds: u32,
    /// TTL applied to writes that give none.
    pub default_time_to_live: u32,
    /// Free-form comment.
    pub comment: String,
    /// Further options, stored as text; the engine interprets [`CACHING_ENABLED`] and the
    /// dropped-column records, and keeps the rest for CQL to show back.
    pub extra: Vec<(String, String)>,
    /// The CQL `compaction` map (`class` and the strategy's options) as given; empty means
    /// the default strategy. Parsed by `compaction::strategy::CompactionOptions`.
    pub compaction: Vec<(String, String)>,
    /// When tombstones become purgeable (ScyllaDB's `tombstone_gc = {'mode': …}`).
    pub tombstone_gc: TombstoneGcMode,
}

/// ScyllaDB's `tombstone_gc` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TombstoneGcMode {
    /// Purgeable `gc_grace_seconds` after the deletion (Cassandra's only behaviour).
    #[default]
    Timeout,
    /// Purgeable at once (single-node clusters, TTL-only tables).
    Immediate,
    /// Never purged.
    Disabled,
    /// Purgeable once repaired; on a single node (nothing to repair against) it behaves as
    /// `timeout`.
    Repair,
}

impl TombstoneGcMode {
    /// The mode's name as CQL shows it.
    pub fn name(self) -> &'static str {
        match self {
            TombstoneGcMode::Timeout => "timeout",
            TombstoneGcMode::Immediate => "immediate",
            TombstoneGcMode::Disabled => "disabled",
            TombstoneGcMode::Repair => "repair",
        }
    }

    /// Parses a mode name (case-insensitive).
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "timeout" => Some(TombstoneGcMode::Timeout),
            "immediate" => Some(TombstoneGcMode::Immediate),
            "disabled" => Some(TombstoneGcMode::Disabled),
            "repair" => Some(TombstoneGcMode::Repair),
            _ => None,
        }
    }

    /// Deletions made before the returned time (s) may be purged at `now`; `None`: never.
    pub fn gc_before(self, now: u32, gc_grace_seconds: u32) -> Option<u32> {
        match self {
            TombstoneGcMode::Timeout | TombstoneGcMode::Repair => {
                Some(now.saturating_sub(gc_grace_seconds))
            }
            TombstoneGcMode::Immediate => Some(now),
            TombstoneGcMode::Disabled => None,
        }
    }
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            compression: CompressionParams::default(),
            flush_compression: None,
            bloom_filter_fp_chance: 0.01,
            gc_grace_seconds: 864_000,
            default_time_to_live: 0,
            comment: String::new(),
            extra: Vec::new(),
            compaction: Vec::new(),
            tombstone_gc: TombstoneGcMode::Timeout,
        }
    }
}

/// The `extra` option that turns the row cache off for a table (ScyllaDB's
/// `caching = {'enabled': 'false'}`); any other value, or none, leaves it on.
pub const CACHING_ENABLED: &str = "caching.enabled";

impl TableOptions {
    /// Whether reads of the table go through the row cache (when the database has one).
    pub fn cache_enabled(&self) -> bool {
        !self
            .extra
            .iter()
            .any(|(k, v)| k == CACHING_ENABLED && v.eq_ignore_ascii_case("false"))
    }
}

/// Prefix of the `extra` options recording dropped columns: `id|dropped at (µs)|type`, then
/// `|static` for a static column.
const DROPPED_PREFIX: &str = "dropped_column.";

/// A column dropped from a table (`system_schema.dropped_columns`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedColumn {
    /// Name.
    pub name: String,
    /// The id its cells carry.
    pub id: ColumnId,
    /// When it was dropped (µs).
    pub dropped_at: i64,
    /// Its type, as CQL text.
    pub ty: String,
    /// Whether it was a static column.
    pub is_static: bool,
}

/// A table definition.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSchema {
    /// Table id.
    pub id: TableId,
    /// Keyspace name.
    pub keyspace: String,
    /// Table name.
    pub name: String,
    /// Columns: partition key columns first (in key order), then clustering (in order),
    /// then static and regular ones.
    pub columns: Vec<ColumnDef>,
    /// Options.
    pub options: TableOptions,
}

impl TableSchema {
    /// Starts a schema; add columns with [`TableSchema::with_column`].
    pub fn new(keyspace: &str, name: &str) -> Self {
        TableSchema {
            id: rand_table_id(),
            keyspace: keyspace.to_string(),
            name: name.to_string(),
            columns: Vec::new(),
            options: TableOptions::default(),
        }
    }

    /// Adds a column (ids are assigned in order).
    pub fn with_column(mut self, name: &str, ty: CqlType, kind: ColumnKind) -> Self {
        self.add_column(name, ty, kind, Order::Asc);
        self
    }

    /// Adds a clustering column with an explicit order.
    pub fn with_clustering(mut self, name: &str, ty: CqlType, order: Order) -> Self {
        self.add_column(name, ty, ColumnKind::Clustering, order);
        self
    }

    /// Adds a column and returns its id: above every id in use or ever dropped, so that a
    /// re-added column never sees the cells of the dropped one.
    pub fn add_column(
        &mut self,
        name: &str,
        ty: CqlType,
        kind: ColumnKind,
        order: Order,
    ) -> ColumnId {
        let id = self
            .columns
            .iter()
            .map(|c| c.id + 1)
            .chain(self.dropped_columns().iter().map(|d| d.id + 1))
            .max()
            .unwrap_or(0);
        self.columns.push(ColumnDef {
            id,
            name: name.to_string(),
            ty,
            kind,
            order,
            mask: None,
        });
        id
    }

    /// Columns of one kind, in definition order.
    pub fn columns_of(&self, kind: ColumnKind) -> impl Iterator<Item = &ColumnDef> {
        self.columns.iter().filter(move |c| c.kind == kind)
    }

    /// The column with this name.
    pub fn column(&self, name: &str) -> Option<&ColumnDef> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The column with this id.
    pub fn column_by_id(&self, id: ColumnId) -> Option<&ColumnDef> {
        self.columns.iter().find(|c| c.id == id)
    }

    /// The columns dropped from the table (`ALTER TABLE … DROP`), oldest first. Their ids
    /// are never reused, and reads ignore the cells they left behind.
    pub fn dropped_columns(&self) -> Vec<DroppedColumn> {
        self.options
            .extra
            .iter()
            .filter_map(|(k, v)| {
                let name = k.strip_prefix(DROPPED_PREFIX)?;
                let mut it = v.splitn(4, '|');
                Some(DroppedColumn {
                    name: name.to_string(),
                    id: it.next()?.parse().ok()?,
                    dropped_at: it.next()?.parse().ok()?,
                    ty: it.next()?.to_string(),
                    is_static: it.next() == Some("static"),
                })
            })
            .collect()
    }

    /// Drops a column, recording it so that its old cells stay hidden (and its id unused);
    /// `dropped_at` is in microseconds. Returns false if there is no such column.
    pub fn drop_column(&mut self, name: &str, dropped_at: i64) -> bool {
        let Some(pos) = self.columns.iter().position(|c| c.name == name) else {
            return false;
        };
        let c = self.columns.remove(pos);
        // A later drop of a column of the same name replaces the earlier record, keeping
        // the highest id ever used (ids are allocated above every dropped one).
        self.options
            .extra
            .retain(|(k, _)| k.strip_prefix(DROPPED_PREFIX) != Some(c.name.as_str()));
        self.options.extra.push((
            format!("{DROPPED_PREFIX}{}", c.name),
            format!(
                "{}|{}|{}{}",
                c.id,
                dropped_at,
                c.ty.name(),
                if c.kind == ColumnKind::Static {
                    "|static"
                } else {
                    ""
                }
            ),
        ));
        true
    }

    /// What reads must not see of dropped columns, as `(column id, newest hidden timestamp)`
    /// sorted by id: every cell of a dropped column's id, and — when a column of the same name
    /// was added again — the new column's cells written at or before the drop (Cassandra keeps
    /// a dropped column's drop time and hides older cells of that name).
    pub fn hidden_cells(&self) -> Vec<(ColumnId, i64)> {
        let mut out: Vec<(ColumnId, i64)> = Vec::new();
        let dropped = self.dropped_columns();
        for d in &dropped {
            if let Some(c) = self.column(&d.name) {
                out.push((c.id, d.dropped_at));
            }
        }
        // Ids are never reused, so every id below the highest one ever allocated that no
        // column holds now was a dropped column's — including the ids of a name dropped,
        // added again and dropped again, whose record keeps only the last id.
        let top = dropped.iter().map(|d| d.id).max();
        for id in 0..=top.unwrap_or(0) {
            if top.is_some() && self.column_by_id(id).is_none() {
                out.push((id, i64::MAX));
            }
        }
        out.sort_unstable();
        out.dedup_by_key(|(id, _)| *id);
        out
    }

    /// The clustering key layout.
    pub fn clustering_layout(&self) -> ClusteringLayout {
        ClusteringLayout {
            columns: self
                .columns_of(ColumnKind::Clustering)
                .map(|c| (c.ty.clone(), c.order))
                .collect(),
        }
    }

    /// Serializes the schema.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.id.to_le_bytes());
        put_bytes(&mut out, self.keyspace.as_bytes());
        put_bytes(&mut out, self.name.as_bytes());
        put_uvarint(&mut out, self.columns.len() as u64);
        for c in &self.columns {
            put_uvarint(&mut out, u64::from(c.id));
            put_bytes(&mut out, c.name.as_bytes());
            put_bytes(&mut out, c.ty.full_name().as_bytes());
            out.push(match c.kind {
                ColumnKind::PartitionKey => 0,
                ColumnKind::Clustering => 1,
                ColumnKind::Static => 2,
                ColumnKind::Regular => 3,
            });
            out.push(match c.order {
                Order::Asc => 0,
                Order::Desc => 1,
            });
        }
        let o = &self.options;
        put_options(&mut out, &o.compression.to_options());
        match &o.flush_compression {
            Some(fc) => {
                out.push(1);
                put_options(&mut out, &fc.to_options());
            }
            None => out.push(0),
        }
        out.extend_from_slice(&o.bloom_filter_fp_chance.to_le_bytes());
        put_uvarint(&mut out, u64::from(o.gc_grace_seconds));
        put_uvarint(&mut out, u64::from(o.default_time_to_live));
        put_bytes(&mut out, o.comment.as_bytes());
        put_options(&mut out, &o.extra);
        // Fields added after the first format: decoders treat their absence as defaults.
        put_options(&mut out, &o.compaction);
        put_bytes(&mut out, o.tombstone_gc.name().as_bytes());
        let masked: Vec<&ColumnDef> = self.columns.iter().filter(|c| c.mask.is_some()).collect();
        put_uvarint(&mut out, masked.len() as u64);
        for c in masked {
            let Some(m) = &c.mask else { continue };
            put_uvarint(&mut out, u64::from(c.id));
            put_bytes(&mut out, m.keyspace.as_bytes());
            put_bytes(&mut out, m.function.as_bytes());
            put_uvarint(&mut out, m.args.len() as u64);
            for (ty, v) in &m.args {
                put_bytes(&mut out, ty.full_name().as_bytes());
                match v {
                    Some(v) => {
                        out.push(1);
                        put_bytes(&mut out, v);
                    }
                    None => out.push(0),
                }
            }
        }
        out
    }

    /// Parses a serialized schema; `path` names the file in errors.
    pub fn decode(buf: &[u8], path: &Path) -> Result<TableSchema> {
        let corrupt = |offset: usize, kind| Error::corruption(path, offset as u64, kind);
        let mut d = Decoder::new(buf);
        let r = (|| {
            let mut id = [0u8; 16];
            id.copy_from_slice(d.raw(16)?);
            let keyspace = string(&mut d)?;
            let name = string(&mut d)?;
            let n = d.len()?;
            let mut columns = Vec::with_capacity(n);
            for _ in 0..n {
                let id = d.uvarint32()?;
                let cname = string(&mut d)?;
                let at = d.position();
                let tyname = string(&mut d)?;
                let ty = CqlType::parse(&tyname).ok_or(crate::model::codec::DecodeError {
                    offset: at,
                    kind: CorruptionKind::Invalid("column type"),
                })?;
                let kind = match d.u8()? {
                    0 => ColumnKind::PartitionKey,
                    1 => ColumnKind::Clustering,
                    2 => ColumnKind::Static,
                    3 => ColumnKind::Regular,
                    _ => return Err(d.error(CorruptionKind::Invalid("column kind"))),
                };
                let order = if d.u8()? == 1 {
                    Order::Desc
                } else {
                    Order::Asc
                };
                columns.push(ColumnDef {
                    id,
                    name: cname,
                    ty,
                    kind,
                    order,
                    mask: None,
                });
            }
            let compression = get_options(&mut d)?;
            let flush_compression = if d.u8()? == 1 {
                Some(get_options(&mut d)?)
            } else {
                None
            };
            let mut fp = [0u8; 8];
            fp.copy_from_slice(d.raw(8)?);
            let gc_grace_seconds = d.uvarint32()?;
            let default_time_to_live = d.uvarint32()?;
            let comment = string(&mut d)?;
            let extra = get_options(&mut d)?;
            let compaction = if d.is_empty() {
                Vec::new()
            } else {
                get_options(&mut d)?
            };
            let tombstone_gc = if d.is_empty() {
                TombstoneGcMode::Timeout
            } else {
                let at = d.position();
                TombstoneGcMode::parse(&string(&mut d)?).ok_or(
                    crate::model::codec::DecodeError {
                        offset: at,
                        kind: CorruptionKind::Invalid("tombstone_gc mode"),
                    },
                )?
            };
            // Column masks, by column id (absent before masks existed).
            if !d.is_empty() {
                for _ in 0..d.len()? {
                    let cid = d.uvarint32()?;
                    let keyspace = string(&mut d)?;
                    let function = string(&mut d)?;
                    let n = d.len()?;
                    let mut args = Vec::with_capacity(n);
                    for _ in 0..n {
                        let at = d.position();
                        let ty = CqlType::parse(&string(&mut d)?).ok_or(
                            crate::model::codec::DecodeError {
                                offset: at,
                                kind: CorruptionKind::Invalid("mask argument type"),
                            },
                        )?;
                        let v = if d.u8()? == 1 {
                            Some(d.bytes()?.to_vec())
                        } else {
                            None
                        };
                        args.push((ty, v));
                    }
                    let mask = ColumnMask {
                        keyspace,
                        function,
                        args,
                    };
                    match columns.iter_mut().find(|c| c.id == cid) {
                        Some(c) => c.mask = Some(mask),
                        None => return Err(d.error(CorruptionKind::Invalid("masked column id"))),
                    }
                }
            }
            Ok((
                u128::from_le_bytes(id),
                keyspace,
                name,
                columns,
                compression,
                flush_compression,
                f64::from_le_bytes(fp),
                gc_grace_seconds,
                default_time_to_live,
                comment,
                extra,
                compaction,
                tombstone_gc,
            ))
        })();
        let (
            id,
            keyspace,
            name,
            columns,
            compression,
            flush_compression,
            fp,
            gc_grace_seconds,
            default_time_to_live,
            comment,
            extra,
            compaction,
            tombstone_gc,
        ) = r.map_err(|e| corrupt(e.offset, e.kind))?;
        let compression = CompressionParams::from_options(&compression)?;
        let flush_compression = flush_compression
            .map(|o| CompressionParams::from_options(&o))
            .transpose()?;
        Ok(TableSchema {
            id,
            keyspace,
            name,
            columns,
            options: TableOptions {
                compression,
                flush_compression,
                bloom_filter_fp_chance: fp,
                gc_grace_seconds,
                default_time_to_live,
                comment,
                extra,
                compaction,
                tombstone_gc,
            },
        })
    }

    /// Writes the schema to `dir/schema.cairn` atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        write_file_atomically(&dir.join(SCHEMA_FILE), &crate::io::with_crc(self.encode()))
    }

    /// Loads `dir/schema.cairn`.
    pub fn load(dir: &Path) -> Result<TableSchema> {
        let path = dir.join(SCHEMA_FILE);
        let buf = std::fs::read(&path).with_path(&path)?;
        let body = crate::io::check_crc(&buf, &path)?;
        TableSchema::decode(body, &path)
    }
}

/// The schema file's name inside a table directory.
pub const SCHEMA_FILE: &str = "schema.cairn";

/// What an sstable records of the schema it was written with (Cassandra's
/// `SerializationHeader`): every column id its cells may carry — the live columns and the
/// dropped ones — with name, type and role. Loading an sstable into a table (`refresh`)
/// checks it against the table's schema, so that cells are never read as another column's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerializationHeader {
    /// Live columns, then dropped ones.
    pub columns: Vec<HeaderColumn>,
}

/// A key column as [`SerializationHeader::check_compatible`] compares them.
type KeyColumn<'a> = (ColumnKind, &'a str, String, Order);

/// One column of a [`SerializationHeader`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderColumn {
    /// Column id (what cells carry).
    pub id: ColumnId,
    /// Name.
    pub name: String,
    /// Type, as [`CqlType::name`] spells it.
    pub ty: String,
    /// Role.
    pub kind: ColumnKind,
    /// Clustering order (clustering columns only).
    pub order: Order,
    /// True for a column dropped before the sstable was written.
    pub dropped: bool,
}

impl SerializationHeader {
    /// The header of sstables written under `schema`.
    pub fn of(schema: &TableSchema) -> SerializationHeader {
        let mut columns: Vec<HeaderColumn> = schema
            .columns
            .iter()
            .map(|c| HeaderColumn {
                id: c.id,
                name: c.name.clone(),
                ty: c.ty.name(),
                kind: c.kind,
                order: c.order,
                dropped: false,
            })
            .collect();
        for d in schema.dropped_columns() {
            if columns.iter().any(|c| c.id == d.id) {
                continue;
            }
            columns.push(HeaderColumn {
                id: d.id,
                name: d.name,
                ty: d.ty,
                kind: if d.is_static {
                    ColumnKind::Static
                } else {
                    ColumnKind::Regular
                },
                order: Order::Asc,
                dropped: true,
            });
        }
        SerializationHeader { columns }
    }

    /// Checks that an sstable written with this header can be read as part of a table with
    /// `schema`: the same key columns (names, types, order), and every other column id the
    /// sstable may hold is a column of the table — live or dropped — with the same name and
    /// type, so no cell is ever read as another column's. Columns the table added since are
    /// fine. `Err` says what differs, for the operator.
    pub fn check_compatible(&self, schema: &TableSchema) -> std::result::Result<(), String> {
        let is_key = |k: ColumnKind| matches!(k, ColumnKind::PartitionKey | ColumnKind::Clustering);
        let ours: Vec<KeyColumn<'_>> = self
            .columns
            .iter()
            .filter(|c| is_key(c.kind))
            .map(|c| (c.kind, c.name.as_str(), c.ty.clone(), c.order))
            .collect();
        let theirs: Vec<KeyColumn<'_>> = schema
            .columns
            .iter()
            .filter(|c| is_key(c.kind))
            .map(|c| (c.kind, c.name.as_str(), c.ty.name(), c.order))
            .collect();
        if ours != theirs {
            let show = |cols: &[KeyColumn<'_>]| {
                cols.iter()
                    .map(|(k, n, t, o)| match k {
                        ColumnKind::Clustering if *o == Order::Desc => {
                            format!("{n} {t} (clustering DESC)")
                        }
                        ColumnKind::Clustering => format!("{n} {t} (clustering)"),
                        _ => format!("{n} {t} (partition key)"),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "its primary key is [{}], the table's is [{}]",
                show(&ours),
                show(&theirs)
            ));
        }
        let dropped = schema.dropped_columns();
        for c in self
            .columns
            .iter()
            .filter(|c| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static))
        {
            let live = schema.column_by_id(c.id);
            let matches = match live {
                Some(l) => {
                    l.name == c.name && l.ty.name() == c.ty && (c.dropped || l.kind == c.kind)
                }
                None => dropped
                    .iter()
                    .any(|d| d.id == c.id && d.name == c.name && d.ty == c.ty),
            };
            if !matches {
                let what = match live {
                    Some(l) => format!(
                        "the table's column {} is '{}' {}",
                        c.id,
                        l.name,
                        l.ty.name()
                    ),
                    None => format!("the table has no column {}", c.id),
                };
                return Err(format!(
                    "its column {} is '{}' {}{}, but {what}",
                    c.id,
                    c.name,
                    c.ty,
                    if c.dropped { " (dropped)" } else { "" },
                ));
            }
        }
        Ok(())
    }
}

fn string(d: &mut Decoder<'_>) -> crate::model::codec::DecodeResult<String> {
    let at = d.position();
    let b = d.bytes()?;
    String::from_utf8(b.to_vec()).map_err(|_| crate::model::codec::DecodeError {
        offset: at,
        kind: CorruptionKind::Invalid("utf-8 string"),
    })
}

fn put_options(out: &mut Vec<u8>, opts: &[(String, String)]) {
    put_uvarint(out, opts.len() as u64);
    for (k, v) in opts {
        put_bytes(out, k.as_bytes());
        put_bytes(out, v.as_bytes());
    }
}

fn get_options(d: &mut Decoder<'_>) -> crate::model::codec::DecodeResult<Vec<(String, String)>> {
    let n = d.len()?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push((string(d)?, string(d)?));
    }
    Ok(v)
}

/// A random table id (version-4 UUID bits).
pub fn rand_table_id() -> TableId {
    uuid::Uuid::new_v4().as_u128()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn column_masks_survive_encoding() {
        let mut s = TableSchema::new("ks", "t");
        s.add_column("k", CqlType::Int, ColumnKind::PartitionKey, Order::Asc);
        let v = s.add_column("v", CqlType::Text, ColumnKind::Regular, Order::Asc);
        s.add_column("w", CqlType::Int, ColumnKind::Regular, Order::Asc);
        let mask = ColumnMask {
            keyspace: "system".into(),
            function: "mask_inner".into(),
            args: vec![
                (CqlType::Int, Some(vec![0, 0, 0, 1])),
                (CqlType::Int, None),
                (CqlType::Text, Some(b"#".to_vec())),
            ],
        };
        if let Some(c) = s.columns.iter_mut().find(|c| c.id == v) {
            c.mask = Some(mask.clone());
        }
        let back = TableSchema::decode(&s.encode(), Path::new("schema")).unwrap();
        assert_eq!(back.column("v").and_then(|c| c.mask.clone()), Some(mask));
        assert_eq!(back.column("w").and_then(|c| c.mask.clone()), None);
        assert_eq!(back, s);
    }

    #[test]
    fn a_name_dropped_added_and_dropped_again_hides_both_ids() {
        let mut s = TableSchema::new("ks", "t");
        s.add_column("k", CqlType::Int, ColumnKind::PartitionKey, Order::Asc);
        let first = s.add_column("v", CqlType::Bigint, ColumnKind::Regular, Order::Asc);
        assert!(s.drop_column("v", 10));
        let second = s.add_column("v", CqlType::Bigint, ColumnKind::Regular, Order::Asc);
        assert_eq!(s.hidden_cells(), vec![(first, i64::MAX), (second, 10)]);
        assert!(s.drop_column("v", 20));
        // The record keeps the last id only; the first id's cells stay hidden all the same.
        assert_eq!(
            s.hidden_cells(),
            vec![(first, i64::MAX), (second, i64::MAX)]
        );
    }
}
