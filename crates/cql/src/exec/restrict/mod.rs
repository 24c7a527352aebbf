//! WHERE clauses resolved against a table: which partitions, which clustering slices, and
//! which conditions are left to check row by row.
//!
//! This is Cassandra's `StatementRestrictions`, with its rules and error texts:
//! - relations are added in the order written, each merged with what is already known about
//!   the same column(s) ([`Restriction::merge`]): `=` and `IN` conflict with anything else,
//!   slices combine their bounds, `CONTAINS` and map entries accumulate;
//! - the partition key is selected by `=` / `IN` on every part (the keys then come in the
//!   partition key's value order, without duplicates), or by `token(...)` bounds, or not at
//!   all (a range scan); anything else on it is a filter, which needs ALLOW FILTERING;
//! - clustering columns are selected left to right by `=` / `IN` (single or multi-column),
//!   then at most one slice (single or multi-column, over columns of any mix of ASC and
//!   DESC); a restriction past a gap or after the slice is a filter;
//! - restrictions on static and regular columns are filters;
//! - UPDATE and DELETE take the partition key by `=` / `IN` only and no filters, UPDATE takes
//!   the clustering columns by `=` / `IN` only.
//!
//! [`resolve`] binds every value once; the result says what to read ([`Restrictions::keys`],
//! the token bounds, [`Restrictions::slice`]) and what to check ([`Restrictions::filters`]).

mod clustering;
mod filter;
mod partition;
mod restriction;

pub use filter::{Filter, FilterKind};

use crate::ast::{InValues, Operator, Relation, RelationTarget, Term};
use crate::error::{Error, Result};
use crate::values::term::{term_display, unfrozen};
use crate::values::{term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::key::Slice;
use cairn_engine::model::types::framing::split_collection;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{ColumnId, DecoratedKey};
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use clustering::ClusteringRestrictions;
use partition::PartitionRestrictions;
use restriction::{Bounds, Restriction};

/// The text Cassandra requires ALLOW FILTERING with.
pub const REQUIRES_ALLOW_FILTERING: &str = "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING";

/// The kind of statement a WHERE clause belongs to (its rules differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementKind {
    /// SELECT: ranges, slices and (with ALLOW FILTERING) filters.
    Select,
    /// UPDATE: whole primary keys by `=` / `IN`.
    Update,
    /// DELETE: partition keys by `=` / `IN`, clustering slices allowed.
    Delete,
}

impl StatementKind {
    fn name(self) -> &'static str {
        match self {
            StatementKind::Select => "SELECT",
            StatementKind::Update => "UPDATE",
            StatementKind::Delete => "DELETE",
        }
    }
}

/// What the statement around a WHERE clause adds to its rules.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// The statement kind.
    pub kind: StatementKind,
    /// `ALLOW FILTERING` was given.
    pub allow_filtering: bool,
    /// The statement selects or modifies static columns only (its clustering columns must
    /// then be left alone).
    pub static_only: bool,
}

impl Context {
    /// A SELECT's context.
    pub fn select(allow_filtering: bool, static_only: bool) -> Self {
        Context {
            kind: StatementKind::Select,
            allow_filtering,
            static_only,
        }
    }

    /// An UPDATE's or DELETE's context.
    pub fn modification(kind: StatementKind, static_only: bool) -> Self {
        Context {
            kind,
            allow_filtering: false,
            static_only,
        }
    }
}

