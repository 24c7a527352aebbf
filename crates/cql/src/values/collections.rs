//! The multi-cell layout of non-frozen collections.
//!
//! A non-frozen collection column is stored by the engine as a "complex" column: a list of
//! cells `(path, value)` kept sorted by `path` bytes (memcmp), each with its own timestamp,
//! so that elements can be added and removed without reading the collection. This module
//! defines the paths:
//!
//! | type | path | value |
//! | --- | --- | --- |
//! | `set<T>` | [`comparable_encode`]`(T, element)` | empty |
//! | `map<K, V>` | [`comparable_encode`]`(K, key)` | the serialized `V` |
//! | `list<T>` | 16 bytes, see below | the serialized element |
//!
//! **Comparable encoding.** memcmp order of [`comparable_encode`] is the CQL order of the
//! type ([`super::compare`](fn@super::compare)), and it decodes back ([`comparable_decode`]).
//! Native types use
//! the engine's clustering encoding (`ClusteringLayout` with one ascending column: a
//! component marker and the byte-comparable body). Frozen collections and tuples (which the
//! engine's encoding does not cover) are written as a sequence of items, each item being a
//! continuation byte and the *escaped* comparable encoding of the element (`0x00` written
//! as `0x00 0xFF`, then a `0x00 0x00` terminator, which keeps memcmp order and makes the
//! element self-delimiting):
//! - list / set: `0x01 esc(e)` per element, then `0x00`;
//! - map: `0x01 esc(k) esc(v)` per entry, then `0x00`;
//! - tuple: `0x02 esc(c)` per present component, `0x01` per null one, then `0x00` (so a
//!   shorter tuple < a null component < a value, as Cassandra orders them).
//!
//! Decoding returns the engine's canonical form of a native value where Cassandra's
//! comparator treats several byte strings as equal: a set element or map key `1.50`
//! (decimal) reads back as `1.5`, a non-minimal varint as the minimal one, any non-zero
//! boolean byte as `0x01`, every NaN as the canonical NaN. These are equal values for CQL.
//!
//! **List paths.** 16 bytes: an 8-byte big-endian *time word* and an 8-byte *sequence word*
//! `(nonce << 32) | index`, where `index` is the element's position within one statement
//! and `nonce` a random number per statement (so that two statements writing in the same
//! microsecond do not collide and each keeps its elements together).
//! - Appends (`SET l = [...]`, `l = l + [...]`): time word `0x8000_0000_0000_0000 | micros`
//!   (the statement time, microseconds since the epoch): later appends sort after earlier
//!   ones.
//! - Prepends (`l = [...] + l`): time word `0x7FFF_FFFF_FFFF_FFFF - micros`: the top bit is
//!   clear, so every prepended element sorts before every appended one, and a later prepend
//!   has a smaller word, so it goes before earlier prepends — Cassandra's "decreasing time"
//!   trick. Within one prepend the index keeps the written order.
//!
//! Setting `l[i] = v` overwrites the value of the `i`-th live cell; deleting `l[i]` deletes
//! that cell; both keep the path.

use super::codec::{build_collection, build_map, split_collection, split_map, split_tuple};
use super::error::{ValueError, ValueResult};
use super::term::{sorted_map, sorted_set, unfrozen, TermContext};
use bytes::Bytes;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::CqlType;

/// Length of a list cell path.
pub const LIST_PATH_LEN: usize = 16;

const APPEND_BASE: u64 = 0x8000_0000_0000_0000;
const PREPEND_BASE: u64 = 0x7FFF_FFFF_FFFF_FFFF;

fn corrupt(what: &str) -> ValueError {
    ValueError::invalid(format!("Invalid collection cell: {what}"))
}

