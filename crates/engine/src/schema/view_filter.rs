//! A materialized view's restrictions on its base table's primary key: the WHERE clause's
//! relations other than `IS NOT NULL` (`CREATE MATERIALIZED VIEW … WHERE k = 1 AND c IN
//! ('a', 'b') AND (c, d) > ('a', 1) …`), which Cassandra allows on the base's partition key and
//! clustering columns only. A base row is in the view only when its key satisfies every
//! restriction (Cassandra's `View.matchesViewFilter`); since a base row's key never changes,
//! view maintenance leaves out the rows that do not, before and after a write alike.
//!
//! Kept in the view's [`TableOptions::extra`] (beside the [`super::view::ViewDef`]), hex
//! encoded, so it travels with the view's schema; the CQL layer parses and checks the
//! relations (Cassandra's texts) and hands the values here serialized.
//!
//! Invariant: every restricted column is a base primary-key column, and each value is a
//! tuple of one serialized value per restricted column.

use super::{ColumnKind, TableOptions, TableSchema};
use crate::model::types::compare::compare;
use bytes::Bytes;
use std::cmp::Ordering;

const FILTER: &str = "view.key_filter";

/// A relation's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterOp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    /// Any of the values.
    In,
}

impl FilterOp {
    fn code(self) -> &'static str {
        match self {
            FilterOp::Eq => "eq",
            FilterOp::Lt => "lt",
            FilterOp::Le => "le",
            FilterOp::Gt => "gt",
            FilterOp::Ge => "ge",
            FilterOp::In => "in",
        }
    }

    fn of_code(code: &str) -> Option<FilterOp> {
        Some(match code {
            "eq" => FilterOp::Eq,
            "lt" => FilterOp::Lt,
            "le" => FilterOp::Le,
            "gt" => FilterOp::Gt,
            "ge" => FilterOp::Ge,
            "in" => FilterOp::In,
            _ => return None,
        })
    }

    /// Whether `ord` (the row's value against the relation's) satisfies the operator.
    fn holds(self, ord: Ordering) -> bool {
        match self {
            FilterOp::Eq | FilterOp::In => ord == Ordering::Equal,
            FilterOp::Lt => ord == Ordering::Less,
            FilterOp::Le => ord != Ordering::Greater,
            FilterOp::Gt => ord == Ordering::Greater,
            FilterOp::Ge => ord != Ordering::Less,
        }
    }
}

/// One relation: `col op v`, `col IN (v, …)`, or a multi-column `(c1, c2) op (v1, v2)` /
/// `IN ((…), …)`, compared as tuples in each column's natural order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRestriction {
    pub columns: Vec<String>,
    pub op: FilterOp,
    /// One tuple per value (`IN` may have several), one serialized value per column.
    pub values: Vec<Vec<Bytes>>,
}

impl KeyRestriction {
    /// Whether the row whose key column `name` holds `value_of(name)` satisfies it. A column
    /// `value_of` does not know fails the restriction.
    pub fn holds(&self, base: &TableSchema, value_of: &dyn Fn(&str) -> Option<Bytes>) -> bool {
        let mut row = Vec::with_capacity(self.columns.len());
        for name in &self.columns {
            let (Some(col), Some(v)) = (base.column(name), value_of(name)) else {
                return false;
            };
            row.push((col, v));
        }
        self.values.iter().any(|tuple| {
            let ord = row
                .iter()
                .zip(tuple)
                .map(|((col, v), want)| compare(&col.ty, v, want))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal);
            self.op.holds(ord)
        })
    }
}

impl TableSchema {
    /// The view's restrictions on its base's primary key (none for a table, or a view whose
    /// WHERE clause has `IS NOT NULL` only).
    pub fn view_filter(&self) -> Vec<KeyRestriction> {
        self.options
            .extra
            .iter()
            .find(|(k, _)| k == FILTER)
            .map(|(_, v)| decode(v))
            .unwrap_or_default()
    }

    /// Records the view's restrictions (an empty list records nothing).
    pub fn set_view_filter(&mut self, filter: &[KeyRestriction]) {
        set(&mut self.options, filter);
    }

    /// Whether the base row of partition key values `pk` (one per partition key column) and
    /// clustering values `ck` (one per clustering column) satisfies every restriction of
    /// `filter` (this table being the view's base).
    pub fn base_key_matches(&self, filter: &[KeyRestriction], pk: &[Bytes], ck: &[Bytes]) -> bool {
        let value_of = |name: &str| -> Option<Bytes> {
            let col = self.column(name)?;
            let (kind, values) = match col.kind {
                ColumnKind::PartitionKey => (ColumnKind::PartitionKey, pk),
                ColumnKind::Clustering => (ColumnKind::Clustering, ck),
                _ => return None,
            };
            let i = self.columns_of(kind).position(|c| c.name == name)?;
            values.get(i).cloned()
        };
        filter.iter().all(|r| r.holds(self, &value_of))
    }
}

fn set(o: &mut TableOptions, filter: &[KeyRestriction]) {
    o.extra.retain(|(k, _)| k != FILTER);
    if !filter.is_empty() {
        o.extra.push((FILTER.into(), encode(filter)));
    }
}

