//! Cassandra 5.0's collection functions (its `CollectionFcts`): `map_keys(m)` (a set of the
//! keys), `map_values(m)` (a list of the values), `collection_count(c)` (an `int`), and
//! `collection_min`, `collection_max`, `collection_sum`, `collection_avg` of a set or list —
//! the aggregates `min`, `max`, `sum`, `avg` run over the elements ([`super::aggregate`]), so
//! they answer as those do over rows (an `int` sum wraps, an `int` average is an `int`).
//!
//! Each takes any collection of its kind: the signature is made from the argument's type
//! ([`signature`]), as Cassandra's function factories make one per argument type. A null or
//! empty collection gives null.

use super::aggregate;
use super::error::{ValueError, ValueResult};
use super::functions::Signature;
use super::number::is_numeric;
use bytes::Bytes;
use cairn_engine::model::types::framing::{build_collection, split_collection, split_map};
use cairn_engine::model::types::{unfrozen, CqlType};

/// Whether `name` is one of the collection functions.
pub(crate) fn is_collection_fn(name: &str) -> bool {
    matches!(
        name,
        "map_keys"
            | "map_values"
            | "collection_count"
            | "collection_min"
            | "collection_max"
            | "collection_sum"
            | "collection_avg"
    )
}

/// What the function's parameter is called in Cassandra's texts (`system.map_keys(map)`).
pub(crate) fn parameter(name: &str) -> &'static str {
    match name {
        "map_keys" | "map_values" => "map",
        "collection_count" => "collection",
        "collection_min" | "collection_max" => "set or list",
        _ => "numeric set or list",
    }
}

/// The signature for an argument of type `arg` (`arg_text`: how the argument is written, for
/// the refusal), or Cassandra's refusal when the type does not fit.
pub(crate) fn signature(name: &str, arg: &CqlType, arg_text: &str) -> ValueResult<Signature> {
    let elements = match unfrozen(arg) {
        CqlType::List(e) | CqlType::Set(e) => Some(e.as_ref().clone()),
        _ => None,
    };
    let ret = match (name, unfrozen(arg)) {
        ("map_keys", CqlType::Map(k, _)) => Some(CqlType::Set(Box::new(k.as_ref().clone()))),
        ("map_values", CqlType::Map(_, v)) => Some(CqlType::List(Box::new(v.as_ref().clone()))),
        ("collection_count", CqlType::Map(..) | CqlType::List(_) | CqlType::Set(_)) => {
            Some(CqlType::Int)
        }
        ("collection_min" | "collection_max", _) => elements,
        ("collection_sum" | "collection_avg", _) => elements.filter(is_numeric),
        _ => None,
    };
    let Some(ret) = ret else {
        let wanted = match name {
            "map_keys" | "map_values" => "map",
            "collection_count" => "collection",
            "collection_min" | "collection_max" => "set or list",
            _ => "numeric set/list",
        };
        return Err(ValueError::invalid(format!(
            "Function system.{name} requires a {wanted} argument, but found argument {arg_text} of type {}",
            arg.name()
        )));
    };
    Ok(Signature::new(std::slice::from_ref(arg), ret))
}

/// Runs collection function `name` (resolved to `sig`) on a serialized collection.
pub(crate) fn apply(name: &str, sig: &Signature, v: &[u8]) -> ValueResult<Option<Bytes>> {
    let arg = sig.args.first().unwrap_or(&sig.ret);
    let malformed = || ValueError::marshal(format!("invalid {} value", arg.name()));
    if v.is_empty() {
        return Ok(None);
    }
    let out = match name {
        "map_keys" | "map_values" => {
            let entries = split_map(v).ok_or_else(malformed)?;
            if entries.is_empty() {
                return Ok(None);
            }
            let picked: Vec<&[u8]> = entries
                .iter()
                .map(|(k, val)| if name == "map_keys" { *k } else { *val })
                .collect();
            Some(Bytes::from(build_collection(&picked)))
        }
        "collection_count" => {
            let count = if matches!(unfrozen(arg), CqlType::Map(..)) {
                split_map(v).ok_or_else(malformed)?.len()
            } else {
                split_collection(v).ok_or_else(malformed)?.len()
            };
            if count == 0 {
                return Ok(None);
            }
            let count = i32::try_from(count).map_err(|_| malformed())?;
            Some(Bytes::copy_from_slice(&count.to_be_bytes()))
        }
        _ => {
            let elements = split_collection(v).ok_or_else(malformed)?;
            if elements.is_empty() {
                return Ok(None);
            }
            let ty = &sig.ret;
            match name {
                "collection_min" => aggregate::min(ty, elements),
                "collection_max" => aggregate::max(ty, elements),
                "collection_sum" => Some(aggregate::sum(ty, elements)?),
                _ => Some(aggregate::avg(ty, elements)?),
            }
        }
    };
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use cairn_engine::model::types::framing::build_map;

    fn int(v: i32) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }

    /// Answers checked against Cassandra 5.0.9.
    #[test]
    fn functions_over_elements() {
        let list = CqlType::List(Box::new(CqlType::Int));
        let run = |name: &str, ty: &CqlType, v: &[u8]| {
            let sig = signature(name, ty, "c").unwrap();
            apply(name, &sig, v).unwrap().map(|b| b.to_vec())
        };
        let l = build_collection(&[int(4), int(5), int(4)]);
        assert_eq!(run("collection_count", &list, &l), Some(int(3)));
        assert_eq!(run("collection_min", &list, &l), Some(int(4)));
        assert_eq!(run("collection_max", &list, &l), Some(int(5)));
        assert_eq!(run("collection_sum", &list, &l), Some(int(13)));
        assert_eq!(run("collection_avg", &list, &l), Some(int(4)));
        let wraps = build_collection(&[int(i32::MAX), int(1)]);
        assert_eq!(run("collection_sum", &list, &wraps), Some(int(i32::MIN)));
        assert_eq!(
            run("collection_avg", &list, &wraps),
            Some(int(1_073_741_824))
        );
        let map = CqlType::Map(Box::new(CqlType::Int), Box::new(CqlType::Text));
        let m = build_map(&[(int(1), b"a".to_vec()), (int(2), b"b".to_vec())]);
        assert_eq!(
            run("map_keys", &map, &m),
            Some(build_collection(&[int(1), int(2)]))
        );
        assert_eq!(
            run("map_values", &map, &m),
            Some(build_collection(&[b"a", b"b"]))
        );
        assert_eq!(run("collection_count", &map, &m), Some(int(2)));
        assert_eq!(
            run("collection_sum", &list, &build_collection::<Vec<u8>>(&[])),
            None
        );
        assert_eq!(run("map_keys", &map, &[]), None);
    }

    #[test]
    fn refusals_name_the_argument() {
        let map = CqlType::Map(Box::new(CqlType::Int), Box::new(CqlType::Text));
        let set = CqlType::Set(Box::new(CqlType::Text));
        let err = |name: &str, ty: &CqlType| signature(name, ty, "m").unwrap_err().message();
        assert_eq!(
            err("collection_min", &map),
            "Function system.collection_min requires a set or list argument, but found argument m of type map<int, text>"
        );
        assert_eq!(
            err("collection_sum", &set),
            "Function system.collection_sum requires a numeric set/list argument, but found argument m of type set<text>"
        );
        assert_eq!(
            err("map_keys", &set),
            "Function system.map_keys requires a map argument, but found argument m of type set<text>"
        );
        assert_eq!(
            err("collection_count", &CqlType::Int),
            "Function system.collection_count requires a collection argument, but found argument m of type int"
        );
    }
}
