//! Cassandra's order for values of every type.
//!
//! Native types use the engine's comparator ([`ClusteringLayout::compare_values`]), which
//! reproduces each Cassandra `AbstractType.compare`: signed numbers, `float`/`double` as
//! Java's `compare` (-0.0 < 0.0, NaN last), `varint`/`decimal` numerically, `text`, `ascii`,
//! `blob`, `inet` as unsigned bytes, `date` as the unsigned day number, `uuid` by version then
//! (v1) timestamp then bytes, `timeuuid` by timestamp then the clock/node half as *signed*
//! bytes. The empty value sorts before everything.
//!
//! Collections and tuples (frozen or not) compare like Cassandra's `ListType`, `SetType`,
//! `MapType` and `TupleType`: element by element (maps: key, then value), a proper prefix
//! first; tuple components with null before non-null and a shorter tuple before a longer
//! one. Malformed values compare as raw bytes, so the order stays total.

use cairn_engine::model::clustering::ClusteringLayout;
use cairn_engine::model::types::framing::{split_collection, split_map, split_tuple};
use cairn_engine::model::types::CqlType;
use std::cmp::Ordering;

/// Compares two serialized values of type `ty` in Cassandra's order.
pub fn compare(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    match ty {
        CqlType::Frozen(inner) => compare(inner, a, b),
        CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _) | CqlType::Tuple(_) => {
            match (a.is_empty(), b.is_empty()) {
                (true, true) => return Ordering::Equal,
                (true, false) => return Ordering::Less,
                (false, true) => return Ordering::Greater,
                (false, false) => {}
            }
            compare_composite(ty, a, b).unwrap_or_else(|| a.cmp(b))
        }
        native => ClusteringLayout::compare_values(native, a, b),
    }
}

fn compare_composite(ty: &CqlType, a: &[u8], b: &[u8]) -> Option<Ordering> {
    Some(match ty {
        CqlType::List(e) | CqlType::Set(e) => {
            let (x, y) = (split_collection(a)?, split_collection(b)?);
            for (p, q) in x.iter().zip(&y) {
                let c = compare(e, p, q);
                if c != Ordering::Equal {
                    return Some(c);
                }
            }
            x.len().cmp(&y.len())
        }
        CqlType::Map(k, v) => {
            let (x, y) = (split_map(a)?, split_map(b)?);
            for ((xk, xv), (yk, yv)) in x.iter().zip(&y) {
                let c = compare(k, xk, yk).then_with(|| compare(v, xv, yv));
                if c != Ordering::Equal {
                    return Some(c);
                }
            }
            x.len().cmp(&y.len())
        }
        CqlType::Tuple(types) => {
            let (x, y) = (split_tuple(a)?, split_tuple(b)?);
            for (i, (p, q)) in x.iter().zip(&y).enumerate() {
                let c = match (p, q) {
                    (None, None) => Ordering::Equal,
                    (None, Some(_)) => Ordering::Less,
                    (Some(_), None) => Ordering::Greater,
                    (Some(p), Some(q)) => match types.get(i) {
                        Some(t) => compare(t, p, q),
                        None => p.cmp(q),
                    },
                };
                if c != Ordering::Equal {
                    return Some(c);
                }
            }
            x.len().cmp(&y.len())
        }
        _ => return None,
    })
}

/// Whether two values are equal for their type (`1.50 == 1.5` for decimals, all NaNs equal…).
pub fn values_equal(ty: &CqlType, a: &[u8], b: &[u8]) -> bool {
    compare(ty, a, b) == Ordering::Equal
}
