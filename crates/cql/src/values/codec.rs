//! The native-protocol v4 framing of collections and tuples.
//!
//! - list and set: `[i32 n]` then `n` times `[i32 len][bytes]`;
//! - map: `[i32 n]` then `n` times key and value, each `[i32 len][bytes]`;
//! - tuple: for each component `[i32 len][bytes]`, `len = -1` meaning null (no count).
//!
//! The readers return `None` on anything malformed (truncation, negative counts, null
//! collection elements, trailing bytes) and never panic.

/// Splits a serialized list or set into its elements.
pub fn split_collection(v: &[u8]) -> Option<Vec<&[u8]>> {
    let (n, mut rest) = read_i32(v)?;
    let n = usize::try_from(n).ok()?;
    let mut out = Vec::with_capacity(n.min(rest.len() / 4));
    for _ in 0..n {
        let (elem, r) = read_value(rest)?;
        out.push(elem?);
        rest = r;
    }
    rest.is_empty().then_some(out)
}

/// Splits a serialized map into its `(key, value)` entries.
pub fn split_map(v: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let (n, mut rest) = read_i32(v)?;
    let n = usize::try_from(n).ok()?;
    let mut out = Vec::with_capacity(n.min(rest.len() / 8));
    for _ in 0..n {
        let (k, r) = read_value(rest)?;
        let (val, r) = read_value(r)?;
        out.push((k?, val?));
        rest = r;
    }
    rest.is_empty().then_some(out)
}

/// Splits a serialized tuple into its components (`None` for a null component).
pub fn split_tuple(v: &[u8]) -> Option<Vec<Option<&[u8]>>> {
    let mut out = Vec::new();
    let mut rest = v;
    while !rest.is_empty() {
        let (c, r) = read_value(rest)?;
        out.push(c);
        rest = r;
    }
    Some(out)
}

fn read_i32(v: &[u8]) -> Option<(i32, &[u8])> {
    let raw: [u8; 4] = v.get(..4)?.try_into().ok()?;
    Some((i32::from_be_bytes(raw), v.get(4..)?))
}

/// One `[i32 len][bytes]` value: `Some(None)` for a negative length (null).
fn read_value(v: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    let (len, rest) = read_i32(v)?;
    match usize::try_from(len) {
        Ok(len) => Some((Some(rest.get(..len)?), rest.get(len..)?)),
        Err(_) => Some((None, rest)),
    }
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
}
