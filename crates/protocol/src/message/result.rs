//! RESULT bodies (spec §4.2.5): rows and their metadata, prepared statements, schema
//! changes.

use super::error::CqlError;
use crate::codec::*;
use crate::types::{ColumnSpec, ColumnType, TableSpec};
use bytes::Bytes;
use std::sync::Arc;

/// Rows metadata flag bits (spec §4.2.5.2).
pub mod rows_flags {
    pub const GLOBAL_TABLES_SPEC: i32 = 0x0001;
    pub const HAS_MORE_PAGES: i32 = 0x0002;
    pub const NO_METADATA: i32 = 0x0004;
}

/// The column description of a result set, shareable between responses (a prepared
/// statement's result metadata is built once).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResultMetadata {
    /// When set, written once instead of per column (Cassandra sets it whenever all columns
    /// come from one table); each column's own `table` is then not written.
    pub global_table_spec: Option<TableSpec>,
    pub columns: Vec<ColumnSpec>,
}

impl ResultMetadata {
    /// Metadata for columns of one table, with a global table spec.
    pub fn for_table(table: TableSpec, columns: Vec<(String, ColumnType)>) -> Self {
        ResultMetadata {
            columns: columns
                .into_iter()
                .map(|(name, typ)| ColumnSpec::new(table.clone(), name, typ))
                .collect(),
            global_table_spec: Some(table),
        }
    }

    fn encode_specs(&self, version: u8, out: &mut Vec<u8>) {
        if let Some(g) = &self.global_table_spec {
            write_string(out, &g.keyspace);
            write_string(out, &g.table);
        }
        for c in &self.columns {
            if self.global_table_spec.is_none() {
                write_string(out, &c.table.keyspace);
                write_string(out, &c.table.table);
            }
            write_string(out, &c.name);
            c.typ.encode(version, out);
        }
    }

    fn decode_specs(r: &mut Reader, global: bool, count: usize) -> DecodeResult<Self> {
        let global_table_spec = if global {
            Some(TableSpec::new(r.read_string()?, r.read_string()?))
        } else {
            None
        };
        r.ensure_count(count, 4, "column specs")?;
        let mut columns = Vec::with_capacity(count);
        for _ in 0..count {
            let table = match &global_table_spec {
                Some(g) => g.clone(),
                None => TableSpec::new(r.read_string()?, r.read_string()?),
            };
            let name = r.read_string()?;
            let typ = ColumnType::decode(r)?;
            columns.push(ColumnSpec { table, name, typ });
        }
        Ok(ResultMetadata {
            global_table_spec,
            columns,
        })
    }
}

/// A page of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    pub metadata: Arc<ResultMetadata>,
    /// Number of columns per row (equals `metadata.columns.len()` unless decoded from a
    /// response without metadata).
    pub column_count: usize,
    /// Write only the column count, not the specs (the request had Skip_metadata).
    pub no_metadata: bool,
    /// Present when more pages follow (Has_more_pages).
    pub paging_state: Option<Bytes>,
    pub rows_count: usize,
    /// `rows_count * column_count` concatenated `[bytes]` cells (see [`RowsBuilder`]).
    pub rows_content: Bytes,
}

/// Builds the `<rows_content>` of a Rows result cell by cell.
#[derive(Debug, Clone)]
pub struct RowsBuilder {
    column_count: usize,
    cells: usize,
    buf: Vec<u8>,
}

impl RowsBuilder {
    pub fn new(column_count: usize) -> Self {
        RowsBuilder {
            column_count,
            cells: 0,
            buf: Vec::new(),
        }
    }

    /// Appends the next cell (row-major); `None` is null.
    pub fn push(&mut self, cell: Option<&[u8]>) {
        write_bytes(&mut self.buf, cell);
        self.cells += 1;
    }

