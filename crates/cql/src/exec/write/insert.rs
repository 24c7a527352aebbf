//! INSERT … VALUES and INSERT … JSON: the column list planned once per table
//! ([`InsertPlan`], cached for prepared statements) and the row written with its marker.

use super::assignment::column_data;
use super::keys::{key_value, partition_key, table_schema};
use super::planned::Planned;
use super::using::using_deferring;
use crate::ast::{BindMarker, Insert, InsertValues, Term};
use crate::error::{Error, Result};
use crate::exec::catalog::now_secs;
use crate::exec::lwt::{RowCondition, RowTarget};
use crate::exec::plan_cache::PlanCache;
use crate::exec::session::Session;
use crate::exec::Executor;
use crate::values::json;
use crate::values::{term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_engine::model::clustering::ClusteringLayout;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{ColumnData, LivenessInfo, Mutation, Partition, Row};
use cairn_engine::schema::{ColumnKind, TableSchema};
use smallvec::SmallVec;
use std::sync::Arc;

/// Where the values of an INSERT go in one table schema: which value gives each key part
/// and each column. Made (and the column list checked) once per schema for a prepared INSERT.
pub struct InsertPlan {
    /// The partition-key parts, in key order.
    pub(super) partition_key: SmallVec<[Part; 4]>,
    /// The clustering-key parts, in key order.
    pub(super) clustering_key: SmallVec<[Part; 4]>,
    /// Whether a row is written: the whole clustering key is given (an INSERT of static
    /// columns only may leave it out).
    pub(super) writes_row: bool,
    /// The table's clustering layout (built once, not per row).
    pub(super) layout: ClusteringLayout,
    /// Regular columns given, in column-id order (the order a row keeps its cells in).
    pub(super) regular: SmallVec<[Part; 8]>,
    /// Static columns given, in column-id order.
    pub(super) statics: SmallVec<[Part; 4]>,
}

/// Cassandra's refusal of INSERT (VALUES or JSON) into a counter table.
fn refuse_counter_table(schema: &TableSchema) -> Result<()> {
    if crate::exec::create_table::has_counters(schema) {
        return Err(Error::Invalid(
            "INSERT statements are not allowed on counter tables, use UPDATE instead".into(),
        ));
    }
    Ok(())
}

/// One column of an INSERT: its index in the schema's columns and in the INSERT's values.
#[derive(Clone, Copy)]
pub(super) struct Part {
    pub(super) column: usize,
    pub(super) value: usize,
}

impl InsertPlan {
    /// Checks an INSERT's column list against `schema` (Cassandra's messages) and plans it
    /// (at PREPARE too, where Cassandra makes the same checks).
    pub fn new(schema: &TableSchema, columns: &[String], values: usize) -> Result<InsertPlan> {
        refuse_counter_table(schema)?;
        if columns.len() != values {
            return Err(Error::Invalid(format!(
                "Unmatched column names/values (got {} names and {} values)",
                columns.len(),
                values
            )));
        }
        let mut given: SmallVec<[Part; 8]> = SmallVec::new();
        for (value, name) in columns.iter().enumerate() {
            let named = |p: &Part| schema.columns[p.column].name == *name;
            if given.iter().any(named) {
                return Err(Error::Invalid(format!(
                    "Multiple definitions found for column {name}"
                )));
            }
            let Some(column) = schema.columns.iter().position(|c| c.name == *name) else {
                return Err(Error::undefined_column(schema, name));
            };
            given.push(Part { column, value });
        }
        let of_kind = |kind: ColumnKind| -> (SmallVec<[Part; 4]>, Vec<&str>) {
            let mut found = SmallVec::new();
            let mut missing = Vec::new();
            for (column, c) in schema.columns.iter().enumerate() {
                if c.kind != kind {
                    continue;
                }
                match given.iter().find(|p| p.column == column) {
                    Some(p) => found.push(*p),
                    None => missing.push(c.name.as_str()),
                }
            }
            (found, missing)
        };
        let (partition_key, missing_pk) = of_kind(ColumnKind::PartitionKey);
        if !missing_pk.is_empty() {
            return Err(Error::Invalid(format!(
                "Some partition key parts are missing: {}",
                missing_pk.join(", ")
            )));
        }
        let (clustering_key, missing_ck) = of_kind(ColumnKind::Clustering);
        let mut regular: SmallVec<[Part; 8]> = given
            .iter()
            .filter(|p| schema.columns[p.column].kind == ColumnKind::Regular)
            .copied()
            .collect();
        // A row needs its whole clustering key, unless the INSERT sets static columns only.
        let static_only = clustering_key.is_empty()
            && regular.is_empty()
            && given
                .iter()
                .any(|p| schema.columns[p.column].kind == ColumnKind::Static);
        if !missing_ck.is_empty() && !static_only {
            return Err(Error::Invalid(format!(
                "Some clustering keys are missing: {}",
                missing_ck.join(", ")
            )));
        }
        let mut statics: SmallVec<[Part; 4]> = given
            .iter()
            .filter(|p| schema.columns[p.column].kind == ColumnKind::Static)
            .copied()
            .collect();
        regular.sort_by_key(|p| schema.columns[p.column].id);
        statics.sort_by_key(|p| schema.columns[p.column].id);
        Ok(InsertPlan {
            partition_key,
            clustering_key,
            writes_row: missing_ck.is_empty(),
            layout: schema.clustering_layout(),
            regular,
            statics,
        })
    }
}

/// An INSERT as one mutation; `cache` keeps a prepared INSERT's plan.
pub(super) fn insert_mutation(
    ex: &Executor,
    session: &Session,
    i: &Insert,
    ctx: &dyn TermContext,
    default_ts: Option<i64>,
    cache: Option<&PlanCache<InsertPlan>>,
) -> Result<Planned> {
    let schema = table_schema(ex, session, &i.table)?;
    refuse_counter_table(&schema)?;
    // INSERT JSON gives every column a value (null or unset when the document has none):
    // they are bound to stand-in markers, so the rest is the INSERT … VALUES path.
    let json: JsonInsert;
    // The values' context: the document's stand-in markers for INSERT JSON. USING keeps the
    // statement's own markers (`INSERT … JSON ? USING TTL ?`).
    let (columns, values, values_ctx): (&[String], &[Term], &dyn TermContext) = match &i.values {
        InsertValues::Columns { columns, values } => (columns, values, ctx),
        InsertValues::Json {
            json: text,
            default_unset,
        } => {
            json = JsonInsert::new(&schema, text, *default_unset, ctx)?;
            (&json.columns, &json.markers, &json)
        }
    };
    let make = || InsertPlan::new(&schema, columns, values.len());
    let plan = match cache {
        Some(cache) => cache.get_or_plan(&schema, make)?,
        None => Arc::new(make()?),
    };
    // Cassandra's ModificationStatement constructor, once the column list is prepared and
    // before any value is bound.
    if i.if_not_exists && i.using.timestamp.is_some() {
        return Err(Error::Invalid(
            "Cannot provide custom timestamp for conditional updates".into(),
        ));
    }
    // The keys are bound and checked before USING, as Cassandra's `addUpdates` does.
    let key_part = |p: &Part| key_value(&schema.columns[p.column], &values[p.value], values_ctx);
    let key = partition_key(&plan.partition_key, key_part)?;
    let ckey = if plan.writes_row {
        let vals: SmallVec<[Bytes; 4]> = plan
            .clustering_key
            .iter()
            .map(key_part)
            .collect::<Result<_>>()?;
        let refs: SmallVec<[&[u8]; 4]> = vals.iter().map(|b| b.as_ref()).collect();
        Some(
            plan.layout
                .encode_key(&refs)
                .map_err(|e| Error::Invalid(e.to_string()))?,
        )
    } else {
        None
    };
    let (ts, ttl, deferred) = using_deferring(&i.using, &schema, ctx, default_ts, i.if_not_exists)?;
    let now = now_secs();
    let cells = |parts: &[Part]| -> Result<Vec<(u32, ColumnData)>> {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            let c = &schema.columns[p.column];
            if let Some(d) = column_data(c, &values[p.value], values_ctx, ts, ttl, now)? {
                out.push((c.id, d));
            }
        }
        Ok(out)
    };
    let mut update = Partition::default();
    let mut target = RowTarget::Static;
    if let Some(ckey) = ckey {
        let row = Row {
            marker: Some(if ttl > 0 {
                LivenessInfo::expiring(ts, ttl, now)
            } else {
                LivenessInfo::live(ts)
            }),
            columns: cells(&plan.regular)?,
            ..Row::default()
        };
        target = RowTarget::Row(ckey.clone());
        update.rows.insert(ckey, row);
    }
    if !plan.statics.is_empty() {
        let statics = cells(&plan.statics)?;
        if !statics.is_empty() {
            update.static_row = Some(Row {
                columns: statics,
                ..Row::default()
            });
        }
    }
    let condition = if i.if_not_exists {
        vec![(target, RowCondition::NotExists)]
    } else {
        Vec::new()
    };
    Ok(Planned {
        mutations: vec![Mutation {
            table: schema.id,
            key,
            update,
        }],
        conditions: condition,
        key_in: false,
        ck_in: false,
        updates_rows: plan.writes_row,
        list_edits: Vec::new(),
        deferred,
    })
}

