//! One restriction on a column, or on a tuple of clustering columns, with its values bound;
//! and Cassandra's rules for combining two restrictions on the same column(s).

use super::filter::{Filter, FilterKind};
use crate::ast::Operator;
use crate::error::{Error, Result};
use bytes::Bytes;
use cairn_engine::schema::ColumnDef;

/// The bounds of a slice: each a tuple of values (one for a single column) and whether it
/// is inclusive.
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    /// Lower bound.
    pub start: Option<(Vec<Bytes>, bool)>,
    /// Upper bound.
    pub end: Option<(Vec<Bytes>, bool)>,
}

impl Bounds {
    /// The one bound `op values` gives (`>` / `>=` a start, `<` / `<=` an end).
    pub fn one(op: Operator, values: Vec<Bytes>) -> Bounds {
        match op {
            Operator::Gt | Operator::Gte => Bounds {
                start: Some((values, op == Operator::Gte)),
                end: None,
            },
            _ => Bounds {
                start: None,
                end: Some((values, op == Operator::Lte)),
            },
        }
    }
}

/// A restriction with its values bound. Values are tuples: one value per column the
/// restriction covers (one for a single column).
#[derive(Debug, Clone)]
pub enum Restriction {
    /// `= v` (or a literal `IN` of one value).
    Eq(Vec<Bytes>),
    /// `IN (v1, v2, …)`.
    In(Vec<Vec<Bytes>>),
    /// `>`, `>=`, `<`, `<=`.
    Slice(Bounds),
    /// `CONTAINS v`, `CONTAINS KEY k`, `m[k] = v`, accumulated.
    Contains {
        values: Vec<Bytes>,
        keys: Vec<Bytes>,
        entries: Vec<(Bytes, Bytes)>,
    },
}

impl Restriction {
    /// `CONTAINS v`.
    pub fn contains_value(v: Bytes) -> Self {
        Restriction::Contains {
            values: vec![v],
            keys: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// `CONTAINS KEY k`.
    pub fn contains_key(k: Bytes) -> Self {
        Restriction::Contains {
            values: Vec::new(),
            keys: vec![k],
            entries: Vec::new(),
        }
    }

    /// `m[k] = v`.
    pub fn contains_entry(k: Bytes, v: Bytes) -> Self {
        Restriction::Contains {
            values: Vec::new(),
            keys: Vec::new(),
            entries: vec![(k, v)],
        }
    }

    /// Whether this is a slice.
    pub fn is_slice(&self) -> bool {
        matches!(self, Restriction::Slice(_))
    }

    /// Combines this restriction with a later one on (some of) the same columns, as
    /// Cassandra's `mergeWith`: `names` are the columns they share, for messages.
    pub fn merge(self, other: Restriction, names: &str, first_name: &str) -> Result<Restriction> {
        match self {
            Restriction::Eq(_) => Err(Error::Invalid(format!(
                "{names} cannot be restricted by more than one relation if it includes an Equal"
            ))),
            Restriction::In(_) => Err(Error::Invalid(format!(
                "{names} cannot be restricted by more than one relation if it includes a IN"
            ))),
            Restriction::Slice(mine) => {
                let Restriction::Slice(theirs) = other else {
                    return Err(Error::Invalid(format!(
                        "Column \"{names}\" cannot be restricted by both an equality and an inequality relation"
                    )));
                };
                if mine.start.is_some() && theirs.start.is_some() {
                    return Err(Error::Invalid(format!(
                        "More than one restriction was found for the start bound on {names}"
                    )));
                }
                if mine.end.is_some() && theirs.end.is_some() {
                    return Err(Error::Invalid(format!(
                        "More than one restriction was found for the end bound on {names}"
                    )));
                }
                Ok(Restriction::Slice(Bounds {
                    start: mine.start.or(theirs.start),
                    end: mine.end.or(theirs.end),
                }))
            }
            Restriction::Contains {
                mut values,
                mut keys,
                mut entries,
            } => {
                let Restriction::Contains {
                    values: v2,
                    keys: k2,
                    entries: e2,
                } = other
                else {
                    return Err(Error::Invalid(format!(
                        "Collection column {first_name} can only be restricted by CONTAINS, CONTAINS KEY, or map-entry equality"
                    )));
                };
                values.extend(v2);
                keys.extend(k2);
                entries.extend(e2);
                Ok(Restriction::Contains {
                    values,
                    keys,
                    entries,
                })
            }
        }
    }

    /// The row filters checking this restriction on a single column.
    pub fn into_filters(self, col: &ColumnDef, out: &mut Vec<Filter>) -> Result<()> {
        let mut push = |kind| {
            out.push(Filter {
                column: col.clone(),
                kind,
            })
        };
        match self {
            Restriction::Eq(v) => {
                if let Some(v) = v.into_iter().next() {
                    push(FilterKind::Compare(Operator::Eq, v));
                }
            }
            Restriction::In(vs) => push(FilterKind::In(
                vs.into_iter()
                    .filter_map(|t| t.into_iter().next())
                    .collect(),
            )),
            Restriction::Slice(b) => {
                if let Some((v, inc)) = b.start {
                    if let Some(v) = v.into_iter().next() {
                        let op = if inc { Operator::Gte } else { Operator::Gt };
                        push(FilterKind::Compare(op, v));
                    }
                }
                if let Some((v, inc)) = b.end {
                    if let Some(v) = v.into_iter().next() {
                        let op = if inc { Operator::Lte } else { Operator::Lt };
                        push(FilterKind::Compare(op, v));
                    }
                }
            }
            Restriction::Contains {
                values,
                keys,
                entries,
            } => {
                for v in values {
                    push(FilterKind::Contains(v));
                }
                for k in keys {
                    push(FilterKind::ContainsKey(k));
                }
                for (k, v) in entries {
                    push(FilterKind::MapEntry(k, v));
                }
            }
        }
        Ok(())
    }
}