    /// Appends a whole row.
    pub fn push_row<'a>(&mut self, row: impl IntoIterator<Item = Option<&'a [u8]>>) {
        for c in row {
            self.push(c);
        }
    }

    /// Rows completed so far.
    pub fn rows(&self) -> usize {
        self.cells.checked_div(self.column_count).unwrap_or(0)
    }

    /// Bytes buffered so far (for page-size-in-bytes limits).
    pub fn byte_len(&self) -> usize {
        self.buf.len()
    }

    /// The result; `Err` if the cells do not fill whole rows.
    pub fn finish(self, metadata: Arc<ResultMetadata>) -> Result<Rows, CqlError> {
        if self.column_count != metadata.columns.len() {
            return Err(CqlError::server(format!(
                "rows builder: {} columns, but the metadata has {}",
                self.column_count,
                metadata.columns.len()
            )));
        }
        self.build(metadata, false)
    }

    /// The result without column specs, for a request that set Skip_metadata (the driver
    /// already has them from PREPARE): only the column count is written, and no specs are
    /// built for a response that would not carry them.
    pub fn finish_without_metadata(self) -> Result<Rows, CqlError> {
        static NONE: std::sync::OnceLock<Arc<ResultMetadata>> = std::sync::OnceLock::new();
        let none = Arc::clone(NONE.get_or_init(|| Arc::new(ResultMetadata::default())));
        self.build(none, true)
    }

    fn build(self, metadata: Arc<ResultMetadata>, no_metadata: bool) -> Result<Rows, CqlError> {
        if (self.column_count > 0 && !self.cells.is_multiple_of(self.column_count))
            || (self.column_count == 0 && self.cells != 0)
        {
            return Err(CqlError::server(format!(
                "rows builder: {} cells for {} columns",
                self.cells, self.column_count
            )));
        }
        Ok(Rows {
            column_count: self.column_count,
            rows_count: self.rows(),
            metadata,
            no_metadata,
            paging_state: None,
            rows_content: Bytes::from(self.buf),
        })
    }
}

impl Rows {
    /// Splits `rows_content` into rows of cells (client side / tests).
    pub fn decode_rows(&self) -> DecodeResult<Vec<Vec<Option<Bytes>>>> {
        let mut r = Reader::new(self.rows_content.clone());
        r.ensure_count(self.rows_count.saturating_mul(self.column_count), 4, "rows")?;
        (0..self.rows_count)
            .map(|_| (0..self.column_count).map(|_| r.read_bytes()).collect())
            .collect()
    }
}

/// Bind-marker metadata of a Prepared result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreparedMetadata {
    pub global_table_spec: Option<TableSpec>,
    /// Indexes of the bind markers forming the partition key, in key order (v4); empty if
    /// some partition key column is not bound by a plain marker.
    pub pk_indexes: Vec<u16>,
    pub columns: Vec<ColumnSpec>,
}

/// A Prepared result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub id: Bytes,
    pub metadata: PreparedMetadata,
    /// Result set columns; empty (sent as No_metadata with 0 columns) for non-SELECTs.
    pub result_metadata: Arc<ResultMetadata>,
}

/// CREATED / UPDATED / DROPPED.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaChangeType {
    Created,
    Updated,
    Dropped,
}

impl SchemaChangeType {
    pub fn name(self) -> &'static str {
        match self {
            SchemaChangeType::Created => "CREATED",
            SchemaChangeType::Updated => "UPDATED",
            SchemaChangeType::Dropped => "DROPPED",
        }
    }
}

/// What a schema change touched.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SchemaChangeTarget {
    Keyspace {
        keyspace: String,
    },
    Table {
        keyspace: String,
        table: String,
    },
    Type {
        keyspace: String,
        name: String,
    },
    Function {
        keyspace: String,
        name: String,
        arg_types: Vec<String>,
    },
    Aggregate {
        keyspace: String,
        name: String,
        arg_types: Vec<String>,
    },
}

/// A schema change (result or event body).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemaChange {
    pub change: SchemaChangeType,
    pub target: SchemaChangeTarget,
}

