//! WHERE clauses resolved against a table: which partitions, which clustering slice, and
//! which conditions are left to filter row by row.
//!
//! The rules and error texts are Cassandra's: partition-key columns are restricted by `=`
//! or `IN` (all of them, or none — then the read is a range scan, optionally bounded by
//! `token(...)`); clustering columns are restricted left to right, by `=`/`IN` and then at
//! most one slice; anything else is a filter, allowed only with ALLOW FILTERING.

use crate::ast::{InValues, Operator, Relation, RelationTarget, Term};
use crate::error::{Error, Result};
use crate::values::codec::{split_collection, split_map, split_tuple};
use crate::values::{term_to_bytes, TermContext, TermValue};
use bytes::Bytes;
use cairn_engine::model::clustering::Order;
use cairn_engine::model::key::{ClusteringRange, Slice};
use cairn_engine::model::token::composite_partition_key;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::DecoratedKey;
use cairn_engine::schema::{ColumnDef, ColumnKind, TableSchema};
use smallvec::{smallvec, SmallVec};
use std::cmp::Ordering;

/// A condition checked on each row.
#[derive(Debug, Clone)]
pub struct Filter {
    /// The column.
    pub column: ColumnDef,
    /// The operator.
    pub op: Operator,
    /// The value compared against (serialized in the column's type, or its element/key
    /// type for CONTAINS / CONTAINS KEY).
    pub value: Bytes,
    /// IN lists.
    pub any_of: Vec<Bytes>,
}

impl Filter {
    /// Whether a value of the column satisfies the condition.
    pub fn matches(&self, value: Option<&[u8]>) -> bool {
        let Some(v) = value else {
            return false;
        };
        let ty = &self.column.ty;
        if !self.any_of.is_empty() {
            return self
                .any_of
                .iter()
                .any(|x| crate::values::compare(ty, v, x) == Ordering::Equal);
        }
        let ord = || crate::values::compare(ty, v, &self.value);
        match self.op {
            Operator::Eq => ord() == Ordering::Equal,
            Operator::Neq => ord() != Ordering::Equal,
            Operator::Lt => ord() == Ordering::Less,
            Operator::Lte => ord() != Ordering::Greater,
            Operator::Gt => ord() == Ordering::Greater,
            Operator::Gte => ord() != Ordering::Less,
            Operator::Contains | Operator::ContainsKey => {
                contains(ty, v, &self.value, self.op == Operator::ContainsKey)
            }
            Operator::Like => false,
        }
    }
}

