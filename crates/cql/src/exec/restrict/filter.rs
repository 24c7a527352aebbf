//! Row filters: the restrictions a read cannot turn into partitions or clustering slices,
//! checked row by row (Cassandra's `RowFilter`, which needs ALLOW FILTERING).
//!
//! A filter names a column of any kind — a partition-key part, a clustering column, a static
//! or a regular column — and one condition on its value. A missing (null) value satisfies no
//! condition.

use crate::ast::Operator;
use bytes::Bytes;
use cairn_engine::model::types::compare;
use cairn_engine::model::types::framing::{split_collection, split_map};
use cairn_engine::model::types::unfrozen;
use cairn_engine::model::types::CqlType;
use cairn_engine::schema::ColumnDef;
use std::cmp::Ordering;

/// One condition of a row filter.
#[derive(Debug, Clone)]
pub enum FilterKind {
    /// `c = v`, `c < v`, `c <= v`, `c > v`, `c >= v`.
    Compare(Operator, Bytes),
    /// `c IN (v, …)`.
    In(Vec<Bytes>),
    /// `c CONTAINS v` (an element of a list or set, a value of a map).
    Contains(Bytes),
    /// `c CONTAINS KEY k`.
    ContainsKey(Bytes),
    /// `c[k] = v` on a map.
    MapEntry(Bytes, Bytes),
    /// The value is not empty (zero bytes): what a storage-attached index finds of the
    /// columns it holds no empty value for (`exec/select`'s `sai_empty_filters`).
    NotEmpty,
    /// `c < v` (or another comparison) on an `inet` column in a storage-attached index's
    /// order: an IPv4 address compared as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), where
    /// `Compare` orders the addresses' bytes as they are.
    CompareMappedInet(Operator, Bytes),
}

/// A condition on one column, checked on each row.
#[derive(Debug, Clone)]
pub struct Filter {
    /// The column.
    pub column: ColumnDef,
    /// The condition.
    pub kind: FilterKind,
}

impl Filter {
    /// Whether a value of the column satisfies the condition (`None`: the column is null).
    pub fn matches(&self, value: Option<&[u8]>) -> bool {
        let Some(v) = value else {
            return false;
        };
        let ty = &self.column.ty;
        match &self.kind {
            FilterKind::Compare(op, x) => holds(*op, compare(ty, v, x)),
            FilterKind::In(xs) => xs.iter().any(|x| compare(ty, v, x) == Ordering::Equal),
            FilterKind::Contains(x) => contains(ty, v, x, false),
            FilterKind::ContainsKey(x) => contains(ty, v, x, true),
            FilterKind::MapEntry(k, x) => match unfrozen(ty) {
                CqlType::Map(kt, vt) => split_map(v).is_some_and(|entries| {
                    entries.iter().any(|(mk, mv)| {
                        compare(kt, mk, k) == Ordering::Equal
                            && compare(vt, mv, x) == Ordering::Equal
                    })
                }),
                _ => false,
            },
            FilterKind::NotEmpty => !v.is_empty(),
            FilterKind::CompareMappedInet(op, x) => holds(*op, mapped_inet(v).cmp(&mapped_inet(x))),
        }
    }
}

/// Whether `value op bound` holds, `ord` being how the value compares with the bound.
fn holds(op: Operator, ord: Ordering) -> bool {
    match op {
        Operator::Eq => ord == Ordering::Equal,
        Operator::Lt => ord == Ordering::Less,
        Operator::Lte => ord != Ordering::Greater,
        Operator::Gt => ord == Ordering::Greater,
        Operator::Gte => ord != Ordering::Less,
        _ => false,
    }
}

/// An address as 16 bytes: an IPv4 one mapped (`::ffff:a.b.c.d`), an IPv6 one as it is.
fn mapped_inet(v: &[u8]) -> Vec<u8> {
    if v.len() == 4 {
        let mut out = vec![0u8; 10];
        out.extend_from_slice(&[0xff, 0xff]);
        out.extend_from_slice(v);
        out
    } else {
        v.to_vec()
    }
}

/// Whether a serialized collection holds `needle`: as an element of a list or set, as a value
/// of a map, or (`key`) as a key of a map.
fn contains(ty: &CqlType, collection: &[u8], needle: &[u8], key: bool) -> bool {
    let eq = |t: &CqlType, x: &[u8]| compare(t, x, needle) == Ordering::Equal;
    match unfrozen(ty) {
        CqlType::List(e) | CqlType::Set(e) => {
            !key && split_collection(collection).is_some_and(|elems| elems.iter().any(|x| eq(e, x)))
        }
        CqlType::Map(k, v) => split_map(collection).is_some_and(|entries| {
            entries
                .iter()
                .any(|(mk, mv)| if key { eq(k, mk) } else { eq(v, mv) })
        }),
        _ => false,
    }
}