impl SchemaChange {
    pub(crate) fn encode(&self, version: u8, out: &mut Vec<u8>) {
        use SchemaChangeTarget as T;
        match (&self.target, version < 4) {
            // v3 has no function/aggregate targets: Cassandra reports the keyspace updated.
            (T::Function { keyspace, .. } | T::Aggregate { keyspace, .. }, true) => {
                write_string(out, SchemaChangeType::Updated.name());
                write_string(out, "KEYSPACE");
                write_string(out, keyspace);
            }
            (target, _) => {
                write_string(out, self.change.name());
                match target {
                    T::Keyspace { keyspace } => {
                        write_string(out, "KEYSPACE");
                        write_string(out, keyspace);
                    }
                    T::Table { keyspace, table } => {
                        write_string(out, "TABLE");
                        write_string(out, keyspace);
                        write_string(out, table);
                    }
                    T::Type { keyspace, name } => {
                        write_string(out, "TYPE");
                        write_string(out, keyspace);
                        write_string(out, name);
                    }
                    T::Function {
                        keyspace,
                        name,
                        arg_types,
                    }
                    | T::Aggregate {
                        keyspace,
                        name,
                        arg_types,
                    } => {
                        write_string(
                            out,
                            if matches!(target, T::Function { .. }) {
                                "FUNCTION"
                            } else {
                                "AGGREGATE"
                            },
                        );
                        write_string(out, keyspace);
                        write_string(out, name);
                        write_string_list(out, arg_types);
                    }
                }
            }
        }
    }

    pub(crate) fn decode(r: &mut Reader) -> DecodeResult<Self> {
        use SchemaChangeTarget as T;
        let change = match r.read_string()?.as_str() {
            "CREATED" => SchemaChangeType::Created,
            "UPDATED" => SchemaChangeType::Updated,
            "DROPPED" => SchemaChangeType::Dropped,
            other => return Err(DecodeError::invalid("schema change type", other)),
        };
        let target = match r.read_string()?.as_str() {
            "KEYSPACE" => T::Keyspace {
                keyspace: r.read_string()?,
            },
            "TABLE" => T::Table {
                keyspace: r.read_string()?,
                table: r.read_string()?,
            },
            "TYPE" => T::Type {
                keyspace: r.read_string()?,
                name: r.read_string()?,
            },
            "FUNCTION" => T::Function {
                keyspace: r.read_string()?,
                name: r.read_string()?,
                arg_types: r.read_string_list()?,
            },
            "AGGREGATE" => T::Aggregate {
                keyspace: r.read_string()?,
                name: r.read_string()?,
                arg_types: r.read_string_list()?,
            },
            other => return Err(DecodeError::invalid("schema change target", other)),
        };
        Ok(SchemaChange { change, target })
    }
}

/// The body of a RESULT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultBody {
    Void,
    Rows(Rows),
    SetKeyspace(String),
    Prepared(Prepared),
    SchemaChange(SchemaChange),
}

fn encode_rows_metadata(
    out: &mut Vec<u8>,
    version: u8,
    metadata: &ResultMetadata,
    column_count: usize,
    no_metadata: bool,
    paging_state: Option<&Bytes>,
) {
    let no_metadata = no_metadata || metadata.columns.is_empty();
    let mut fl = 0;
    if no_metadata {
        fl |= rows_flags::NO_METADATA;
    } else if metadata.global_table_spec.is_some() {
        fl |= rows_flags::GLOBAL_TABLES_SPEC;
    }
    if paging_state.is_some() {
        fl |= rows_flags::HAS_MORE_PAGES;
    }
    write_int(out, fl);
    write_int(out, i32::try_from(column_count).unwrap_or(i32::MAX));
    if let Some(p) = paging_state {
        write_bytes(out, Some(p));
    }
    if !no_metadata {
        metadata.encode_specs(version, out);
    }
}

fn decode_rows_metadata(
    r: &mut Reader,
) -> DecodeResult<(ResultMetadata, usize, bool, Option<Bytes>)> {
    let fl = r.read_int()?;
    let count = r.read_int()?;
    let count = usize::try_from(count)
        .map_err(|_| DecodeError::invalid("column count", format!("{count}")))?;
    let paging_state = if fl & rows_flags::HAS_MORE_PAGES != 0 {
        r.read_bytes()?
    } else {
        None
    };
    let no_metadata = fl & rows_flags::NO_METADATA != 0;
    let metadata = if no_metadata {
        ResultMetadata::default()
    } else {
        ResultMetadata::decode_specs(r, fl & rows_flags::GLOBAL_TABLES_SPEC != 0, count)?
    };
    Ok((metadata, count, no_metadata, paging_state))
}