fn contains(ty: &CqlType, collection: &[u8], needle: &[u8], key: bool) -> bool {
    let inner = match ty {
        CqlType::Frozen(t) => t.as_ref(),
        t => t,
    };
    let eq = |t: &CqlType, x: &[u8]| crate::values::compare(t, x, needle) == Ordering::Equal;
    match inner {
        CqlType::List(e) | CqlType::Set(e) => {
            split_collection(collection).is_some_and(|elems| elems.iter().any(|x| eq(e, x)))
        }
        CqlType::Map(k, v) => split_map(collection).is_some_and(|entries| {
            entries
                .iter()
                .any(|(mk, mv)| if key { eq(k, mk) } else { eq(v, mv) })
        }),
        _ => false,
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

/// One side of a clustering slice: the bound's values (a prefix of the next clustering
/// columns) and whether it is inclusive.
pub type SliceBound = Option<(Vec<Bytes>, bool)>;

/// A WHERE clause resolved.
#[derive(Debug, Clone, Default)]
pub struct Restrictions {
    /// The partitions, when every partition-key column is restricted by `=` / `IN`.
    pub keys: Option<Vec<DecoratedKey>>,
    /// `token(pk) > / >= x` (value, inclusive).
    pub token_start: Option<(i64, bool)>,
    /// `token(pk) < / <= y`.
    pub token_end: Option<(i64, bool)>,
    /// Full clustering prefixes given by `=` / `IN` on the leading clustering columns.
    pub prefixes: Vec<Vec<Bytes>>,
    /// Number of clustering columns fixed by `prefixes`.
    pub prefix_len: usize,
    /// A slice on the next clustering column(s): (start, end), each (values, inclusive).
    pub bound: Option<(SliceBound, SliceBound)>,
    /// Conditions on other columns (or on key columns used in unsupported ways).
    pub filters: Vec<Filter>,
    /// An empty `IN` restricts some key column: nothing is selected.
    pub empty: bool,
}

impl Restrictions {
    /// The clustering slice the restrictions select.
    pub fn slice(&self, schema: &TableSchema) -> Result<Slice> {
        let layout = schema.clustering_layout();
        let none = [Vec::new()];
        let prefixes: &[Vec<Bytes>] = if self.prefixes.is_empty() {
            &none
        } else {
            &self.prefixes
        };
        let mut ranges = Vec::with_capacity(prefixes.len());
        for p in prefixes {
            let refs: SmallVec<[&[u8]; 4]> = p.iter().map(|b| b.as_ref()).collect();
            let base = layout
                .encode_prefix(&refs)
                .map_err(|e| Error::Invalid(e.to_string()))?;
            let Some((start, end)) = &self.bound else {
                ranges.push(if p.is_empty() {
                    ClusteringRange::all()
                } else {
                    ClusteringRange::prefix(&base)
                });
                continue;
            };
            let enc = |vals: &Vec<Bytes>| -> Result<Vec<u8>> {
                let mut all: SmallVec<[&[u8]; 4]> = refs.iter().copied().collect();
                all.extend(vals.iter().map(|b| b.as_ref()));
                layout
                    .encode_prefix(&all)
                    .map_err(|e| Error::Invalid(e.to_string()))
            };
            // A DESC column reverses byte order: its lower CQL bound is an upper byte bound.
            let desc = layout
                .columns
                .get(self.prefix_len)
                .is_some_and(|(_, o)| *o == Order::Desc);
            let (lo, hi) = if desc { (end, start) } else { (start, end) };
            let lo = match lo {
                Some((v, inc)) => Some((enc(v)?, *inc)),
                None => None,
            };
            let hi = match hi {
                Some((v, inc)) => Some((enc(v)?, *inc)),
                None => None,
            };
            let lo_ref = lo
                .as_ref()
                .map(|(b, i)| (b.as_slice(), *i))
                .or(if p.is_empty() {
                    None
                } else {
                    Some((&base[..], true))
                });
            let hi_ref = hi
                .as_ref()
                .map(|(b, i)| (b.as_slice(), *i))
                .or(if p.is_empty() {
                    None
                } else {
                    Some((&base[..], true))
                });
            ranges.push(ClusteringRange::from_bounds(lo_ref, hi_ref));
        }
        Ok(Slice::new(ranges))
    }

    /// Whether exactly one full clustering key is selected per prefix (row operations).
    pub fn full_clustering(&self, schema: &TableSchema) -> bool {
        self.bound.is_none() && self.prefix_len == schema.columns_of(ColumnKind::Clustering).count()
    }
}

fn value(term: &Term, col: &ColumnDef, ctx: &dyn TermContext) -> Result<Bytes> {
    match term_to_bytes(term, &col.ty, &col.name, ctx).map_err(|e| Error::Invalid(e.to_string()))? {
        TermValue::Value(b) => Ok(b),
        TermValue::Null => Err(Error::Invalid(format!(
            "Invalid null value in condition for column {}",
            col.name
        ))),
        TermValue::Unset => Err(Error::Invalid(format!(
            "Invalid unset value for column {}",
            col.name
        ))),
    }
}

fn in_values(values: &InValues, col: &ColumnDef, ctx: &dyn TermContext) -> Result<Vec<Bytes>> {
    match values {
        InValues::Terms(ts) => ts.iter().map(|t| value(t, col, ctx)).collect(),
        InValues::Marker(m) => {
            let list = CqlType::List(Box::new(col.ty.clone()));
            match term_to_bytes(&Term::Bind(m.clone()), &list, &col.name, ctx)
                .map_err(|e| Error::Invalid(e.to_string()))?
            {
                TermValue::Value(b) => Ok(decode_collection(&b)),
                _ => Err(Error::Invalid(format!(
                    "Invalid null value for IN restriction on {}",
                    col.name
                ))),
            }
        }
    }
}

fn column<'a>(schema: &'a TableSchema, name: &str) -> Result<&'a ColumnDef> {
    schema
        .column(name)
        .ok_or_else(|| Error::Invalid(format!("Undefined column name {name}")))
}