/// A WHERE clause resolved.
#[derive(Debug, Clone, Default)]
pub struct Restrictions {
    /// The partitions, when every partition-key column is restricted by `=` / `IN`: in the
    /// key's value order, without duplicates (and within the token bounds, if any).
    pub keys: Option<Vec<DecoratedKey>>,
    /// `token(pk) > / >= x` (value, inclusive).
    pub token_start: Option<(i64, bool)>,
    /// `token(pk) < / <= y`.
    pub token_end: Option<(i64, bool)>,
    /// Whether the partition key is restricted by an `IN` (Cassandra's `keyIsInRelation`):
    /// a literal list of other than one value, or `IN ?` whatever it is bound to.
    pub key_in: bool,
    /// Whether a clustering column is restricted by an `IN` (Cassandra's
    /// `clusteringKeyRestrictionsHasIN`; a literal IN of one value is an `=`).
    pub ck_in: bool,
    /// Full clustering prefixes given by `=` / `IN` on the leading clustering columns, in
    /// clustering order.
    pub prefixes: Vec<Vec<Bytes>>,
    /// Number of clustering columns fixed by `prefixes`.
    pub prefix_len: usize,
    /// The slice on the clustering columns after the prefix, if any.
    pub slice_bounds: Option<ClusteringSlice>,
    /// Conditions checked on each row.
    pub filters: Vec<Filter>,
    /// Some key column is restricted by an empty `IN`: nothing is selected.
    pub empty: bool,
    /// A clustering column is restricted by an empty `IN`: no row is named.
    pub no_clustering: bool,
    /// Columns restricted by `=` (or an `IN` of one value), for ORDER BY and GROUP BY.
    pub eq_columns: Vec<ColumnId>,
    /// Whether any clustering column is restricted.
    pub has_clustering_restrictions: bool,
    /// Whether any regular column is restricted.
    pub has_regular_restrictions: bool,
    /// The read is a range of partitions (no key list).
    pub is_key_range: bool,
    /// The table's partition key columns.
    partition_key_names: Vec<String>,
    layout: Option<cairn_engine::model::clustering::ClusteringLayout>,
}

/// A slice on consecutive clustering columns, starting right after the `=` / `IN` prefix:
/// each bound a tuple of values (one for a single-column slice) and whether it is inclusive.
#[derive(Debug, Clone)]
pub struct ClusteringSlice {
    /// Index of the first clustering column of the slice.
    pub first: usize,
    /// Lower bound.
    pub start: Option<(Vec<Bytes>, bool)>,
    /// Upper bound.
    pub end: Option<(Vec<Bytes>, bool)>,
}

impl Restrictions {
    /// The clustering rows the restrictions select, as the engine's slice.
    pub fn slice(&self, schema: &TableSchema) -> Result<Slice> {
        let layout = match &self.layout {
            Some(l) => l.clone(),
            None => schema.clustering_layout(),
        };
        clustering::slice(&layout, &self.prefixes, self.slice_bounds.as_ref())
    }

    /// Whether exactly one full clustering key is selected per prefix (row operations).
    pub fn full_clustering(&self, schema: &TableSchema) -> bool {
        self.slice_bounds.is_none()
            && self.prefix_len == schema.columns_of(ColumnKind::Clustering).count()
    }

    /// Whether any clustering column is restricted by the read (prefix or slice).
    pub fn clustering_restricted(&self) -> bool {
        self.prefix_len > 0 || self.slice_bounds.is_some()
    }

    /// Whether the clustering restrictions name no row at all (an empty `IN`): Cassandra's
    /// `restrictions.hasClusteringColumnsRestrictions() && clusterings.isEmpty()`.
    pub fn selects_no_row(&self) -> bool {
        self.no_clustering
    }

    /// Whether the statement writes clustering rows (Cassandra's `updatesRegularRows`): the
    /// table has no clustering column, or the WHERE clause restricts one.
    pub fn updates_rows(&self, schema: &TableSchema) -> bool {
        self.has_clustering_restrictions
            || schema.columns_of(ColumnKind::Clustering).next().is_none()
    }

    /// Whether a partition without rows but with static content is shown (Cassandra's
    /// `returnStaticContentOnPartitionWithNoRows`): only when no clustering or regular column
    /// is restricted.
    pub fn returns_static_only_partitions(&self) -> bool {
        !self.has_clustering_restrictions && !self.has_regular_restrictions
    }