/// The values of an `INSERT … JSON`: every column of the table with a marker bound to its
/// value from the document (Cassandra's `Json.parseJson`).
pub(super) struct JsonInsert<'a> {
    pub(super) columns: Vec<String>,
    pub(super) markers: Vec<Term>,
    pub(super) values: Vec<TermValue>,
    /// The statement's context, for the clock and randomness.
    pub(super) inner: &'a dyn TermContext,
}

impl<'a> JsonInsert<'a> {
    pub(super) fn new(
        schema: &TableSchema,
        json: &Term,
        default_unset: bool,
        ctx: &'a dyn TermContext,
    ) -> Result<Self> {
        let text = match term_to_bytes(json, &CqlType::Text, json::JSON_COLUMN, ctx)? {
            TermValue::Value(b) => String::from_utf8(b.to_vec())
                .map_err(|_| Error::Invalid("String didn't validate.".into()))?,
            _ => return Err(Error::Invalid("Got null for INSERT JSON values".into())),
        };
        let table: Vec<(String, CqlType)> = schema
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.ty.clone()))
            .collect();
        let (columns, values): (Vec<String>, Vec<TermValue>) =
            json::insert_json_values(&table, &text, default_unset)?
                .into_iter()
                .unzip();
        let markers = (0..columns.len())
            .map(|index| {
                Term::Bind(BindMarker {
                    index,
                    name: None,
                    line: 0,
                    column: 0,
                })
            })
            .collect();
        Ok(JsonInsert {
            columns,
            markers,
            values,
            inner: ctx,
        })
    }
}

impl TermContext for JsonInsert<'_> {
    fn bind(&self, marker: &BindMarker) -> Option<crate::values::BoundValue> {
        self.values.get(marker.index).cloned()
    }

    fn now_micros(&self) -> i64 {
        self.inner.now_micros()
    }

    fn random_u64(&self) -> u64 {
        self.inner.random_u64()
    }
}