/// Resolves a WHERE clause.
pub fn resolve(
    schema: &TableSchema,
    where_clause: &[Relation],
    ctx: &dyn TermContext,
) -> Result<Restrictions> {
    // Inline capacities cover every ordinary key, so a point read allocates none of these.
    let pk: SmallVec<[&ColumnDef; 4]> = schema.columns_of(ColumnKind::PartitionKey).collect();
    let ck: SmallVec<[&ColumnDef; 4]> = schema.columns_of(ColumnKind::Clustering).collect();
    let mut pk_vals: SmallVec<[Option<Vec<Bytes>>; 4]> = smallvec![None; pk.len()];
    let mut ck_eq: SmallVec<[Option<Vec<Bytes>>; 4]> = smallvec![None; ck.len()];
    let mut ck_multi_in: Option<(usize, Vec<Vec<Bytes>>)> = None;
    let mut bound: Bound = None;
    let mut r = Restrictions::default();

    for rel in where_clause {
        match rel {
            Relation::IsNotNull(_) => {}
            Relation::Compare {
                target: RelationTarget::Token(cols),
                op,
                value: v,
            } => {
                let names: Vec<&str> = pk.iter().map(|c| c.name.as_str()).collect();
                if cols.iter().map(String::as_str).collect::<Vec<_>>() != names {
                    return Err(Error::Invalid(format!(
                        "The token function arguments must be in the partition key order: {}",
                        names.join(", ")
                    )));
                }
                let tcol = ColumnDef {
                    id: u32::MAX,
                    name: "partition key token".into(),
                    ty: CqlType::Bigint,
                    kind: ColumnKind::Regular,
                    order: Order::Asc,
                };
                let b = value(v, &tcol, ctx)?;
                let t = i64::from_be_bytes(
                    b.as_ref()
                        .try_into()
                        .map_err(|_| Error::Invalid("Invalid token value".into()))?,
                );
                match op {
                    Operator::Gt => r.token_start = Some((t, false)),
                    Operator::Gte => r.token_start = Some((t, true)),
                    Operator::Lt => r.token_end = Some((t, false)),
                    Operator::Lte => r.token_end = Some((t, true)),
                    Operator::Eq => {
                        r.token_start = Some((t, true));
                        r.token_end = Some((t, true));
                    }
                    _ => return Err(Error::Invalid("Unsupported token restriction".into())),
                }
            }
            Relation::Compare {
                target: RelationTarget::Column(name),
                op,
                value: v,
            } => {
                let col = column(schema, name)?;
                match (col.kind, op) {
                    (ColumnKind::PartitionKey, Operator::Eq) => {
                        let i = pk.iter().position(|c| c.name == *name).unwrap_or(0);
                        pk_vals[i] = Some(vec![value(v, col, ctx)?]);
                    }
                    (ColumnKind::Clustering, Operator::Eq) => {
                        let i = ck.iter().position(|c| c.name == *name).unwrap_or(0);
                        ck_eq[i] = Some(vec![value(v, col, ctx)?]);
                    }
                    (
                        ColumnKind::Clustering,
                        Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte,
                    ) => {
                        let i = ck.iter().position(|c| c.name == *name).unwrap_or(0);
                        let b = value(v, col, ctx)?;
                        add_bound(&mut bound, i, *op, vec![b], name)?;
                    }
                    _ => r.filters.push(filter(col, *op, v, ctx)?),
                }
            }
            Relation::Compare {
                target: RelationTarget::Tuple(names),
                op,
                value: v,
            } => {
                let (first, tcol) = tuple_receiver(schema, &ck, names)?;
                let parts = tuple_parts(&value(v, &tcol, ctx)?);
                match op {
                    Operator::Eq => {
                        for (k, p) in parts.into_iter().enumerate() {
                            if let Some(slot) = ck_eq.get_mut(first + k) {
                                *slot = Some(vec![p]);
                            }
                        }
                    }
                    Operator::Lt | Operator::Lte | Operator::Gt | Operator::Gte => {
                        add_bound(&mut bound, first, *op, parts, &tcol.name)?;
                    }
                    _ => return Err(Error::Invalid("Unsupported multi-column relation".into())),
                }
            }
            Relation::In {
                target: RelationTarget::Column(name),
                values,
            } => {
                let col = column(schema, name)?;
                let vals = in_values(values, col, ctx)?;
                match col.kind {
                    ColumnKind::PartitionKey => {
                        let i = pk.iter().position(|c| c.name == *name).unwrap_or(0);
                        pk_vals[i] = Some(vals);
                    }
                    ColumnKind::Clustering => {
                        let i = ck.iter().position(|c| c.name == *name).unwrap_or(0);
                        ck_eq[i] = Some(vals);
                    }
                    _ => r.filters.push(Filter {
                        column: col.clone(),
                        op: Operator::Eq,
                        value: Bytes::new(),
                        any_of: vals,
                    }),
                }
            }
            Relation::In {
                target: RelationTarget::Tuple(names),
                values,
            } => {
                let (first, tcol) = tuple_receiver(schema, &ck, names)?;
                let tuples = in_values(values, &tcol, ctx)?;
                ck_multi_in = Some((first, tuples.iter().map(|t| tuple_parts(t)).collect()));
            }
            _ => {
                return Err(Error::Invalid(
                    "Unsupported restriction in WHERE clause".into(),
                ))
            }
        }
    }

    r.empty = pk_vals
        .iter()
        .chain(ck_eq.iter())
        .flatten()
        .any(Vec::is_empty)
        || ck_multi_in.as_ref().is_some_and(|(_, t)| t.is_empty());
    // Partition key: all or nothing.
    let restricted = pk_vals.iter().filter(|v| v.is_some()).count();
    if restricted == pk.len() && !pk.is_empty() {
        r.keys = Some(partition_keys(pk_vals.iter().flatten()));
    } else if restricted > 0 {
        let missing: Vec<&str> = pk
            .iter()
            .zip(&pk_vals)
            .filter(|(_, v)| v.is_none())
            .map(|(c, _)| c.name.as_str())
            .collect();
        return Err(Error::Invalid(format!(
            "Partition key parts: {} must be restricted as other parts are",
            missing.join(", ")
        )));
    }

    // Clustering: a prefix of `=`/`IN`, then at most one slice.
    if let Some((first, tuples)) = ck_multi_in {
        if first != 0 || ck_eq.iter().any(Option::is_some) {
            return Err(Error::Invalid(
                "Mixing multi-column IN with other clustering restrictions is not supported".into(),
            ));
        }
        r.prefix_len = tuples.first().map_or(0, Vec::len);
        r.prefixes = tuples;
    } else {
        let mut n = 0;
        while n < ck.len() && ck_eq[n].is_some() {
            n += 1;
        }
        if let Some(later) = (n..ck.len()).find(|&i| ck_eq[i].is_some()) {
            let (c, prev) = (&ck[later].name, &ck[n].name);
            return Err(Error::Invalid(format!(
                "PRIMARY KEY column \"{c}\" cannot be restricted as preceding column \"{prev}\" is not restricted"
            )));
        }
        r.prefix_len = n;
        r.prefixes = if n == 0 {
            Vec::new()
        } else {
            cartesian(ck_eq.iter().take(n).flatten())
        };
    }
    if let Some((col, start, end)) = bound {
        if col != r.prefix_len {
            let c = ck.get(col).map_or("?", |c| c.name.as_str());
            let prev = ck.get(r.prefix_len).map_or("?", |c| c.name.as_str());
            return Err(Error::Invalid(format!(
                "PRIMARY KEY column \"{c}\" cannot be restricted as preceding column \"{prev}\" is not restricted"
            )));
        }
        r.bound = Some((start, end));
    }
    Ok(r)
}