    /// Whether `name` is a partition key column of the table resolved (for the index rules:
    /// a partition key that names the partitions is no filtering).
    pub fn is_partition_key_column(&self, name: &str) -> bool {
        self.partition_key_names.iter().any(|n| n == name)
    }

    /// Whether column `id` is restricted by `=`.
    pub fn is_eq(&self, id: ColumnId) -> bool {
        self.eq_columns.contains(&id)
    }

    /// Cassandra's `validateKey` of every selected partition key: not empty (an empty
    /// component of a composite key is fine: the composite is not empty), not over 64 KiB.
    /// Separate from [`resolve`] because Cassandra checks the keys after the statement's own
    /// rules, and a read that selects no rows never checks them.
    pub fn check_keys(&self) -> Result<()> {
        for key in self.keys.iter().flatten() {
            check_key(&key.key)?;
        }
        Ok(())
    }
}

/// Largest serialized partition key (an unsigned short length on disk and on the wire).
pub const MAX_KEY_LEN: usize = 65_535;

/// Cassandra's `validateKey` of one serialized partition key.
pub fn check_key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        return Err(Error::Invalid("Key may not be empty".into()));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(Error::Invalid(format!(
            "Key length of {} is longer than maximum of {MAX_KEY_LEN}",
            key.len()
        )));
    }
    Ok(())
}

/// Whether `e` is one of [`check_key`]'s refusals.
pub fn is_key_error(e: &Error) -> bool {
    matches!(e, Error::Invalid(m) if m == "Key may not be empty"
        || (m.starts_with("Key length of ") && m.ends_with(&format!("maximum of {MAX_KEY_LEN}"))))
}

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::Invalid(e.to_string())
}

/// A term's value for a key or filter receiver: null and unset are errors (a null for a
/// regular or static column, a row filter's, in Cassandra 5.0's words for a filter).
fn value(term: &Term, col: &ColumnDef, ctx: &dyn TermContext) -> Result<Bytes> {
    match term_to_bytes(term, &col.ty, &col.name, ctx).map_err(invalid)? {
        TermValue::Null if matches!(col.kind, ColumnKind::Regular | ColumnKind::Static) => Err(
            Error::Invalid(format!("Unsupported null value for column {}", col.name)),
        ),
        v => present(v, &col.name),
    }
}

fn value_for(term: &Term, ty: &CqlType, name: &str, ctx: &dyn TermContext) -> Result<Bytes> {
    present(term_to_bytes(term, ty, name, ctx).map_err(invalid)?, name)
}

/// A value that must be there: null and unset are refused.
fn present(v: TermValue, name: &str) -> Result<Bytes> {
    match v {
        TermValue::Value(b) => Ok(b),
        TermValue::Null => Err(Error::Invalid(format!(
            "Invalid null value in condition for column {name}"
        ))),
        TermValue::Unset => Err(Error::Invalid(format!(
            "Invalid unset value for column {name}"
        ))),
    }
}

/// The values of an `IN`: a list of terms, or one marker bound to a list.
fn in_values(
    values: &InValues,
    ty: &CqlType,
    name: &str,
    ctx: &dyn TermContext,
) -> Result<Vec<Bytes>> {
    match values {
        InValues::Terms(ts) => ts.iter().map(|t| value_for(t, ty, name, ctx)).collect(),
        InValues::Marker(m) => {
            let list = CqlType::List(Box::new(ty.clone()));
            match term_to_bytes(&Term::Bind(m.clone()), &list, name, ctx).map_err(invalid)? {
                TermValue::Value(b) => Ok(split_collection(&b)
                    .unwrap_or_default()
                    .into_iter()
                    .map(Bytes::copy_from_slice)
                    .collect()),
                TermValue::Null => Err(Error::Invalid(format!(
                    "Invalid null value for column {name}"
                ))),
                TermValue::Unset => Err(Error::Invalid(format!(
                    "Invalid unset value for column {name}"
                ))),
            }
        }
    }
}

