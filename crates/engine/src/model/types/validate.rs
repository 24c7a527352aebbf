//! Validation of serialized values: [`CqlType::validate`], Cassandra's
//! `TypeSerializer.validate` rules (see the parent module's docs).
//!
//! Invariant: a value that passes is one the rest of Cairn can read without further
//! checks: fixed sizes are exact, text is UTF-8, collection and tuple framing is complete
//! with nothing after it, and every element is itself valid for its type.

use super::duration::decode_duration;
use super::framing::Framed;
use super::{CqlType, NANOS_PER_DAY};
use crate::error::{Error, Result};

impl CqlType {
    /// Checks that `value` is a valid native-protocol v4 serialization of this type.
    pub fn validate(&self, value: &[u8]) -> Result<()> {
        let name = self.static_name();
        let err = |reason| Error::InvalidValue {
            type_name: name,
            reason,
        };
        let fixed = |len: usize, allow_empty: bool, reason| {
            if value.len() == len || (allow_empty && value.is_empty()) {
                Ok(())
            } else {
                Err(err(reason))
            }
        };
        match self {
            CqlType::Int => fixed(4, true, "expected 4 bytes"),
            CqlType::Float => fixed(4, true, "expected 4 bytes"),
            CqlType::Bigint | CqlType::Counter | CqlType::Timestamp | CqlType::Double => {
                fixed(8, true, "expected 8 bytes")
            }
            CqlType::Smallint => fixed(2, false, "expected 2 bytes"),
            CqlType::Tinyint => fixed(1, false, "expected 1 byte"),
            CqlType::Boolean => fixed(1, true, "expected 1 byte"),
            CqlType::Date => fixed(4, false, "expected 4 bytes"),
            CqlType::Time => {
                let raw: [u8; 8] = value.try_into().map_err(|_| err("expected 8 bytes"))?;
                let nanos = i64::from_be_bytes(raw);
                if (0..NANOS_PER_DAY).contains(&nanos) {
                    Ok(())
                } else {
                    Err(err("nanoseconds since midnight out of range"))
                }
            }
            CqlType::Uuid => fixed(16, true, "expected 16 bytes"),
            CqlType::Timeuuid => {
                fixed(16, true, "expected 16 bytes")?;
                match value.get(6) {
                    Some(b) if b & 0xF0 != 0x10 => Err(err("not a version 1 UUID")),
                    _ => Ok(()),
                }
            }
            CqlType::Inet => match value.len() {
                0 | 4 | 16 => Ok(()),
                _ => Err(err("expected 4 or 16 bytes")),
            },
            CqlType::Ascii => {
                if value.is_ascii() {
                    Ok(())
                } else {
                    Err(err("byte above 0x7F"))
                }
            }
            CqlType::Text => std::str::from_utf8(value)
                .map(|_| ())
                .map_err(|_| err("not valid UTF-8")),
            CqlType::Blob | CqlType::Varint => Ok(()),
            CqlType::Decimal => {
                // Cassandra's DecimalSerializer only rejects 1-3 bytes; a bare scale (4
                // bytes) passes, and we read its empty unscaled value as zero.
                if value.is_empty() || value.len() >= 4 {
                    Ok(())
                } else {
                    Err(err(
                        "expected a 4-byte scale followed by the unscaled varint",
                    ))
                }
            }
            CqlType::Duration => decode_duration(value).map(|_| ()),
            CqlType::List(elem) | CqlType::Set(elem) => {
                let mut r = Framed::new(value);
                let n = r.count().map_err(err)?;
                for _ in 0..n {
                    elem.validate(r.non_null().map_err(err)?)?;
                }
                r.finish().map_err(err)
            }
            CqlType::Map(k, v) => {
                let mut r = Framed::new(value);
                let n = r.count().map_err(err)?;
                for _ in 0..n {
                    k.validate(r.non_null().map_err(err)?)?;
                    v.validate(r.non_null().map_err(err)?)?;
                }
                r.finish().map_err(err)
            }
            CqlType::Tuple(_) | CqlType::Udt(_) => {
                let types = self.components().unwrap_or(&[]);
                let mut r = Framed::new(value);
                for t in types {
                    if r.at_end() {
                        break;
                    }
                    if let Some(component) = r.element().map_err(err)? {
                        t.validate(component)?;
                    }
                }
                r.finish().map_err(err)
            }
            CqlType::Frozen(inner) => inner.validate(value),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn list_of(elems: &[&[u8]]) -> Vec<u8> {
        let mut out = (elems.len() as i32).to_be_bytes().to_vec();
        for e in elems {
            out.extend_from_slice(&(e.len() as i32).to_be_bytes());
            out.extend_from_slice(e);
        }
        out
    }

    #[test]
    fn fixed_sizes_and_empty_values() {
        use CqlType::*;
        let cases: &[(CqlType, usize, bool)] = &[
            (Int, 4, true),
            (Bigint, 8, true),
            (Counter, 8, true),
            (Timestamp, 8, true),
            (Double, 8, true),
            (Float, 4, true),
            (Boolean, 1, true),
            (Uuid, 16, true),
            (Smallint, 2, false),
            (Tinyint, 1, false),
            (Date, 4, false),
        ];
        for (t, len, empty_ok) in cases {
            assert!(t.validate(&vec![0; *len]).is_ok(), "{t}");
            assert!(t.validate(&vec![0; len + 1]).is_err(), "{t}");
            assert!(t.validate(&vec![0; len - 1]).is_err() || *len == 1, "{t}");
            assert_eq!(t.validate(&[]).is_ok(), *empty_ok, "{t}");
        }
        assert!(Inet.validate(&[1, 2, 3, 4]).is_ok());
        assert!(Inet.validate(&[0; 16]).is_ok());
        assert!(Inet.validate(&[0; 5]).is_err());
        assert!(Inet.validate(&[]).is_ok());
        assert!(Varint.validate(&[]).is_ok());
        assert!(Varint.validate(&[0xFF; 40]).is_ok());
        assert!(Decimal.validate(&[]).is_ok());
        assert!(Decimal.validate(&[0, 0, 0]).is_err());
        assert!(Decimal.validate(&[0, 0, 0, 0]).is_ok());
        assert!(Decimal.validate(&[0, 0, 0, 2, 1]).is_ok());
    }

    #[test]
    fn time_range_and_uuid_versions() {
        assert!(CqlType::Time.validate(&0i64.to_be_bytes()).is_ok());
        assert!(CqlType::Time
            .validate(&(NANOS_PER_DAY - 1).to_be_bytes())
            .is_ok());
        assert!(CqlType::Time
            .validate(&NANOS_PER_DAY.to_be_bytes())
            .is_err());
        assert!(CqlType::Time.validate(&(-1i64).to_be_bytes()).is_err());
        assert!(CqlType::Time.validate(&[]).is_err());
        let mut u = [0u8; 16];
        u[6] = 0x11;
        assert!(CqlType::Timeuuid.validate(&u).is_ok());
        assert!(CqlType::Uuid.validate(&u).is_ok());
        u[6] = 0x41;
        assert!(CqlType::Timeuuid.validate(&u).is_err());
        assert!(CqlType::Uuid.validate(&u).is_ok());
        assert!(CqlType::Timeuuid.validate(&[]).is_ok());
    }

    #[test]
    fn text_and_ascii() {
        assert!(CqlType::Ascii.validate(b"hello\x7f").is_ok());
        assert!(CqlType::Ascii.validate(b"caf\xc3\xa9").is_err());
        assert!(CqlType::Text.validate("café".as_bytes()).is_ok());
        assert!(CqlType::Text.validate(b"\xff").is_err());
        assert!(CqlType::Text.validate(b"").is_ok());
        assert!(CqlType::Blob.validate(b"\xff\x00").is_ok());
    }

    #[test]
    fn collections_and_tuples() {
        let one = 1i32.to_be_bytes();
        let list_t = CqlType::List(Box::new(CqlType::Int));
        assert!(list_t.validate(&list_of(&[&one, &one])).is_ok());
        assert!(list_t.validate(&list_of(&[])).is_ok());
        assert!(list_t.validate(&list_of(&[b"abc"])).is_err());
        assert!(list_t.validate(&[]).is_err());
        let mut extra = list_of(&[&one]);
        extra.push(0);
        assert!(list_t.validate(&extra).is_err());
        let mut null_elem = 1i32.to_be_bytes().to_vec();
        null_elem.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(list_t.validate(&null_elem).is_err());
        let mut truncated = list_of(&[&one]);
        truncated.pop();
        assert!(list_t.validate(&truncated).is_err());

        let map_t = CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Int));
        let mut m = 1i32.to_be_bytes().to_vec();
        m.extend_from_slice(&2i32.to_be_bytes());
        m.extend_from_slice(b"ab");
        m.extend_from_slice(&4i32.to_be_bytes());
        m.extend_from_slice(&one);
        assert!(map_t.validate(&m).is_ok());
        assert!(CqlType::Frozen(Box::new(map_t.clone()))
            .validate(&m)
            .is_ok());
        m.truncate(m.len() - 1);
        assert!(map_t.validate(&m).is_err());

        let tuple_t = CqlType::Tuple(vec![CqlType::Int, CqlType::Text]);
        let mut t = 4i32.to_be_bytes().to_vec();
        t.extend_from_slice(&one);
        t.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(tuple_t.validate(&t).is_ok());
        assert!(
            tuple_t.validate(&t[..8]).is_ok(),
            "fewer components are allowed"
        );
        assert!(tuple_t.validate(&[]).is_ok());
        t.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(tuple_t.validate(&t).is_err(), "too many components");
        let nested = CqlType::List(Box::new(CqlType::Frozen(Box::new(tuple_t))));
        assert!(nested.validate(&list_of(&[&t[..12]])).is_ok());
        assert!(nested.validate(&list_of(&[&t])).is_err());
    }

