//! Stand-in values for bind markers, so a statement can be checked at PREPARE as it will be
//! checked when executed.
//!
//! Cassandra refuses at PREPARE everything its `StatementRestrictions` and operations find
//! wrong with a statement's shape (a clustering column missing from an UPDATE, a query that
//! needs ALLOW FILTERING…); only what depends on the bound values (null, unset, an empty or
//! oversized key) waits for execution. Cairn resolves a statement once, with its values, so
//! PREPARE runs that same resolution with a term context whose `placeholders()` is true
//! (`exec::binds::Placeholders`): every marker stands for a valid, non-null, non-empty value
//! of its receiver's type ([`placeholder`]), and whatever is refused is refused for the
//! statement's shape alone (a literal in the statement can still trip a value check; PREPARE
//! leaves those to execution, see `exec::write::check_shape`).
//!
//! Invariant: a placeholder passes every validation a bound value of its type passes
//! (`validate_bound`), is not empty (so no key is refused as empty), and a collection holds
//! one element (so `IN ?` selects something, as a real list usually does).

use bytes::Bytes;
use cairn_engine::model::types::framing::{build_collection, build_map, build_tuple};
use cairn_engine::model::types::CqlType;

/// A valid, non-empty value of `ty`.
pub fn placeholder(ty: &CqlType) -> Bytes {
    use CqlType as T;
    let bytes: Vec<u8> = match ty {
        T::Ascii | T::Text => b"a".to_vec(),
        T::Blob | T::Boolean | T::Tinyint | T::Varint => vec![0],
        T::Smallint => vec![0; 2],
        T::Int | T::Float => vec![0; 4],
        T::Bigint | T::Counter | T::Double | T::Timestamp | T::Time => vec![0; 8],
        // Day 2^31 is 1970-01-01.
        T::Date => vec![0x80, 0, 0, 0],
        // Scale 0, unscaled value 0.
        T::Decimal => vec![0; 5],
        // Months, days and nanoseconds, each a zero vint.
        T::Duration => vec![0; 3],
        T::Inet => vec![127, 0, 0, 1],
        T::Uuid => vec![0; 16],
        T::Timeuuid => {
            let mut u = vec![0; 16];
            u[6] = 0x10; // version 1
            u[8] = 0x80; // IETF variant
            u
        }
        T::List(e) | T::Set(e) => build_collection(&[placeholder(e)]),
        T::Map(k, v) => build_map(&[(placeholder(k), placeholder(v))]),
        T::Tuple(_) | T::Udt(_) => build_tuple(
            &ty.components()
                .unwrap_or(&[])
                .iter()
                .map(|t| Some(placeholder(t)))
                .collect::<Vec<_>>(),
        ),
        T::Frozen(inner) => return placeholder(inner),
    };
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::value::validate_bound;

    #[test]
    fn every_placeholder_is_a_valid_non_empty_value() {
        let mut types: Vec<CqlType> = CqlType::natives().cloned().collect();
        let nested: Vec<CqlType> = types
            .iter()
            .flat_map(|t| {
                [
                    CqlType::List(Box::new(t.clone())),
                    CqlType::Set(Box::new(t.clone())),
                    CqlType::Map(Box::new(t.clone()), Box::new(t.clone())),
                    CqlType::Tuple(vec![t.clone(), CqlType::Int]),
                    CqlType::Frozen(Box::new(CqlType::List(Box::new(t.clone())))),
                ]
            })
            .collect();
        types.extend(nested);
        for ty in &types {
            let v = placeholder(ty);
            assert!(!v.is_empty(), "{ty:?}");
            assert!(validate_bound(ty, &v).is_ok(), "{ty:?}: {v:?}");
        }
    }
}