/// The elements of a serialized list or set (empty when malformed: bound values were
/// validated against their type before they get here).
pub fn decode_collection(b: &[u8]) -> Vec<Bytes> {
    split_collection(b)
        .unwrap_or_default()
        .into_iter()
        .map(Bytes::copy_from_slice)
        .collect()
}

/// The fields of a serialized tuple (a null field as an empty value).
pub fn tuple_parts(b: &[u8]) -> Vec<Bytes> {
    cairn_engine::model::types::framing::split_tuple(b)
        .unwrap_or_default()
        .into_iter()
        .map(|f| f.map(Bytes::copy_from_slice).unwrap_or_default())
        .collect()
}

fn column<'a>(schema: &'a TableSchema, name: &str) -> Result<&'a ColumnDef> {
    schema
        .column(name)
        .ok_or_else(|| Error::undefined_column(schema, name))
}

fn op_text(op: Operator) -> &'static str {
    match op {
        Operator::Eq => "=",
        Operator::Neq => "!=",
        Operator::Lt => "<",
        Operator::Lte => "<=",
        Operator::Gt => ">",
        Operator::Gte => ">=",
        Operator::Contains => "CONTAINS",
        Operator::ContainsKey => "CONTAINS KEY",
        Operator::Like => "LIKE",
    }
}

/// A relation as Cassandra prints it in messages (names as they are).
fn relation_text(rel: &Relation) -> String {
    relation_with_names(rel, &|n: &str| n.to_string())
}

/// A relation as CQL text, each column name written by `name` (as it is in messages; quoted
/// when it must be in `toCQLString`, e.g. a view's WHERE clause); terms as written.
pub(crate) fn relation_with_names(rel: &Relation, name: &dyn Fn(&str) -> String) -> String {
    let names = |ns: &[String]| ns.iter().map(|n| name(n)).collect::<Vec<_>>().join(", ");
    let target = |t: &RelationTarget| match t {
        RelationTarget::Column(n) => name(n),
        RelationTarget::Element(n, k) => format!("{}[{}]", name(n), term_display(k)),
        RelationTarget::Field(n, f) => format!("{}.{}", name(n), name(f)),
        RelationTarget::Tuple(ns) => format!("({})", names(ns)),
        RelationTarget::Token(ns) => format!("token({})", names(ns)),
    };
    match rel {
        Relation::Compare {
            target: t,
            op,
            value,
        } => {
            format!("{} {} {}", target(t), op_text(*op), term_display(value))
        }
        Relation::In { target: t, values } => match values {
            InValues::Terms(ts) => format!(
                "{} IN ({})",
                target(t),
                ts.iter().map(term_display).collect::<Vec<_>>().join(", ")
            ),
            InValues::Marker(_) => format!("{} IN ?", target(t)),
        },
        Relation::IsNotNull(n) => format!("{} IS NOT NULL", name(n)),
    }
}