fn escape_into(src: &[u8], out: &mut Vec<u8>) {
    for &b in src {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// Reads one escaped item; returns it and the rest.
fn unescape(data: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let b = *data.get(i)?;
        if b != 0 {
            out.push(b);
            i += 1;
            continue;
        }
        match *data.get(i + 1)? {
            0x00 => return Some((out, data.get(i + 2..)?)),
            0xFF => {
                out.push(0);
                i += 2;
            }
            _ => return None,
        }
    }
}

/// A byte string whose memcmp order is `ty`'s CQL order (see the module docs).
pub fn comparable_encode(ty: &CqlType, v: &[u8]) -> ValueResult<Vec<u8>> {
    let bad = || ValueError::invalid(format!("Invalid value for type {}", ty.name()));
    match unfrozen(ty) {
        CqlType::List(e) | CqlType::Set(e) => {
            let mut out = Vec::with_capacity(v.len() + 8);
            for elem in split_collection(v).ok_or_else(bad)? {
                out.push(0x01);
                escape_into(&comparable_encode(e, elem)?, &mut out);
            }
            out.push(0x00);
            Ok(out)
        }
        CqlType::Map(k, val) => {
            let mut out = Vec::with_capacity(v.len() + 8);
            for (key, value) in split_map(v).ok_or_else(bad)? {
                out.push(0x01);
                escape_into(&comparable_encode(k, key)?, &mut out);
                escape_into(&comparable_encode(val, value)?, &mut out);
            }
            out.push(0x00);
            Ok(out)
        }
        CqlType::Tuple(types) => {
            let comps = split_tuple(v).ok_or_else(bad)?;
            if comps.len() > types.len() {
                return Err(bad());
            }
            let mut out = Vec::with_capacity(v.len() + 8);
            for (c, t) in comps.iter().zip(types) {
                match c {
                    Some(c) => {
                        out.push(0x02);
                        escape_into(&comparable_encode(t, c)?, &mut out);
                    }
                    None => out.push(0x01),
                }
            }
            out.push(0x00);
            Ok(out)
        }
        native => {
            let layout = ClusteringLayout::new(vec![(native.clone(), Order::Asc)]);
            layout
                .encode_key(&[v])
                .map(|k| k.0.to_vec())
                .map_err(|_| bad())
        }
    }
}

/// The value [`comparable_encode`] encoded (in canonical form, see the module docs).
pub fn comparable_decode(ty: &CqlType, data: &[u8]) -> ValueResult<Bytes> {
    let (v, rest) = decode_prefix(ty, data).ok_or_else(|| corrupt("undecodable path"))?;
    if rest.is_empty() {
        Ok(Bytes::from(v))
    } else {
        Err(corrupt("bytes after the path"))
    }
}

/// Decodes a composite encoding at the start of `data`; natives must span all of `data`.
fn decode_prefix<'a>(ty: &CqlType, data: &'a [u8]) -> Option<(Vec<u8>, &'a [u8])> {
    match unfrozen(ty) {
        CqlType::List(e) | CqlType::Set(e) => {
            let mut elems = Vec::new();
            let mut rest = data;
            loop {
                let (&tag, r) = rest.split_first()?;
                match tag {
                    0x00 => return Some((build_collection(&elems), r)),
                    0x01 => {
                        let (item, r) = unescape(r)?;
                        elems.push(comparable_decode(e, &item).ok()?);
                        rest = r;
                    }
                    _ => return None,
                }
            }
        }
        CqlType::Map(k, v) => {
            let mut entries = Vec::new();
            let mut rest = data;
            loop {
                let (&tag, r) = rest.split_first()?;
                match tag {
                    0x00 => return Some((build_map(&entries), r)),
                    0x01 => {
                        let (key, r) = unescape(r)?;
                        let (val, r) = unescape(r)?;
                        entries.push((
                            comparable_decode(k, &key).ok()?,
                            comparable_decode(v, &val).ok()?,
                        ));
                        rest = r;
                    }
                    _ => return None,
                }
            }
        }
        CqlType::Tuple(types) => {
            let mut comps: Vec<Option<Bytes>> = Vec::new();
            let mut rest = data;
            loop {
                let (&tag, r) = rest.split_first()?;
                match tag {
                    0x00 => return Some((super::codec::build_tuple(&comps), r)),
                    0x01 => {
                        comps.push(None);
                        rest = r;
                    }
                    0x02 => {
                        let t = types.get(comps.len())?;
                        let (item, r) = unescape(r)?;
                        comps.push(Some(comparable_decode(t, &item).ok()?));
                        rest = r;
                    }
                    _ => return None,
                }
                if comps.len() > types.len() {
                    return None;
                }
            }
        }
        native => {
            let layout = ClusteringLayout::new(vec![(native.clone(), Order::Asc)]);
            let mut values = layout.decode(data).ok()?;
            if values.len() != 1 {
                return None;
            }
            Some((values.pop()?.to_vec(), &[]))
        }
    }
}

/// The path of a set element or a map key, for adding or deleting one cell
/// (`s = s + {x}`, `s = s - {x}`, `m[k] = v`, `DELETE m[k]`). Lists have no element paths.
pub fn element_path(ty: &CqlType, elem: &[u8]) -> ValueResult<Bytes> {
    match ty {
        CqlType::Set(e) | CqlType::Map(e, _) => comparable_encode(e, elem).map(Bytes::from),
        _ => Err(ValueError::invalid(format!(
            "Element paths exist for non-frozen sets and maps only, not for {}",
            ty.name()
        ))),
    }
}

