//! The native-protocol v4 framing of collections and tuples: the one reader and writer of
//! it in Cairn (validation, Cassandra's order, the clustering encoding and the CQL layer
//! all read through [`Framed`]).
//!
//! - list and set: `[i32 n]` then `n` times `[i32 len][bytes]`;
//! - map: `[i32 n]` then `n` times key and value, each `[i32 len][bytes]`;
//! - tuple: for each component `[i32 len][bytes]`, `len = -1` meaning null (no count).
//!
//! Invariants: readers never panic and never read past the value; a malformed value
//! (truncation, a negative count, a null collection element, bytes after the end) is an
//! error ([`FramingResult`], with the reason [`CqlType::validate`] reports) or `None`.

use super::CqlType;

/// An error in the framing of a collection or tuple: the reason, as validation reports it.
pub type FramingResult<T> = std::result::Result<T, &'static str>;

/// A reader of the framing of one serialized collection or tuple.
pub struct Framed<'a> {
    rest: &'a [u8],
}

impl<'a> Framed<'a> {
    /// A reader at the start of `value`.
    pub fn new(value: &'a [u8]) -> Self {
        Framed { rest: value }
    }

    fn i32(&mut self) -> FramingResult<i32> {
        let (head, rest) = self
            .rest
            .split_first_chunk::<4>()
            .ok_or("truncated length or count")?;
        self.rest = rest;
        Ok(i32::from_be_bytes(*head))
    }

    /// A collection's element count.
    pub fn count(&mut self) -> FramingResult<usize> {
        usize::try_from(self.i32()?).map_err(|_| "negative element count")
    }

    /// One `[i32 len][bytes]` element; `None` for a negative length (null).
    pub fn element(&mut self) -> FramingResult<Option<&'a [u8]>> {
        let Ok(len) = usize::try_from(self.i32()?) else {
            return Ok(None);
        };
        if self.rest.len() < len {
            return Err("truncated element");
        }
        let (body, rest) = self.rest.split_at(len);
        self.rest = rest;
        Ok(Some(body))
    }

    /// One element of a collection, where null is not allowed.
    pub fn non_null(&mut self) -> FramingResult<&'a [u8]> {
        self.element()?.ok_or("null element in a collection")
    }

    /// Whether the whole value has been read.
    pub fn at_end(&self) -> bool {
        self.rest.is_empty()
    }

    /// Checks that nothing follows the value.
    pub fn finish(&self) -> FramingResult<()> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err("bytes after the end of the value")
        }
    }

    /// Bytes left to read (a bound on how many elements can follow).
    fn remaining(&self) -> usize {
        self.rest.len()
    }
}

/// Splits a serialized list or set into its elements.
pub fn split_collection(v: &[u8]) -> Option<Vec<&[u8]>> {
    let mut r = Framed::new(v);
    let n = r.count().ok()?;
    let mut out = Vec::with_capacity(n.min(r.remaining() / 4));
    for _ in 0..n {
        out.push(r.non_null().ok()?);
    }
    r.finish().ok()?;
    Some(out)
}

/// Splits a serialized map into its `(key, value)` entries.
pub fn split_map(v: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut r = Framed::new(v);
    let n = r.count().ok()?;
    let mut out = Vec::with_capacity(n.min(r.remaining() / 8));
    for _ in 0..n {
        let k = r.non_null().ok()?;
        out.push((k, r.non_null().ok()?));
    }
    r.finish().ok()?;
    Some(out)
}

/// Splits a serialized tuple into its components (`None` for a null component), however
/// many there are.
pub fn split_tuple(v: &[u8]) -> Option<Vec<Option<&[u8]>>> {
    let mut r = Framed::new(v);
    let mut out = Vec::new();
    while !r.at_end() {
        out.push(r.element().ok()?);
    }
    Some(out)
}

/// Items of a collection or tuple, each with its type; `None` for a null tuple field.
pub type Items<'t, 'a> = Vec<(&'t CqlType, Option<&'a [u8]>)>;