/// `op:name,name:v.v;v.v` per restriction, restrictions separated by spaces; names and values
/// in hex (so no separator can appear inside them).
fn encode(filter: &[KeyRestriction]) -> String {
    filter
        .iter()
        .map(|r| {
            let names: Vec<String> = r.columns.iter().map(|n| hex(n.as_bytes())).collect();
            let values: Vec<String> = r
                .values
                .iter()
                .map(|t| t.iter().map(|v| hex(v)).collect::<Vec<_>>().join("."))
                .collect();
            format!("{}:{}:{}", r.op.code(), names.join(","), values.join(";"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What [`encode`] wrote; a part that does not read back is left out (a schema written by
/// this code always reads back).
fn decode(text: &str) -> Vec<KeyRestriction> {
    text.split(' ')
        .filter_map(|part| {
            let mut fields = part.splitn(3, ':');
            let op = FilterOp::of_code(fields.next()?)?;
            let columns = fields
                .next()?
                .split(',')
                .map(|n| unhex(n).and_then(|b| String::from_utf8(b).ok()))
                .collect::<Option<Vec<_>>>()?;
            let values = fields
                .next()?
                .split(';')
                .map(|t| {
                    t.split('.')
                        .map(|v| unhex(v).map(Bytes::from))
                        .collect::<Option<Vec<_>>>()
                })
                .collect::<Option<Vec<_>>>()?;
            Some(KeyRestriction {
                columns,
                op,
                values,
            })
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::clustering::Order;
    use crate::model::types::CqlType;

    fn base() -> TableSchema {
        TableSchema::new("ks", "t")
            .with_column("k", CqlType::Int, ColumnKind::PartitionKey)
            .with_clustering("c", CqlType::Text, Order::Desc)
            .with_clustering("d", CqlType::Int, Order::Asc)
            .with_column("v", CqlType::Int, ColumnKind::Regular)
    }

    fn int(v: i32) -> Bytes {
        Bytes::copy_from_slice(&v.to_be_bytes())
    }

    fn text(v: &str) -> Bytes {
        Bytes::copy_from_slice(v.as_bytes())
    }

    fn r(columns: &[&str], op: FilterOp, values: Vec<Vec<Bytes>>) -> KeyRestriction {
        KeyRestriction {
            columns: columns.iter().map(|s| s.to_string()).collect(),
            op,
            values,
        }
    }

    #[test]
    fn restrictions_round_trip_through_the_options() {
        let filter = vec![
            r(&["k"], FilterOp::Eq, vec![vec![int(1)]]),
            r(
                &["c"],
                FilterOp::In,
                vec![vec![text("a")], vec![text("it's")], vec![Bytes::new()]],
            ),
            r(&["c", "d"], FilterOp::Gt, vec![vec![text("a"), int(1)]]),
        ];
        let mut t = base();
        t.set_view_filter(&filter);
        assert_eq!(t.view_filter(), filter);
        t.set_view_filter(&[]);
        assert!(t.view_filter().is_empty());
        assert!(!t.options.extra.iter().any(|(k, _)| k == FILTER));
    }

    /// Rows (k, c, d) against restrictions, as Cassandra 5.0 answered the same views.
    #[test]
    fn a_base_key_matches_by_each_columns_natural_order() {
        let t = base();
        // (restrictions, the base row's (k, c, d), whether it is in the view)
        type Case<'a> = (Vec<KeyRestriction>, (i32, &'a str, i32), bool);
        let cases: &[Case] = &[
            (
                vec![r(&["k"], FilterOp::Eq, vec![vec![int(1)]])],
                (1, "a", 3),
                true,
            ),
            (
                vec![r(&["k"], FilterOp::Eq, vec![vec![int(1)]])],
                (2, "a", 3),
                false,
            ),
            (
                vec![
                    r(
                        &["c"],
                        FilterOp::In,
                        vec![vec![text("a")], vec![text("it's")]],
                    ),
                    r(&["d"], FilterOp::Gt, vec![vec![int(2)]]),
                    r(&["d"], FilterOp::Le, vec![vec![int(10)]]),
                ],
                (1, "a", 3),
                true,
            ),
            (
                vec![
                    r(
                        &["c"],
                        FilterOp::In,
                        vec![vec![text("a")], vec![text("it's")]],
                    ),
                    r(&["d"], FilterOp::Le, vec![vec![int(10)]]),
                ],
                (2, "it's", 11),
                false,
            ),
            // A DESC column still compares in its type's order; a tuple lexicographically.
            (
                vec![r(&["c"], FilterOp::Gt, vec![vec![text("b")]])],
                (2, "c", 5),
                true,
            ),
            (
                vec![r(&["c", "d"], FilterOp::Gt, vec![vec![text("a"), int(1)]])],
                (1, "a", 3),
                true,
            ),
            (
                vec![r(&["c", "d"], FilterOp::Gt, vec![vec![text("a"), int(3)]])],
                (1, "a", 3),
                false,
            ),
            (
                vec![r(&["c", "d"], FilterOp::Ge, vec![vec![text("a"), int(3)]])],
                (1, "a", 3),
                true,
            ),
            (
                vec![r(&["c", "d"], FilterOp::Lt, vec![vec![text("b"), int(0)]])],
                (1, "a", 9),
                true,
            ),
            // A restriction on a column the key does not have fails.
            (
                vec![r(&["v"], FilterOp::Eq, vec![vec![int(1)]])],
                (1, "a", 3),
                false,
            ),
        ];
        for (filter, (k, c, d), want) in cases {
            let got = t.base_key_matches(filter, &[int(*k)], &[text(c), int(*d)]);
            assert_eq!(got, *want, "{filter:?} on ({k}, {c}, {d})");
        }
    }
}