/// The element (set) or key (map) a path stands for.
pub fn path_element(ty: &CqlType, path: &[u8]) -> ValueResult<Bytes> {
    match ty {
        CqlType::Set(e) | CqlType::Map(e, _) => comparable_decode(e, path),
        _ => Err(corrupt("not a set or map path")),
    }
}

fn list_paths(time_word: u64, nonce: u32, count: usize) -> Vec<Bytes> {
    (0..count)
        .map(|i| {
            let mut p = Vec::with_capacity(LIST_PATH_LEN);
            p.extend_from_slice(&time_word.to_be_bytes());
            p.extend_from_slice(
                &((u64::from(nonce) << 32) | (i as u64 & 0xFFFF_FFFF)).to_be_bytes(),
            );
            Bytes::from(p)
        })
        .collect()
}

/// Paths for `count` elements appended at `now_micros` (sorting after all earlier appends
/// and all prepends).
pub fn list_append_paths(now_micros: i64, nonce: u32, count: usize) -> Vec<Bytes> {
    let micros = now_micros.max(0) as u64 & !APPEND_BASE;
    list_paths(APPEND_BASE | micros, nonce, count)
}

/// Paths for `count` elements prepended at `now_micros` (sorting before every existing
/// element, in the given order).
pub fn list_prepend_paths(now_micros: i64, nonce: u32, count: usize) -> Vec<Bytes> {
    let micros = now_micros.max(0) as u64 & !APPEND_BASE;
    list_paths(PREPEND_BASE - micros, nonce, count)
}

/// The cells of a whole collection value (for `INSERT` and `SET c = …`), sorted by path.
/// List cells get append paths at the context's time.
pub fn collection_to_cells(
    ty: &CqlType,
    serialized: &[u8],
    ctx: &dyn TermContext,
) -> ValueResult<Vec<(Bytes, Bytes)>> {
    let bad = || ValueError::invalid(format!("Invalid value for type {}", ty.name()));
    match ty {
        CqlType::Set(e) => {
            let elems: Vec<Bytes> = split_collection(serialized)
                .ok_or_else(bad)?
                .into_iter()
                .map(Bytes::copy_from_slice)
                .collect();
            let mut cells = sorted_set(e, elems)
                .into_iter()
                .map(|x| Ok((Bytes::from(comparable_encode(e, &x)?), Bytes::new())))
                .collect::<ValueResult<Vec<_>>>()?;
            cells.sort_by(|a, b| a.0.cmp(&b.0));
            cells.dedup_by(|a, b| a.0 == b.0);
            Ok(cells)
        }
        CqlType::Map(k, _) => {
            let entries: Vec<(Bytes, Bytes)> = split_map(serialized)
                .ok_or_else(bad)?
                .into_iter()
                .map(|(k, v)| (Bytes::copy_from_slice(k), Bytes::copy_from_slice(v)))
                .collect();
            let mut cells = sorted_map(k, entries)
                .into_iter()
                .map(|(key, v)| Ok((Bytes::from(comparable_encode(k, &key)?), v)))
                .collect::<ValueResult<Vec<_>>>()?;
            cells.sort_by(|a, b| a.0.cmp(&b.0));
            cells.dedup_by(|a, b| a.0 == b.0);
            Ok(cells)
        }
        CqlType::List(_) => {
            let elems = split_collection(serialized).ok_or_else(bad)?;
            let paths = list_append_paths(ctx.now_micros(), ctx.random_u64() as u32, elems.len());
            Ok(paths
                .into_iter()
                .zip(elems)
                .map(|(p, e)| (p, Bytes::copy_from_slice(e)))
                .collect())
        }
        _ => Err(ValueError::invalid(format!(
            "{} is not a non-frozen collection",
            ty.name()
        ))),
    }
}