/// A single-column relation as a restriction, with Cassandra's checks of the receiver.
fn single_restriction(
    col: &ColumnDef,
    rel: &Relation,
    ctx: &dyn TermContext,
    kind: StatementKind,
) -> Result<Restriction> {
    check_receiver(col, rel, kind)?;
    let name = col.name.as_str();
    let (op, map_key) = op_and_map_key(rel);
    let slice = matches!(
        op,
        Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte
    );
    if slice && matches!(rel, Relation::Compare { .. }) && col.ty.contains_duration() {
        // Checked before the receiver's other refusals, as Cassandra does.
        return Err(Error::Invalid(
            match unfrozen(&col.ty) {
                CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..) => {
                    "Slice restrictions are not supported on collections containing durations"
                }
                CqlType::Tuple(_) => {
                    "Slice restrictions are not supported on tuples containing durations"
                }
                CqlType::Udt(_) => {
                    "Slice restrictions are not supported on UDTs containing durations"
                }
                _ => "Slice restrictions are not supported on duration columns",
            }
            .to_string(),
        ));
    }
    if let CqlType::Udt(_) = col.ty {
        return Err(Error::Invalid(format!(
            "Non-frozen UDT column '{name}' ({}) cannot be restricted by any relation",
            col.ty.name()
        )));
    }
    let (key_ty, elem_ty) = match unfrozen(&col.ty) {
        CqlType::Map(k, v) => ((**k).clone(), (**v).clone()),
        CqlType::List(e) | CqlType::Set(e) => ((**e).clone(), (**e).clone()),
        t => (t.clone(), t.clone()),
    };
    Ok(match rel {
        Relation::In { values, .. } => {
            let mut vals = in_values(values, &col.ty, name, ctx)?;
            // A literal IN of one value is an `=` (Cassandra's `newINRestriction`); `IN ?`
            // stays an IN whatever the bound list holds.
            if vals.len() == 1 && matches!(values, InValues::Terms(_)) {
                Restriction::Eq(vec![vals.remove(0)])
            } else {
                Restriction::In(vals.into_iter().map(|v| vec![v]).collect())
            }
        }
        Relation::Compare { value: v, .. } => match (op, map_key) {
            (Operator::Eq, Some(k)) => {
                let key = value_for(k, &key_ty, &format!("key({name})"), ctx)?;
                let val = value_for(v, &elem_ty, &format!("value({name})"), ctx)?;
                Restriction::contains_entry(key, val)
            }
            (Operator::Eq, None) => Restriction::Eq(vec![value(v, col, ctx)?]),
            (Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte, _) => {
                Restriction::Slice(Bounds::one(op, vec![value(v, col, ctx)?]))
            }
            (Operator::Contains, _) => {
                let elem = value_for(v, &elem_ty, &format!("value({name})"), ctx)?;
                Restriction::contains_value(elem)
            }
            (Operator::ContainsKey, _) => {
                let key = value_for(v, &key_ty, &format!("key({name})"), ctx)?;
                Restriction::contains_key(key)
            }
            (Operator::Neq, _) => {
                return Err(Error::Invalid(format!(
                    "Unsupported \"!=\" relation: {}",
                    relation_text(rel)
                )))
            }
            (Operator::Like, _) => {
                value(v, col, ctx)?;
                return Err(Error::Invalid(format!(
                "LIKE restriction is only supported on properly indexed columns. {} is not valid.",
                relation_text(rel)
            )));
            }
        },
        Relation::IsNotNull(_) => {
            return Err(Error::Invalid(format!(
                "Unsupported restriction: {}",
                relation_text(rel)
            )))
        }
    })
}

/// Every single-column relation of a WHERE clause checked against its column, without its
/// values (for PREPARE, where Cassandra refuses these already).
pub fn check_receivers(
    schema: &TableSchema,
    where_clause: &[Relation],
    kind: StatementKind,
) -> Result<()> {
    for rel in where_clause {
        let name = match rel {
            Relation::Compare {
                target: RelationTarget::Column(n) | RelationTarget::Element(n, _),
                ..
            }
            | Relation::In {
                target: RelationTarget::Column(n) | RelationTarget::Element(n, _),
                ..
            } => n,
            _ => continue,
        };
        check_receiver(column(schema, name)?, rel, kind)?;
    }
    Ok(())
}

/// A single-column relation's operator (`=` for IN) and map key (`m[k] op v`).
fn op_and_map_key(rel: &Relation) -> (Operator, Option<&Term>) {
    match rel {
        Relation::Compare {
            target: RelationTarget::Element(_, k),
            op,
            ..
        } => (*op, Some(k)),
        Relation::Compare { op, .. } => (*op, None),
        _ => (Operator::Eq, None),
    }
}