/// Every combination of one value per column (`IN` lists multiply), in column order.
fn cartesian<'a>(columns: impl Iterator<Item = &'a Vec<Bytes>>) -> Vec<Vec<Bytes>> {
    let mut out: Vec<Vec<Bytes>> = vec![Vec::new()];
    for vals in columns {
        let mut next = Vec::with_capacity(out.len() * vals.len());
        for p in &out {
            for v in vals {
                let mut p2 = Vec::with_capacity(p.len() + 1);
                p2.extend_from_slice(p);
                p2.push(v.clone());
                next.push(p2);
            }
        }
        out = next;
    }
    out
}

/// The partition keys a full restriction of the partition key selects, sorted and without
/// duplicates. A single `=` per column (a point read) builds its one key directly.
fn partition_keys<'a>(columns: impl Iterator<Item = &'a Vec<Bytes>> + Clone) -> Vec<DecoratedKey> {
    let mut first = columns.clone();
    if let (Some([v]), None) = (first.next().map(Vec::as_slice), first.next()) {
        return vec![DecoratedKey::new(v.clone())];
    }
    let mut out: Vec<DecoratedKey> = cartesian(columns)
        .into_iter()
        .map(|parts| match parts.as_slice() {
            [one] => DecoratedKey::new(one.clone()),
            _ => {
                let refs: SmallVec<[&[u8]; 4]> = parts.iter().map(|b| b.as_ref()).collect();
                DecoratedKey::new(composite_partition_key(&refs))
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

type Bound = Option<(
    usize,
    Option<(Vec<Bytes>, bool)>,
    Option<(Vec<Bytes>, bool)>,
)>;

fn add_bound(
    bound: &mut Bound,
    col: usize,
    op: Operator,
    vals: Vec<Bytes>,
    name: &str,
) -> Result<()> {
    let b = bound.get_or_insert((col, None, None));
    if b.0 != col {
        return Err(Error::Invalid(format!(
            "Column \"{name}\" cannot be restricted by both an equality and an inequality relation"
        )));
    }
    match op {
        Operator::Gt | Operator::Gte => {
            if b.1.is_some() {
                return Err(Error::Invalid(format!(
                    "More than one restriction was found for the start bound on {name}"
                )));
            }
            b.1 = Some((vals, op == Operator::Gte));
        }
        _ => {
            if b.2.is_some() {
                return Err(Error::Invalid(format!(
                    "More than one restriction was found for the end bound on {name}"
                )));
            }
            b.2 = Some((vals, op == Operator::Lte));
        }
    }
    Ok(())
}

/// The clustering columns of a multi-column relation, checked, as one tuple-typed receiver;
/// returns the index of its first clustering column too.
fn tuple_receiver(
    schema: &TableSchema,
    ck: &[&ColumnDef],
    names: &[String],
) -> Result<(usize, ColumnDef)> {
    let cols: Vec<&ColumnDef> = names
        .iter()
        .map(|n| column(schema, n))
        .collect::<Result<_>>()?;
    let first = check_tuple(ck, &cols)?;
    Ok((
        first,
        ColumnDef {
            id: u32::MAX,
            name: format!("({})", names.join(",")),
            ty: CqlType::Tuple(cols.iter().map(|c| c.ty.clone()).collect()),
            kind: ColumnKind::Clustering,
            order: Order::Asc,
        },
    ))
}

fn check_tuple(ck: &[&ColumnDef], cols: &[&ColumnDef]) -> Result<usize> {
    let first = cols
        .first()
        .and_then(|c| ck.iter().position(|k| k.name == c.name))
        .ok_or_else(|| {
            Error::Invalid(
                "Multi-column relations can only be applied to clustering columns".into(),
            )
        })?;
    for (i, c) in cols.iter().enumerate() {
        if ck.get(first + i).is_none_or(|k| k.name != c.name) {
            return Err(Error::Invalid(format!(
                "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: ({})",
                cols.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let orders: Vec<Order> = cols
        .iter()
        .filter_map(|c| ck.iter().find(|k| k.name == c.name).map(|k| k.order))
        .collect();
    if orders.windows(2).any(|w| w[0] != w[1]) {
        return Err(Error::Invalid(
            "Multi-column slices over columns of mixed clustering order are not supported".into(),
        ));
    }
    Ok(first)
}

/// The fields of a serialized tuple (a null field as an empty value).
pub fn tuple_parts(b: &[u8]) -> Vec<Bytes> {
    split_tuple(b)
        .unwrap_or_default()
        .into_iter()
        .map(|f| f.map(Bytes::copy_from_slice).unwrap_or_default())
        .collect()
}

fn filter(col: &ColumnDef, op: Operator, v: &Term, ctx: &dyn TermContext) -> Result<Filter> {
    let value = match op {
        Operator::Contains | Operator::ContainsKey => {
            let inner = match &col.ty {
                CqlType::Frozen(t) => t.as_ref().clone(),
                t => t.clone(),
            };
            let elem = match (&inner, op) {
                (CqlType::List(e) | CqlType::Set(e), Operator::Contains) => e.as_ref().clone(),
                (CqlType::Map(_, v), Operator::Contains) => v.as_ref().clone(),
                (CqlType::Map(k, _), Operator::ContainsKey) => k.as_ref().clone(),
                _ => {
                    return Err(Error::Invalid(format!(
                        "Cannot use CONTAINS on non-collection column {}",
                        col.name
                    )))
                }
            };
            let ecol = ColumnDef {
                ty: elem,
                ..col.clone()
            };
            value(v, &ecol, ctx)?
        }
        _ => value(v, col, ctx)?,
    };
    Ok(Filter {
        column: col.clone(),
        op,
        value,
        any_of: Vec::new(),
    })
}
