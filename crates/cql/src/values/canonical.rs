//! The canonical form of collection values: set elements and map keys sorted by the element
//! (key) order of [`compare`](fn@cairn_engine::model::types::compare) and deduplicated, at
//! every depth. Literals, bound values, JSON and the multi-cell layout all produce sets and
//! maps in this form, so equal values have equal bytes.

use super::assign::unfrozen;
use bytes::Bytes;
use cairn_engine::model::types::compare;
use cairn_engine::model::types::framing::{
    build_collection, build_map, build_tuple, split_collection, split_map, split_tuple,
};
use cairn_engine::model::types::CqlType;
use std::cmp::Ordering;

/// Sorts set elements by the element order and drops duplicates (first kept).
pub fn sorted_set(elem_ty: &CqlType, mut elems: Vec<Bytes>) -> Vec<Bytes> {
    elems.sort_by(|a, b| compare(elem_ty, a, b));
    elems.dedup_by(|a, b| compare(elem_ty, a, b) == Ordering::Equal);
    elems
}

/// Sorts map entries by key order; for equal keys the last entry wins.
pub fn sorted_map(key_ty: &CqlType, entries: Vec<(Bytes, Bytes)>) -> Vec<(Bytes, Bytes)> {
    let mut indexed: Vec<(usize, (Bytes, Bytes))> = entries.into_iter().enumerate().collect();
    indexed.sort_by(|(i, (a, _)), (j, (b, _))| compare(key_ty, a, b).then(j.cmp(i)));
    indexed.dedup_by(|a, b| compare(key_ty, &a.1 .0, &b.1 .0) == Ordering::Equal);
    indexed.into_iter().map(|(_, e)| e).collect()
}

/// The canonical form of a serialized value, as Cassandra's deserialization of a bound value
/// gives it: sets and maps re-sorted and deduplicated at every depth (inside lists, tuples,
/// map values and other sets), so that equal values have equal bytes and lookups of frozen
/// collections match. Anything malformed is returned unchanged (validation reports it).
pub fn normalize_collection(ty: &CqlType, bytes: Bytes) -> Bytes {
    canonical(ty, &bytes).map_or(bytes, Bytes::from)
}

fn canonical(ty: &CqlType, bytes: &[u8]) -> Option<Vec<u8>> {
    let canon = |t: &CqlType, b: &[u8]| {
        canonical(t, b).map_or_else(|| Bytes::copy_from_slice(b), Bytes::from)
    };
    match unfrozen(ty) {
        CqlType::Set(e) => {
            let elems = split_collection(bytes)?
                .into_iter()
                .map(|x| canon(e, x))
                .collect();
            Some(build_collection(&sorted_set(e, elems)))
        }
        CqlType::List(e) => {
            let elems: Vec<Bytes> = split_collection(bytes)?
                .into_iter()
                .map(|x| canon(e, x))
                .collect();
            Some(build_collection(&elems))
        }
        CqlType::Map(k, v) => {
            let entries = split_map(bytes)?
                .into_iter()
                .map(|(kb, vb)| (canon(k, kb), canon(v, vb)))
                .collect();
            Some(build_map(&sorted_map(k, entries)))
        }
        CqlType::Tuple(_) | CqlType::Udt(_) => {
            let types = unfrozen(ty).components().unwrap_or(&[]);
            let parts = split_tuple(bytes)?;
            let out: Vec<Option<Bytes>> = parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| {
                    p.map(|b| match types.get(i) {
                        Some(t) => canon(t, b),
                        None => Bytes::copy_from_slice(b),
                    })
                })
                .collect();
            Some(build_tuple(&out))
        }
        _ => None,
    }
}