/// Cassandra's checks of a single-column relation's receiver (`toReceivers`): the operator
/// against the column's type, before any value is bound.
fn check_receiver(col: &ColumnDef, rel: &Relation, kind: StatementKind) -> Result<()> {
    let name = col.name.as_str();
    let (op, map_key) = op_and_map_key(rel);
    if matches!(op, Operator::Contains | Operator::ContainsKey) && kind != StatementKind::Select {
        return Err(Error::Invalid(format!(
            "Cannot use {} with {}",
            op_text(op),
            kind.name()
        )));
    }
    if op == Operator::ContainsKey && !matches!(unfrozen(&col.ty), CqlType::Map(..)) {
        return Err(Error::Invalid(format!(
            "Cannot use CONTAINS KEY on non-map column {name}"
        )));
    }
    if op == Operator::Contains
        && !matches!(
            unfrozen(&col.ty),
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
        )
    {
        return Err(Error::Invalid(format!(
            "Cannot use CONTAINS on non-collection column {name}"
        )));
    }
    if map_key.is_some() {
        if matches!(unfrozen(&col.ty), CqlType::List(_)) {
            return Err(Error::Invalid(format!(
                "Indexes on list entries ({name}[index] = value) are not currently supported."
            )));
        }
        if !matches!(unfrozen(&col.ty), CqlType::Map(..)) {
            return Err(Error::Invalid(format!(
                "Column {name} cannot be used as a map"
            )));
        }
        if !col.ty.is_non_frozen_collection() {
            return Err(Error::Invalid(format!(
                "Map-entry equality predicates on frozen map column {name} are not supported"
            )));
        }
        if op != Operator::Eq || matches!(rel, Relation::In { .. }) {
            return Err(Error::Invalid(
                "Only EQ relations are supported on map entries".into(),
            ));
        }
    }
    if col.ty.is_non_frozen_collection()
        && map_key.is_none()
        && !matches!(op, Operator::Contains | Operator::ContainsKey)
    {
        let shown = match rel {
            Relation::In { .. } => "IN",
            _ => op_text(op),
        };
        return Err(Error::Invalid(format!(
            "Collection column '{name}' ({}) cannot be restricted by a '{shown}' relation",
            col.ty.name()
        )));
    }
    Ok(())
}

