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
//! type ([`compare`](fn@cairn_engine::model::types::compare)), and it decodes back ([`comparable_decode`]).
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
//!
//! **Element and slice selection.** [`select_element`] and [`select_slice`] are the selectors
//! `c[k]` and `c[a..b]` on a serialized set or map (Cassandra's `ElementsSelector`), with
//! [`element_selection`] / [`slice_selection`] for their types and Cassandra's refusals.

use super::assign::unfrozen;
use super::canonical::{sorted_map, sorted_set};
use super::error::{ValueError, ValueResult};
use super::value::{TermContext, TermValue};
use bytes::Bytes;
use cairn_engine::model::clustering::{ClusteringLayout, Order};
use cairn_engine::model::types::compare;
use cairn_engine::model::types::framing::{
    build_collection, build_map, build_tuple, split_collection, split_map, split_tuple,
};
use cairn_engine::model::types::CqlType;
use std::cmp::Ordering;

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
        tuple @ (CqlType::Tuple(_) | CqlType::Udt(_)) => {
            let types = tuple.components().unwrap_or(&[]);
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
        tuple @ (CqlType::Tuple(_) | CqlType::Udt(_)) => {
            let types = tuple.components().unwrap_or(&[]);
            let mut comps: Vec<Option<Bytes>> = Vec::new();
            let mut rest = data;
            loop {
                let (&tag, r) = rest.split_first()?;
                match tag {
                    0x00 => {
                        return Some((cairn_engine::model::types::framing::build_tuple(&comps), r))
                    }
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

/// The cell path of a non-frozen user type's field at `position`.
pub fn udt_field_path(position: usize) -> Bytes {
    Bytes::copy_from_slice(&(position as u16).to_be_bytes())
}

/// The field position a non-frozen user type's cell path stands for.
pub fn udt_path_field(path: &[u8]) -> Option<usize> {
    let raw: [u8; 2] = path.try_into().ok()?;
    Some(usize::from(u16::from_be_bytes(raw)))
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
        CqlType::Udt(u) => {
            // One cell per non-null field, its path the field's position as a 2-byte
            // big-endian short (Cassandra's `UserType` cell paths): paths sort in field order.
            let parts = split_tuple(serialized).ok_or_else(bad)?;
            if parts.len() > u.field_types.len() {
                return Err(bad());
            }
            Ok(parts
                .into_iter()
                .enumerate()
                .filter_map(|(i, p)| p.map(|v| (udt_field_path(i), Bytes::copy_from_slice(v))))
                .collect())
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
        CqlType::Udt(u) => {
            // Every field of the type, the ones without a cell null.
            let mut fields: Vec<Option<Bytes>> = vec![None; u.field_types.len()];
            for (p, v) in sorted {
                let i = udt_path_field(p).ok_or_else(|| corrupt("not a user type field path"))?;
                if let Some(slot) = fields.get_mut(i) {
                    *slot = Some(v.clone());
                }
            }
            Ok(Bytes::from(build_tuple(&fields)))
        }
        _ => Err(ValueError::invalid(format!(
            "{} is not a non-frozen collection",
            ty.name()
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// Element and slice selection (`c[k]`, `c[a..b]`), Cassandra's `ElementsSelector`

/// What an element or slice selection on a selector of type `ty` works with: the type of
/// the key (or bounds), the receiver name the key terms are evaluated for (`key(m)` for a
/// map, `value(s)` for a set, as Cassandra names them in messages), and the result type:
/// the map's value type or the set's element type for `c[k]`, the collection's own type for
/// `c[a..b]`. `name` is the selector's text (`m`, `mm[1]`), for the errors: element
/// selection on something that is not a collection, or on a list, is refused with
/// Cassandra's texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// The type of `k` in `c[k]` (and of the bounds of a slice).
    pub key_type: CqlType,
    /// The receiver name for the key's term.
    pub key_receiver: String,
    /// The type of the selection's result.
    pub result_type: CqlType,
}

/// Checks `name[k]` on a selector of type `ty` and gives its types.
pub fn element_selection(ty: &CqlType, name: &str) -> ValueResult<Selection> {
    selection(ty, name, false)
}

/// Checks `name[a..b]` on a selector of type `ty` and gives its types.
pub fn slice_selection(ty: &CqlType, name: &str) -> ValueResult<Selection> {
    selection(ty, name, true)
}

fn selection(ty: &CqlType, name: &str, slice: bool) -> ValueResult<Selection> {
    let what = if slice { "Slice" } else { "Element" };
    let (key_type, key_receiver, value) = match unfrozen(ty) {
        CqlType::Map(k, v) => ((**k).clone(), format!("key({name})"), (**v).clone()),
        CqlType::Set(e) => ((**e).clone(), format!("value({name})"), (**e).clone()),
        CqlType::List(_) => {
            return Err(ValueError::invalid(format!(
                "{what} selection is only allowed on sets and maps, but {name} is a list"
            )))
        }
        _ if slice => {
            return Err(ValueError::invalid(format!(
                "Invalid slice selection: {name} of type {} is not a collection",
                cql3_name(ty)
            )))
        }
        _ => {
            return Err(ValueError::invalid(format!(
                "Invalid element selection: {name} is of type {} is not a collection",
                cql3_name(ty)
            )))
        }
    };
    Ok(Selection {
        key_type,
        key_receiver,
        result_type: if slice { ty.clone() } else { value },
    })
}

/// The key of `name[k]` once bound: null and unset are refused as Cassandra refuses them.
pub fn element_key(key: TermValue, name: &str) -> ValueResult<Bytes> {
    match key {
        TermValue::Value(b) => Ok(b),
        TermValue::Null => Err(ValueError::invalid(format!(
            "Invalid null value for element selection on {name}"
        ))),
        TermValue::Unset => Err(ValueError::invalid(format!(
            "Invalid unset value for element selection on {name}"
        ))),
    }
}

/// A bound of `name[a..b]` once bound: unset means no bound, null is refused.
pub fn slice_bound(bound: TermValue, name: &str) -> ValueResult<Option<Bytes>> {
    match bound {
        TermValue::Value(b) => Ok(Some(b)),
        TermValue::Unset => Ok(None),
        TermValue::Null => Err(ValueError::invalid(format!(
            "Invalid null value for slice selection on {name}"
        ))),
    }
}

fn not_a_set_or_map(ty: &CqlType) -> ValueError {
    ValueError::invalid(format!(
        "Element selection is only allowed on sets and maps, not on {}",
        ty.name()
    ))
}

/// `c[key]`: a map's value for a key, a set's element if present (else null). Lists are
/// refused, as Cassandra refuses them ([`element_selection`] gives its text). `collection`
/// is the serialized (frozen or assembled) collection; keys compare in the key type's CQL
/// order, so `{1.5: …}[1.50]` finds the entry.
pub fn select_element(ty: &CqlType, collection: &[u8], key: &[u8]) -> ValueResult<Option<Bytes>> {
    let corrupt = || ValueError::marshal(format!("Not enough bytes to read a {}", kind_name(ty)));
    match unfrozen(ty) {
        CqlType::Map(k, _) => {
            for (kb, vb) in split_map(collection).ok_or_else(corrupt)? {
                match compare(k, kb, key) {
                    Ordering::Equal => return Ok(Some(Bytes::copy_from_slice(vb))),
                    // Sorted: past the key, it is not there.
                    Ordering::Greater => return Ok(None),
                    Ordering::Less => {}
                }
            }
            Ok(None)
        }
        CqlType::Set(e) => {
            for eb in split_collection(collection).ok_or_else(corrupt)? {
                match compare(e, eb, key) {
                    Ordering::Equal => return Ok(Some(Bytes::copy_from_slice(eb))),
                    Ordering::Greater => return Ok(None),
                    Ordering::Less => {}
                }
            }
            Ok(None)
        }
        other => Err(not_a_set_or_map(other)),
    }
}

/// `c[from..to]`: the elements (entries) of a set (map) between the bounds, both inclusive
/// and either open, serialized as a collection of the same type. No element is null for a
/// non-frozen collection and an empty collection for a frozen one (Cassandra's
/// `getSliceFromSerialized`); with neither bound the collection is returned as is.
pub fn select_slice(
    ty: &CqlType,
    collection: &[u8],
    from: Option<&[u8]>,
    to: Option<&[u8]>,
) -> ValueResult<Option<Bytes>> {
    if from.is_none() && to.is_none() {
        return Ok(Some(Bytes::copy_from_slice(collection)));
    }
    let frozen = matches!(ty, CqlType::Frozen(_));
    let corrupt = || ValueError::marshal(format!("Not enough bytes to read a {}", kind_name(ty)));
    let within = |key_ty: &CqlType, k: &[u8]| {
        from.is_none_or(|f| compare(key_ty, f, k) != Ordering::Greater)
            && to.is_none_or(|t| compare(key_ty, k, t) != Ordering::Greater)
    };
    let out = match unfrozen(ty) {
        CqlType::Map(k, _) => {
            let entries: Vec<(&[u8], &[u8])> = split_map(collection)
                .ok_or_else(corrupt)?
                .into_iter()
                .filter(|(kb, _)| within(k, kb))
                .collect();
            (!entries.is_empty() || frozen).then(|| build_map(&entries))
        }
        CqlType::Set(e) => {
            let elems: Vec<&[u8]> = split_collection(collection)
                .ok_or_else(corrupt)?
                .into_iter()
                .filter(|eb| within(e, eb))
                .collect();
            (!elems.is_empty() || frozen).then(|| build_collection(&elems))
        }
        other => return Err(not_a_set_or_map(other)),
    };
    Ok(out.map(Bytes::from))
}

/// The type's name as Cassandra prints it in these messages: tuples are always frozen.
fn cql3_name(ty: &CqlType) -> String {
    match ty {
        CqlType::Tuple(_) => format!("frozen<{}>", ty.name()),
        other => other.name(),
    }
}

fn kind_name(ty: &CqlType) -> &'static str {
    match unfrozen(ty) {
        CqlType::Map(..) => "map",
        CqlType::Set(_) => "set",
        _ => "collection",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::tests::{ty, value, Ctx};
    use super::*;
    use cairn_engine::model::types::compare;
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
            let enc = |x: &Vec<Option<String>>| cairn_engine::model::types::framing::build_tuple(
                &x.iter().map(|c| c.as_ref().map(|s| s.as_bytes().to_vec())).collect::<Vec<_>>());
            let (va, vb) = (enc(&a), enc(&b));
            let (ea, eb) = (comparable_encode(&t, &va).unwrap(), comparable_encode(&t, &vb).unwrap());
            let c = compare(&t, &va, &vb);
            prop_assert_eq!(ea.cmp(&eb), c);
            if c == Ordering::Equal { prop_assert_eq!(va.clone(), vb.clone()); }
            prop_assert_eq!(comparable_decode(&t, &ea).unwrap().to_vec(), va);
        }
    }

    /// Each case checked against Cassandra 5.0.9 (`SELECT m[1], m[2..3], … FROM t`).
    #[test]
    fn element_and_slice_selection() {
        use super::super::format::format_value;
        use super::super::tests::{ty, value};
        let m = value("{1: 'a', 2: 'b', 3: 'c', 5: 'e'}", "map<int, text>");
        let s = value("{'x', 'y', 'z'}", "set<text>");
        let fm = value("{'a': 1, 'b': 2}", "frozen<map<text, int>>");
        let fs = value("{4, 5, 6}", "frozen<set<int>>");
        let elem = |t: &str, c: &Bytes, k: &str| {
            let (typ, sel) = (ty(t), element_selection(&ty(t), "c").unwrap());
            let key = value(k, &sel.key_type.name());
            select_element(&typ, c, &key)
                .unwrap()
                .map(|v| format_value(&sel.result_type, &v))
        };
        assert_eq!(elem("map<int, text>", &m, "1").as_deref(), Some("'a'"));
        assert_eq!(elem("map<int, text>", &m, "4"), None);
        assert_eq!(elem("set<text>", &s, "'x'").as_deref(), Some("'x'"));
        assert_eq!(elem("set<text>", &s, "'w'"), None);
        assert_eq!(
            elem("frozen<map<text, int>>", &fm, "'b'").as_deref(),
            Some("2")
        );
        assert_eq!(elem("frozen<set<int>>", &fs, "5").as_deref(), Some("5"));
        assert_eq!(elem("frozen<set<int>>", &fs, "7"), None);
        let dm = value("{1.5: 1}", "map<decimal, int>");
        assert_eq!(elem("map<decimal, int>", &dm, "1.50").as_deref(), Some("1"));

        let slice = |t: &str, c: &Bytes, from: Option<&str>, to: Option<&str>| {
            let (typ, sel) = (ty(t), slice_selection(&ty(t), "c").unwrap());
            let key_ty = sel.key_type.name();
            let (f, l) = (
                from.map(|x| value(x, &key_ty)),
                to.map(|x| value(x, &key_ty)),
            );
            select_slice(&typ, c, f.as_deref(), l.as_deref())
                .unwrap()
                .map(|v| format_value(&sel.result_type, &v))
        };
        let mt = "map<int, text>";
        assert_eq!(
            slice(mt, &m, Some("2"), Some("3")).as_deref(),
            Some("{2: 'b', 3: 'c'}")
        );
        assert_eq!(
            slice(mt, &m, None, Some("2")).as_deref(),
            Some("{1: 'a', 2: 'b'}")
        );
        assert_eq!(
            slice(mt, &m, Some("3"), None).as_deref(),
            Some("{3: 'c', 5: 'e'}")
        );
        assert_eq!(slice(mt, &m, Some("4"), Some("1")), None);
        assert_eq!(
            slice(mt, &m, None, None).as_deref(),
            Some("{1: 'a', 2: 'b', 3: 'c', 5: 'e'}")
        );
        assert_eq!(
            slice("set<text>", &s, Some("'y'"), None).as_deref(),
            Some("{'y', 'z'}")
        );
        assert_eq!(
            slice("frozen<set<int>>", &fs, None, Some("5")).as_deref(),
            Some("{4, 5}")
        );
        // An empty slice of a frozen collection is an empty collection, not null.
        assert_eq!(
            slice("frozen<set<int>>", &fs, Some("7"), None).as_deref(),
            Some("{}")
        );
        assert_eq!(
            slice("frozen<map<text, int>>", &fm, Some("'a'"), Some("'a'")).as_deref(),
            Some("{'a': 1}")
        );

        let err = |r: ValueResult<Selection>| r.unwrap_err().to_string();
        assert_eq!(
            err(element_selection(&ty("list<int>"), "l")),
            "Element selection is only allowed on sets and maps, but l is a list"
        );
        assert_eq!(
            err(slice_selection(&ty("frozen<list<text>>"), "fl")),
            "Slice selection is only allowed on sets and maps, but fl is a list"
        );
        assert_eq!(
            err(element_selection(&ty("int"), "i")),
            "Invalid element selection: i is of type int is not a collection"
        );
        assert_eq!(
            err(element_selection(&ty("tuple<int, text>"), "t")),
            "Invalid element selection: t is of type frozen<tuple<int, text>> is not a collection"
        );
        assert_eq!(
            err(slice_selection(&ty("int"), "m[1]")),
            "Invalid slice selection: m[1] of type int is not a collection"
        );
        let sel = element_selection(&ty("map<int, frozen<map<int, int>>>"), "mm").unwrap();
        assert_eq!(sel.key_receiver, "key(mm)");
        assert_eq!(sel.result_type, ty("frozen<map<int, int>>"));
        assert_eq!(
            element_selection(&ty("set<int>"), "s")
                .unwrap()
                .key_receiver,
            "value(s)"
        );
        assert_eq!(
            element_key(TermValue::Null, "m").unwrap_err().to_string(),
            "Invalid null value for element selection on m"
        );
        assert_eq!(
            element_key(TermValue::Unset, "m").unwrap_err().to_string(),
            "Invalid unset value for element selection on m"
        );
        assert_eq!(slice_bound(TermValue::Unset, "m").unwrap(), None);
        assert_eq!(
            slice_bound(TermValue::Null, "m").unwrap_err().to_string(),
            "Invalid null value for slice selection on m"
        );
        assert!(select_element(&ty("map<int, int>"), &[0, 0, 0, 1], &[0, 0, 0, 1]).is_err());
        assert!(select_element(&ty("list<int>"), &m, &[0, 0, 0, 1]).is_err());
    }
}