    #[test]
    fn user_types_are_framed_and_ordered_as_tuples_of_their_fields() {
        use crate::model::types::{compare, UserType};
        use std::cmp::Ordering;
        let udt = CqlType::Udt(Box::new(UserType {
            keyspace: "ks".into(),
            name: "p".into(),
            field_names: vec!["x".into(), "y".into()],
            field_types: vec![CqlType::Int, CqlType::Text],
        }));
        let frozen = CqlType::Frozen(Box::new(udt.clone()));
        let value = |x: i32, y: Option<&[u8]>| {
            let mut v = 4i32.to_be_bytes().to_vec();
            v.extend_from_slice(&x.to_be_bytes());
            match y {
                Some(y) => {
                    v.extend_from_slice(&(y.len() as i32).to_be_bytes());
                    v.extend_from_slice(y);
                }
                None => v.extend_from_slice(&(-1i32).to_be_bytes()),
            }
            v
        };
        let (a, b) = (value(1, Some(b"b")), value(1, None));
        assert!(frozen.validate(&a).is_ok() && frozen.validate(&b).is_ok());
        // Written before `ALTER TYPE … ADD y`: one field only.
        assert!(frozen.validate(&a[..8]).is_ok());
        let mut long = a.clone();
        long.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(
            frozen.validate(&long).is_err(),
            "more fields than the type has"
        );
        let bad_field = value(1, Some(&[0xff]));
        assert!(frozen.validate(&bad_field).is_err());
        // A null field first, then a shorter value first, as TupleType compares.
        assert_eq!(compare(&frozen, &b, &a), Ordering::Less);
        assert_eq!(compare(&frozen, &a[..8], &b), Ordering::Less);
        assert_eq!(compare(&frozen, &value(2, None), &a), Ordering::Greater);
        // ALTER TYPE reaches the type wherever it is nested.
        let renamed = UserType {
            field_names: vec!["x".into(), "z".into()],
            ..udt.as_udt().cloned().unwrap()
        };
        let nested = CqlType::List(Box::new(frozen.clone()));
        let new = nested.with_udt_replaced(&renamed).unwrap();
        assert_eq!(new.as_udt(), None);
        assert!(matches!(&new, CqlType::List(f) if f.as_udt() == Some(&renamed)));
        assert_eq!(CqlType::Int.with_udt_replaced(&renamed), None);
    }
}