/// A multi-column relation `(c1, c2, …) op …` as a restriction on clustering columns.
fn multi_restriction(
    schema: &TableSchema,
    names: &[String],
    rel: &Relation,
    ctx: &dyn TermContext,
) -> Result<(Vec<usize>, Restriction)> {
    let ck: Vec<&ColumnDef> = schema.columns_of(ColumnKind::Clustering).collect();
    let mut positions: Vec<usize> = Vec::with_capacity(names.len());
    let mut cols: Vec<&ColumnDef> = Vec::with_capacity(names.len());
    for n in names {
        let c = column(schema, n)?;
        let Some(pos) = ck.iter().position(|k| k.id == c.id) else {
            return Err(Error::Invalid(format!(
                "Multi-column relations can only be applied to clustering columns but was applied to: {n}"
            )));
        };
        if positions.contains(&pos) {
            return Err(Error::Invalid(format!(
                "Column \"{n}\" appeared twice in a relation: {}",
                relation_text(rel)
            )));
        }
        if positions.last().is_some_and(|p| pos != p + 1) {
            return Err(Error::Invalid(format!(
                "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: {}",
                relation_text(rel)
            )));
        }
        positions.push(pos);
        cols.push(c);
    }
    let tuple_ty = CqlType::Tuple(cols.iter().map(|c| c.ty.clone()).collect());
    let tuple_name = format!("({})", names.join(","));
    let parts = |t: &Term| -> Result<Vec<Bytes>> {
        if let Term::Tuple(elems) = t {
            if elems.len() != cols.len() {
                return Err(Error::Invalid(format!(
                    "Expected {} elements in value tuple, but got {}: {}",
                    cols.len(),
                    elems.len(),
                    term_display(t)
                )));
            }
        }
        let b = match term_to_bytes(t, &tuple_ty, &tuple_name, ctx).map_err(invalid)? {
            TermValue::Value(b) => b,
            TermValue::Null => {
                return Err(Error::Invalid(format!(
                    "Invalid null value in condition for columns: [{}]",
                    names.join(", ")
                )))
            }
            TermValue::Unset => {
                return Err(Error::Invalid(format!(
                    "Invalid unset value for tuple field number 0 of {tuple_name}"
                )))
            }
        };
        let fields = cairn_engine::model::types::framing::split_tuple(&b).unwrap_or_default();
        let mut out = Vec::with_capacity(cols.len());
        for (i, c) in cols.iter().enumerate() {
            match fields.get(i).copied().flatten() {
                Some(f) => out.push(Bytes::copy_from_slice(f)),
                None => {
                    return Err(Error::Invalid(format!(
                        "Invalid null value in condition for column {}",
                        c.name
                    )))
                }
            }
        }
        Ok(out)
    };
    let r = match rel {
        Relation::Compare { op, value: v, .. } => match op {
            Operator::Eq => Restriction::Eq(parts(v)?),
            Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte => {
                Restriction::Slice(Bounds::one(*op, parts(v)?))
            }
            other => {
                return Err(Error::Invalid(format!(
                    "{} cannot be used for multi-column relations",
                    op_text(*other)
                )))
            }
        },
        Relation::In { values, .. } => {
            let tuples = match values {
                InValues::Terms(ts) => ts.iter().map(parts).collect::<Result<Vec<_>>>()?,
                InValues::Marker(m) => {
                    let list = CqlType::List(Box::new(tuple_ty.clone()));
                    match term_to_bytes(&Term::Bind(m.clone()), &list, &tuple_name, ctx)
                        .map_err(invalid)?
                    {
                        TermValue::Value(b) => decode_collection(&b)
                            .iter()
                            .map(|t| tuple_parts(t))
                            .collect(),
                        _ => {
                            return Err(Error::Invalid(
                                "Invalid null value for IN restriction".into(),
                            ))
                        }
                    }
                }
            };
            if tuples.len() == 1 && matches!(values, InValues::Terms(_)) {
                Restriction::Eq(tuples.into_iter().next().unwrap_or_default())
            } else {
                Restriction::In(tuples)
            }
        }
        Relation::IsNotNull(_) => {
            return Err(Error::Invalid(format!(
                "Unsupported restriction: {}",
                relation_text(rel)
            )))
        }
    };
    Ok((positions, r))
}

/// Resolves a WHERE clause for a statement of the given context.
pub fn resolve(
    schema: &TableSchema,
    where_clause: &[Relation],
    ctx: &dyn TermContext,
    cx: Context,
) -> Result<Restrictions> {
    let mut pk = PartitionRestrictions::new(schema);
    let mut ck = ClusteringRestrictions::new(schema, cx.allow_filtering);
    let mut others: Vec<(ColumnDef, Restriction)> = Vec::new();
    for rel in where_clause {
        add_relation(schema, rel, ctx, cx, &mut pk, &mut ck, &mut others)?;
    }

    let mut out = Restrictions {
        layout: Some(schema.clustering_layout()),
        partition_key_names: schema
            .columns_of(ColumnKind::PartitionKey)
            .map(|c| c.name.clone())
            .collect(),
        ..Restrictions::default()
    };
    pk.finish(schema, cx, &mut out)?;
    let has_ck = !ck.is_empty();
    check_static_only(cx, has_ck)?;
    ck.finish(schema, cx, &mut out)?;
    if !others.is_empty() {
        add_filters(others, cx, &mut out)?;
    }
    // A key range with clustering restrictions only filters (Cassandra's `needFiltering`).
    if cx.kind == StatementKind::Select
        && !cx.allow_filtering
        && out.is_key_range
        && (has_ck || !out.filters.is_empty())
    {
        return Err(Error::Invalid(REQUIRES_ALLOW_FILTERING.into()));
    }
    Ok(out)
}