/// Serializes live cells back into the protocol form of the collection (for `SELECT`).
/// Cells need not be sorted; they are read in path order.
pub fn cells_to_collection(ty: &CqlType, cells: &[(Bytes, Bytes)]) -> ValueResult<Bytes> {
    let mut sorted: Vec<&(Bytes, Bytes)> = cells.iter().collect();
    if !sorted.windows(2).all(|w| w[0].0 <= w[1].0) {
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
    }
    match ty {
        CqlType::Set(e) => {
            let elems = sorted
                .iter()
                .map(|(p, _)| comparable_decode(e, p))
                .collect::<ValueResult<Vec<_>>>()?;
            Ok(Bytes::from(build_collection(&elems)))
        }
        CqlType::Map(k, _) => {
            let entries = sorted
                .iter()
                .map(|(p, v)| Ok((comparable_decode(k, p)?, v.clone())))
                .collect::<ValueResult<Vec<_>>>()?;
            Ok(Bytes::from(build_map(&entries)))
        }
        CqlType::List(_) => {
            let elems: Vec<&Bytes> = sorted.iter().map(|(_, v)| v).collect();
            Ok(Bytes::from(build_collection(&elems)))
        }
        _ => Err(ValueError::invalid(format!(
            "{} is not a non-frozen collection",
            ty.name()
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::compare::compare;
    use super::super::tests::{ty, value, Ctx};
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn int(v: i32) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }

    #[test]
    fn set_and_map_cells() {
        let t = ty("set<int>");
        let v = value("{3, -1, 2}", "set<int>");
        let cells = collection_to_cells(&t, &v, &Ctx::new()).unwrap();
        assert_eq!(cells.len(), 3);
        assert!(cells.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(cells.iter().all(|(_, v)| v.is_empty()));
        assert_eq!(cells_to_collection(&t, &cells).unwrap(), v);
        assert_eq!(path_element(&t, &cells[0].0).unwrap(), Bytes::from(int(-1)));
        assert_eq!(element_path(&t, &int(2)).unwrap(), cells[1].0);

        let mt = ty("map<text, int>");
        let m = value("{'b': 2, 'a': 1}", "map<text, int>");
        let cells = collection_to_cells(&mt, &m, &Ctx::new()).unwrap();
        assert_eq!(cells[1].1, Bytes::from(int(2)));
        assert_eq!(cells_to_collection(&mt, &cells).unwrap(), m);
        // Reversed input order still serializes sorted.
        let rev: Vec<_> = cells.iter().rev().cloned().collect();
        assert_eq!(cells_to_collection(&mt, &rev).unwrap(), m);
        assert!(element_path(&ty("list<int>"), &int(1)).is_err());
        assert!(collection_to_cells(&ty("frozen<set<int>>"), &v, &Ctx::new()).is_err());
    }

    #[test]
    fn list_paths_order() {
        let t = ty("list<text>");
        let v = value("['a', 'b', 'c']", "list<text>");
        let ctx = Ctx::new();
        let cells = collection_to_cells(&t, &v, &ctx).unwrap();
        assert!(cells.iter().all(|(p, _)| p.len() == LIST_PATH_LEN));
        assert_eq!(cells_to_collection(&t, &cells).unwrap(), v);
        // Append later, prepend twice: [p2.., p1.., original.., appended..].
        let mut all = cells.clone();
        let later = ctx.now + 5;
        for (p, e) in list_append_paths(later, 7, 1).into_iter().zip(["d"]) {
            all.push((p, Bytes::from(e)));
        }
        for (p, e) in list_prepend_paths(ctx.now + 1, 9, 2)
            .into_iter()
            .zip(["x", "y"])
        {
            all.push((p, Bytes::from(e)));
        }
        for (p, e) in list_prepend_paths(ctx.now + 2, 3, 1).into_iter().zip(["z"]) {
            all.push((p, Bytes::from(e)));
        }
        let out = cells_to_collection(&t, &all).unwrap();
        let texts: Vec<&[u8]> = split_collection(&out).unwrap();
        assert_eq!(texts, vec![&b"z"[..], b"x", b"y", b"a", b"b", b"c", b"d"]);
    }

    #[test]
    fn nested_frozen_elements() {
        for (t, elems) in [
            ("set<frozen<list<int>>>", "{[2], [1, 2], [], [1]}"),
            (
                "set<frozen<tuple<int, text>>>",
                "{(1, 'b'), (1, null), (0, 'z'), (1)}",
            ),
            (
                "set<frozen<map<text, int>>>",
                "{{'a': 1}, {'a': 0, 'b': 1}, {}}",
            ),
            ("map<frozen<set<text>>, int>", "{{'x', 'ab'}: 1, {'a'}: 2}"),
            (
                "set<frozen<list<frozen<set<blob>>>>>",
                "{[{0x00, 0x0000}], [{}], [{0x01}]}",
            ),
        ] {
            let typ = ty(t);
            let v = value(elems, t);
            let cells = collection_to_cells(&typ, &v, &Ctx::new()).unwrap();
            assert_eq!(cells_to_collection(&typ, &cells).unwrap(), v, "{t}");
        }
    }

    #[test]
    fn corrupt_paths_are_errors() {
        let t = ty("set<frozen<list<int>>>");
        for bad in [
            &[][..],
            &[0x01],
            &[0x01, 0x00, 0x05],
            &[0x07],
            &[0x00, 0x00],
        ] {
            assert!(
                cells_to_collection(&t, &[(Bytes::copy_from_slice(bad), Bytes::new())]).is_err()
            );
        }
    }

    fn arb_int_list() -> impl Strategy<Value = Vec<i32>> {
        proptest::collection::vec(-5i32..5, 0..6)
    }

    proptest! {
        #[test]
        fn set_round_trip(elems in proptest::collection::vec(any::<i32>(), 0..20)) {
            let t = ty("set<int>");
            let raw = build_collection(&elems.iter().map(|e| int(*e)).collect::<Vec<_>>());
            let cells = collection_to_cells(&t, &raw, &Ctx::new()).unwrap();
            let mut expected = elems.clone();
            expected.sort();
            expected.dedup();
            let back = cells_to_collection(&t, &cells).unwrap();
            prop_assert_eq!(
                back.to_vec(),
                build_collection(&expected.iter().map(|e| int(*e)).collect::<Vec<_>>())
            );
        }

        #[test]
        fn map_round_trip(entries in proptest::collection::vec(("[a-c\u{0}]{0,3}", any::<i32>()), 0..12)) {
            let t = ty("map<text, int>");
            let raw = build_map(&entries.iter().map(|(k, v)| (k.as_bytes().to_vec(), int(*v))).collect::<Vec<_>>());
            let cells = collection_to_cells(&t, &raw, &Ctx::new()).unwrap();
            let mut expected: std::collections::BTreeMap<Vec<u8>, i32> = Default::default();
            for (k, v) in &entries {
                expected.insert(k.as_bytes().to_vec(), *v);
            }
            let back = cells_to_collection(&t, &cells).unwrap();
            prop_assert_eq!(
                back.to_vec(),
                build_map(&expected.into_iter().map(|(k, v)| (k, int(v))).collect::<Vec<_>>())
            );
        }

        #[test]
        fn list_round_trip(elems in proptest::collection::vec(any::<i32>(), 0..20)) {
            let t = ty("list<int>");
            let raw = build_collection(&elems.iter().map(|e| int(*e)).collect::<Vec<_>>());
            let cells = collection_to_cells(&t, &raw, &Ctx::new()).unwrap();
            prop_assert_eq!(cells_to_collection(&t, &cells).unwrap().to_vec(), raw);
        }

        #[test]
        fn comparable_order_matches_compare(a in arb_int_list(), b in arb_int_list()) {
            let t = ty("frozen<list<int>>");
            let va = build_collection(&a.iter().map(|e| int(*e)).collect::<Vec<_>>());
            let vb = build_collection(&b.iter().map(|e| int(*e)).collect::<Vec<_>>());
            let (ea, eb) = (comparable_encode(&t, &va).unwrap(), comparable_encode(&t, &vb).unwrap());
            prop_assert_eq!(ea.cmp(&eb), compare(&t, &va, &vb));
            prop_assert_eq!(compare(&t, &va, &vb), a.cmp(&b));
            prop_assert_eq!(comparable_decode(&t, &ea).unwrap().to_vec(), va);
        }

        #[test]
        fn tuple_order_matches_compare(
            a in proptest::collection::vec(proptest::option::of("[ab\u{0}]{0,2}"), 0..3),
            b in proptest::collection::vec(proptest::option::of("[ab\u{0}]{0,2}"), 0..3),
        ) {
            let t = ty("tuple<text, text, text>");
            let enc = |x: &Vec<Option<String>>| super::super::codec::build_tuple(
                &x.iter().map(|c| c.as_ref().map(|s| s.as_bytes().to_vec())).collect::<Vec<_>>());
            let (va, vb) = (enc(&a), enc(&b));
            let (ea, eb) = (comparable_encode(&t, &va).unwrap(), comparable_encode(&t, &vb).unwrap());
            let c = compare(&t, &va, &vb);
            prop_assert_eq!(ea.cmp(&eb), c);
            if c == Ordering::Equal { prop_assert_eq!(va.clone(), vb.clone()); }
            prop_assert_eq!(comparable_decode(&t, &ea).unwrap().to_vec(), va);
        }
    }
}