impl ResultBody {
    pub(crate) fn encode(&self, version: u8, out: &mut Vec<u8>) {
        match self {
            ResultBody::Void => write_int(out, 0x0001),
            ResultBody::Rows(rows) => {
                write_int(out, 0x0002);
                encode_rows_metadata(
                    out,
                    version,
                    &rows.metadata,
                    rows.column_count,
                    rows.no_metadata,
                    rows.paging_state.as_ref(),
                );
                write_int(out, i32::try_from(rows.rows_count).unwrap_or(i32::MAX));
                out.extend_from_slice(&rows.rows_content);
            }
            ResultBody::SetKeyspace(ks) => {
                write_int(out, 0x0003);
                write_string(out, ks);
            }
            ResultBody::Prepared(p) => {
                write_int(out, 0x0004);
                write_short_bytes(out, &p.id);
                let m = &p.metadata;
                write_int(
                    out,
                    if m.global_table_spec.is_some() {
                        rows_flags::GLOBAL_TABLES_SPEC
                    } else {
                        0
                    },
                );
                write_int(out, i32::try_from(m.columns.len()).unwrap_or(i32::MAX));
                if version >= 4 {
                    write_int(out, i32::try_from(m.pk_indexes.len()).unwrap_or(i32::MAX));
                    for &i in &m.pk_indexes {
                        write_short(out, i);
                    }
                }
                ResultMetadata {
                    global_table_spec: m.global_table_spec.clone(),
                    columns: m.columns.clone(),
                }
                .encode_specs(version, out);
                let rm = &p.result_metadata;
                encode_rows_metadata(out, version, rm, rm.columns.len(), false, None);
            }
            ResultBody::SchemaChange(sc) => {
                write_int(out, 0x0005);
                sc.encode(version, out);
            }
        }
    }

    pub(crate) fn decode(version: u8, r: &mut Reader) -> DecodeResult<Self> {
        Ok(match r.read_int()? {
            0x0001 => ResultBody::Void,
            0x0002 => {
                let (metadata, column_count, no_metadata, paging_state) = decode_rows_metadata(r)?;
                let rows_count = r.read_int()?;
                let rows_count = usize::try_from(rows_count)
                    .map_err(|_| DecodeError::invalid("rows count", format!("{rows_count}")))?;
                ResultBody::Rows(Rows {
                    metadata: Arc::new(metadata),
                    column_count,
                    no_metadata,
                    paging_state,
                    rows_count,
                    rows_content: r.read_rest(),
                })
            }
            0x0003 => ResultBody::SetKeyspace(r.read_string()?),
            0x0004 => {
                let id = r.read_short_bytes()?;
                let fl = r.read_int()?;
                let count = r.read_int()?;
                let count = usize::try_from(count)
                    .map_err(|_| DecodeError::invalid("column count", format!("{count}")))?;
                let mut pk_indexes = Vec::new();
                if version >= 4 {
                    let n = r.read_int()?;
                    let n = usize::try_from(n)
                        .map_err(|_| DecodeError::invalid("pk count", format!("{n}")))?;
                    r.ensure_count(n, 2, "pk indexes")?;
                    for _ in 0..n {
                        pk_indexes.push(r.read_short()?);
                    }
                }
                let specs = ResultMetadata::decode_specs(
                    r,
                    fl & rows_flags::GLOBAL_TABLES_SPEC != 0,
                    count,
                )?;
                let (result_metadata, _, _, _) = decode_rows_metadata(r)?;
                ResultBody::Prepared(Prepared {
                    id,
                    metadata: PreparedMetadata {
                        global_table_spec: specs.global_table_spec,
                        pk_indexes,
                        columns: specs.columns,
                    },
                    result_metadata: Arc::new(result_metadata),
                })
            }
            0x0005 => ResultBody::SchemaChange(SchemaChange::decode(r)?),
            k => return Err(DecodeError::invalid("result kind", format!("{k}"))),
        })
    }
}