/// One relation of the WHERE clause added to what is known of its column(s): the partition
/// key's, the clustering columns', or the other columns' (filters).
fn add_relation(
    schema: &TableSchema,
    rel: &Relation,
    ctx: &dyn TermContext,
    cx: Context,
    pk: &mut PartitionRestrictions,
    ck: &mut ClusteringRestrictions,
    others: &mut Vec<(ColumnDef, Restriction)>,
) -> Result<()> {
    match rel {
        Relation::Compare {
            target: RelationTarget::Token(cols),
            op,
            value: v,
        } => pk.add_token(cols, *op, v, ctx)?,
        Relation::In {
            target: RelationTarget::Token(_),
            ..
        } => {
            return Err(Error::Invalid(
                "IN cannot be used with the token function".into(),
            ))
        }
        Relation::Compare {
            target: RelationTarget::Tuple(names),
            ..
        }
        | Relation::In {
            target: RelationTarget::Tuple(names),
            ..
        } => {
            let (positions, r) = multi_restriction(schema, names, rel, ctx)?;
            ck.add(positions, true, r)?;
        }
        Relation::Compare {
            target: RelationTarget::Field(n, _),
            ..
        }
        | Relation::In {
            target: RelationTarget::Field(n, _),
            ..
        } => {
            let c = column(schema, n)?;
            return Err(Error::Invalid(format!(
                "Invalid field selection: {n} of type {} is not a user type",
                c.ty.name()
            )));
        }
        Relation::Compare {
            target: RelationTarget::Column(name) | RelationTarget::Element(name, _),
            ..
        }
        | Relation::In {
            target: RelationTarget::Column(name) | RelationTarget::Element(name, _),
            ..
        }
        | Relation::IsNotNull(name) => {
            let col = column(schema, name)?;
            let r = single_restriction(col, rel, ctx, cx.kind)?;
            match col.kind {
                ColumnKind::PartitionKey => pk.add(col, r)?,
                ColumnKind::Clustering => {
                    let pos = schema
                        .columns_of(ColumnKind::Clustering)
                        .position(|c| c.id == col.id)
                        .unwrap_or(0);
                    ck.add(vec![pos], false, r)?;
                }
                _ => match others.iter_mut().find(|(c, _)| c.id == col.id) {
                    Some((_, existing)) => {
                        let merged = existing.clone().merge(r, &col.name, &col.name)?;
                        *existing = merged;
                    }
                    None => others.push((col.clone(), r)),
                },
            }
        }
    }
    Ok(())
}

/// A statement on static columns only may not restrict clustering columns.
fn check_static_only(cx: Context, has_ck: bool) -> Result<()> {
    if cx.static_only && has_ck {
        return Err(Error::Invalid(match cx.kind {
            StatementKind::Select => {
                "Cannot restrict clustering columns when selecting only static columns".into()
            }
            k => format!(
                "Invalid restrictions on clustering columns since the {} statement modifies only static columns",
                k.name()
            ),
        }));
    }
    Ok(())
}

/// Restrictions on static and regular columns: filters, which only a SELECT with ALLOW
/// FILTERING may have.
fn add_filters(
    others: Vec<(ColumnDef, Restriction)>,
    cx: Context,
    out: &mut Restrictions,
) -> Result<()> {
    if cx.kind != StatementKind::Select {
        let names: Vec<&str> = others.iter().map(|(c, _)| c.name.as_str()).collect();
        return Err(Error::Invalid(format!(
            "Non PRIMARY KEY columns found in where clause: {} ",
            names.join(", ")
        )));
    }
    if !cx.allow_filtering {
        return Err(Error::Invalid(REQUIRES_ALLOW_FILTERING.into()));
    }
    for (c, r) in others {
        if c.kind == ColumnKind::Regular {
            out.has_regular_restrictions = true;
        }
        if matches!(r, Restriction::Eq(_)) {
            out.eq_columns.push(c.id);
        }
        r.into_filters(&c, &mut out.filters)?;
    }
    Ok(())
}

/// Whether a clustering column of the layout is DESC.
fn is_desc(layout: &cairn_engine::model::clustering::ClusteringLayout, i: usize) -> bool {
    layout
        .columns
        .get(i)
        .is_some_and(|(_, o)| *o == Order::Desc)
}