/// The items of a non-empty serialized collection or tuple of type `ty` (frozen or not), each
/// with its type: list and set elements, map keys and values alternately, tuple fields
/// (`None` when null). Checks the framing only, not the items themselves.
pub fn split_items<'t, 'a>(ty: &'t CqlType, v: &'a [u8]) -> FramingResult<Items<'t, 'a>> {
    let mut r = Framed::new(v);
    let mut items = Vec::new();
    match ty {
        CqlType::Frozen(inner) => return split_items(inner, v),
        CqlType::List(e) | CqlType::Set(e) => {
            for _ in 0..r.count()? {
                items.push((&**e, Some(r.non_null()?)));
            }
        }
        CqlType::Map(k, val) => {
            for _ in 0..r.count()? {
                items.push((&**k, Some(r.non_null()?)));
                items.push((&**val, Some(r.non_null()?)));
            }
        }
        CqlType::Tuple(_) | CqlType::Udt(_) => {
            for t in ty.components().unwrap_or(&[]) {
                if r.at_end() {
                    break;
                }
                items.push((t, r.element()?));
            }
        }
        _ => return Err("not a collection or tuple"),
    }
    r.finish()?;
    Ok(items)
}

fn push_value(out: &mut Vec<u8>, v: &[u8]) {
    out.extend_from_slice(&(v.len() as i32).to_be_bytes());
    out.extend_from_slice(v);
}

/// Serializes a list or set from its elements.
pub fn build_collection<T: AsRef<[u8]>>(elems: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + elems.iter().map(|e| 4 + e.as_ref().len()).sum::<usize>());
    out.extend_from_slice(&(elems.len() as i32).to_be_bytes());
    for e in elems {
        push_value(&mut out, e.as_ref());
    }
    out
}

/// Serializes a map from its entries.
pub fn build_map<K: AsRef<[u8]>, V: AsRef<[u8]>>(entries: &[(K, V)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for (k, v) in entries {
        push_value(&mut out, k.as_ref());
        push_value(&mut out, v.as_ref());
    }
    out
}

/// Serializes a tuple from its components (`None` = null).
pub fn build_tuple<T: AsRef<[u8]>>(components: &[Option<T>]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in components {
        match c {
            Some(v) => push_value(&mut out, v.as_ref()),
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let l = build_collection(&[&b"a"[..], b"bc"]);
        assert_eq!(
            l,
            vec![0, 0, 0, 2, 0, 0, 0, 1, b'a', 0, 0, 0, 2, b'b', b'c']
        );
        assert_eq!(split_collection(&l).unwrap(), vec![&b"a"[..], b"bc"]);
        let m = build_map(&[(&b"k"[..], &b"v"[..])]);
        assert_eq!(split_map(&m).unwrap(), vec![(&b"k"[..], &b"v"[..])]);
        let t = build_tuple(&[Some(&b"x"[..]), None]);
        assert_eq!(t, vec![0, 0, 0, 1, b'x', 0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(split_tuple(&t).unwrap(), vec![Some(&b"x"[..]), None]);
        assert!(split_collection(&l[..l.len() - 1]).is_none());
        assert!(split_collection(&[0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF]).is_none());
        assert!(split_collection(&[0xFF, 0xFF, 0xFF, 0xFF]).is_none());
        assert!(split_map(&[0, 0, 0, 1, 0, 0, 0, 0]).is_none());
        assert_eq!(split_tuple(&[]).unwrap(), Vec::<Option<&[u8]>>::new());
    }

    #[test]
    fn items_carry_their_types() {
        let ty = CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Int));
        let m = build_map(&[(&b"k"[..], &[0, 0, 0, 1][..])]);
        let items = split_items(&ty, &m).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0], (&CqlType::Text, Some(&b"k"[..])));
        assert_eq!(items[1].0, &CqlType::Int);
        assert_eq!(
            split_items(&CqlType::Int, &m),
            Err("not a collection or tuple")
        );
    }
}
