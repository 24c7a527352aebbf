//! CQL data types: names, parsing, and validation of values in their native-protocol (v4)
//! serialized form.
//!
//! Every value the engine stores is kept as the exact bytes the CQL native protocol uses for
//! it; this module is the single place that knows what those bytes may look like. The rules
//! follow Cassandra's `TypeSerializer.validate` implementations:
//!
//! - An *empty* value (zero bytes, distinct from null) is accepted for every type whose
//!   Cassandra serializer accepts it: everything except `smallint`, `tinyint`, `date`, `time`,
//!   `duration` and the collections.
//! - Collections use the v4 layout: i32 element count, then each element as an i32 length
//!   and its bytes (maps alternate key and value). Null elements are not allowed. Tuples are
//!   a sequence of i32-length-prefixed components, `-1` meaning null, with at most as many
//!   components as the type has (Cassandra accepts a shorter tuple).
//! - Nothing may follow a complete value; Cassandra ignores bytes after a duration's three
//!   vints, we reject them, so that every accepted value has one meaning.

use crate::error::{Error, Result};

/// A CQL data type. `varchar` is [`CqlType::Text`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CqlType {
    Ascii,
    Bigint,
    Blob,
    Boolean,
    Counter,
    Date,
    Decimal,
    Double,
    Duration,
    Float,
    Inet,
    Int,
    Smallint,
    Text,
    Time,
    Timestamp,
    Timeuuid,
    Tinyint,
    Uuid,
    Varint,
    List(Box<CqlType>),
    Set(Box<CqlType>),
    Map(Box<CqlType>, Box<CqlType>),
    Tuple(Vec<CqlType>),
    Frozen(Box<CqlType>),
}

/// Nanoseconds in a day: `time` values lie in `0..NANOS_PER_DAY`.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

const NATIVE_NAMES: &[(&str, CqlType)] = &[
    ("ascii", CqlType::Ascii),
    ("bigint", CqlType::Bigint),
    ("blob", CqlType::Blob),
    ("boolean", CqlType::Boolean),
    ("counter", CqlType::Counter),
    ("date", CqlType::Date),
    ("decimal", CqlType::Decimal),
    ("double", CqlType::Double),
    ("duration", CqlType::Duration),
    ("float", CqlType::Float),
    ("inet", CqlType::Inet),
    ("int", CqlType::Int),
    ("smallint", CqlType::Smallint),
    ("text", CqlType::Text),
    ("varchar", CqlType::Text),
    ("time", CqlType::Time),
    ("timestamp", CqlType::Timestamp),
    ("timeuuid", CqlType::Timeuuid),
    ("tinyint", CqlType::Tinyint),
    ("uuid", CqlType::Uuid),
    ("varint", CqlType::Varint),
];

impl CqlType {
    /// The CQL name, e.g. `int`, `frozen<list<int>>`, `map<text, int>`, `tuple<int, text>`.
    pub fn name(&self) -> String {
        match self {
            CqlType::List(e) => format!("list<{}>", e.name()),
            CqlType::Set(e) => format!("set<{}>", e.name()),
            CqlType::Map(k, v) => format!("map<{}, {}>", k.name(), v.name()),
            CqlType::Tuple(ts) => {
                let inner: Vec<String> = ts.iter().map(CqlType::name).collect();
                format!("tuple<{}>", inner.join(", "))
            }
            CqlType::Frozen(t) => format!("frozen<{}>", t.name()),
            native => native.static_name().to_string(),
        }
    }

    /// Every native (non-composite) type, in name order.
    pub fn natives() -> impl Iterator<Item = &'static CqlType> {
        NATIVE_NAMES.iter().map(|(_, t)| t)
    }

    /// A static name for error messages: the full name of a native type, the kind
    /// (`list`, `set`, `map`, `tuple`, `frozen`) of a composite one.
    pub fn static_name(&self) -> &'static str {
        match self {
            CqlType::Ascii => "ascii",
            CqlType::Bigint => "bigint",
            CqlType::Blob => "blob",
            CqlType::Boolean => "boolean",
            CqlType::Counter => "counter",
            CqlType::Date => "date",
            CqlType::Decimal => "decimal",
            CqlType::Double => "double",
            CqlType::Duration => "duration",
            CqlType::Float => "float",
            CqlType::Inet => "inet",
            CqlType::Int => "int",
            CqlType::Smallint => "smallint",
            CqlType::Text => "text",
            CqlType::Time => "time",
            CqlType::Timestamp => "timestamp",
            CqlType::Timeuuid => "timeuuid",
            CqlType::Tinyint => "tinyint",
            CqlType::Uuid => "uuid",
            CqlType::Varint => "varint",
            CqlType::List(_) => "list",
            CqlType::Set(_) => "set",
            CqlType::Map(_, _) => "map",
            CqlType::Tuple(_) => "tuple",
            CqlType::Frozen(_) => "frozen",
        }
    }

    /// Parses a CQL type name (case-insensitive, whitespace tolerant).
    pub fn parse(s: &str) -> Option<CqlType> {
        let mut p = Parser {
            s: s.as_bytes(),
            pos: 0,
        };
        let t = p.parse_type()?;
        p.skip_ws();
        (p.pos == p.s.len()).then_some(t)
    }

    /// True for collections and tuples, frozen or not.
    pub fn is_composite(&self) -> bool {
        matches!(
            self,
            CqlType::List(_)
                | CqlType::Set(_)
                | CqlType::Map(_, _)
                | CqlType::Tuple(_)
                | CqlType::Frozen(_)
        )
    }

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
                let mut r = Reader::new(value, name);
                let n = r.count()?;
                for _ in 0..n {
                    elem.validate(r.element(false)?.unwrap_or_default())?;
                }
                r.finish()
            }
            CqlType::Map(k, v) => {
                let mut r = Reader::new(value, name);
                let n = r.count()?;
                for _ in 0..n {
                    k.validate(r.element(false)?.unwrap_or_default())?;
                    v.validate(r.element(false)?.unwrap_or_default())?;
                }
                r.finish()
            }
            CqlType::Tuple(types) => {
                let mut r = Reader::new(value, name);
                for t in types {
                    if r.at_end() {
                        break;
                    }
                    if let Some(component) = r.element(true)? {
                        t.validate(component)?;
                    }
                }
                r.finish()
            }
            CqlType::Frozen(inner) => inner.validate(value),
        }
    }
}

impl std::fmt::Display for CqlType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Reads the i32-framed layout of collections and tuples.
struct Reader<'a> {
    rest: &'a [u8],
    name: &'static str,
}

impl<'a> Reader<'a> {
    fn new(value: &'a [u8], name: &'static str) -> Self {
        Reader { rest: value, name }
    }

    fn err(&self, reason: &'static str) -> Error {
        Error::InvalidValue {
            type_name: self.name,
            reason,
        }
    }

    fn i32(&mut self) -> Result<i32> {
        let raw: [u8; 4] = self
            .rest
            .get(..4)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| self.err("truncated length or count"))?;
        self.rest = self.rest.get(4..).unwrap_or_default();
        Ok(i32::from_be_bytes(raw))
    }

    fn count(&mut self) -> Result<usize> {
        let n = self.i32()?;
        usize::try_from(n).map_err(|_| self.err("negative element count"))
    }

    /// One length-prefixed element; `None` for a null (negative length) when allowed.
    fn element(&mut self, allow_null: bool) -> Result<Option<&'a [u8]>> {
        let len = self.i32()?;
        let Ok(len) = usize::try_from(len) else {
            return if allow_null {
                Ok(None)
            } else {
                Err(self.err("null element in a collection"))
            };
        };
        let body = self
            .rest
            .get(..len)
            .ok_or_else(|| self.err("truncated element"))?;
        self.rest = self.rest.get(len..).unwrap_or_default();
        Ok(Some(body))
    }

    fn at_end(&self) -> bool {
        self.rest.is_empty()
    }

    fn finish(&self) -> Result<()> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(self.err("bytes after the end of the value"))
        }
    }
}

/// Reads one unsigned vint (Cassandra `VIntCoding`: the count of leading 1-bits of the first
/// byte is the number of extra big-endian bytes). Returns the value and the rest.
pub(crate) fn read_unsigned_vint(data: &[u8]) -> Option<(u64, &[u8])> {
    let (&first, rest) = data.split_first()?;
    let extra = first.leading_ones() as usize;
    let mut value = u64::from(first) & (0xFFu64 >> extra);
    let body = rest.get(..extra)?;
    for &b in body {
        value = (value << 8) | u64::from(b);
    }
    Some((value, rest.get(extra..)?))
}

/// Appends one unsigned vint in its shortest form.
pub(crate) fn write_unsigned_vint(value: u64, out: &mut Vec<u8>) {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    let size = bits.div_ceil(7).min(9);
    if size == 1 {
        out.push(value as u8);
        return;
    }
    let extra = size - 1;
    let be = value.to_be_bytes();
    let start = out.len();
    if size == 9 {
        out.push(0);
        out.extend_from_slice(&be);
    } else {
        out.extend_from_slice(be.get(8 - size..).unwrap_or_default());
    }
    if let Some(first) = out.get_mut(start) {
        *first |= !(0xFFu32 >> extra) as u8;
    }
}

fn zigzag_decode(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

fn zigzag_encode(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// Decodes and validates a duration: `(months, days, nanoseconds)`.
pub(crate) fn decode_duration(value: &[u8]) -> Result<(i32, i32, i64)> {
    let err = |reason| Error::InvalidValue {
        type_name: "duration",
        reason,
    };
    let (m, rest) = read_unsigned_vint(value).ok_or_else(|| err("truncated months"))?;
    let (d, rest) = read_unsigned_vint(rest).ok_or_else(|| err("truncated days"))?;
    let (n, rest) = read_unsigned_vint(rest).ok_or_else(|| err("truncated nanoseconds"))?;
    if !rest.is_empty() {
        return Err(err("bytes after the nanoseconds"));
    }
    let months = i32::try_from(zigzag_decode(m)).map_err(|_| err("months not a 32-bit integer"))?;
    let days = i32::try_from(zigzag_decode(d)).map_err(|_| err("days not a 32-bit integer"))?;
    let nanos = zigzag_decode(n);
    let all_non_neg = months >= 0 && days >= 0 && nanos >= 0;
    let all_non_pos = months <= 0 && days <= 0 && nanos <= 0;
    if !(all_non_neg || all_non_pos) {
        return Err(err("months, days and nanoseconds must have the same sign"));
    }
    Ok((months, days, nanos))
}

/// Serializes a duration in the canonical (shortest-vint) form.
pub(crate) fn encode_duration(months: i32, days: i32, nanos: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(12);
    write_unsigned_vint(zigzag_encode(i64::from(months)), &mut out);
    write_unsigned_vint(zigzag_encode(i64::from(days)), &mut out);
    write_unsigned_vint(zigzag_encode(nanos), &mut out);
    out
}

/// Recursive-descent parser for type names.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.pos += 1;
        }
        let word = self.s.get(start..self.pos)?;
        if word.is_empty() {
            return None;
        }
        Some(String::from_utf8_lossy(word).to_ascii_lowercase())
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        self.skip_ws();
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn parse_type(&mut self) -> Option<CqlType> {
        let word = self.ident()?;
        match word.as_str() {
            "list" | "set" | "frozen" => {
                self.expect(b'<')?;
                let inner = Box::new(self.parse_type()?);
                self.expect(b'>')?;
                Some(match word.as_str() {
                    "list" => CqlType::List(inner),
                    "set" => CqlType::Set(inner),
                    _ => CqlType::Frozen(inner),
                })
            }
            "map" => {
                self.expect(b'<')?;
                let k = self.parse_type()?;
                self.expect(b',')?;
                let v = self.parse_type()?;
                self.expect(b'>')?;
                Some(CqlType::Map(Box::new(k), Box::new(v)))
            }
            "tuple" => {
                self.expect(b'<')?;
                let mut items = vec![self.parse_type()?];
                while self.peek() == Some(b',') {
                    self.expect(b',')?;
                    items.push(self.parse_type()?);
                }
                self.expect(b'>')?;
                Some(CqlType::Tuple(items))
            }
            other => NATIVE_NAMES
                .iter()
                .find(|(n, _)| *n == other)
                .map(|(_, t)| t.clone()),
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
    fn names_round_trip() {
        for name in [
            "int",
            "text",
            "frozen<list<int>>",
            "map<text, int>",
            "tuple<int, text>",
            "set<frozen<tuple<uuid, timeuuid, varint>>>",
            "map<frozen<map<int, blob>>, list<decimal>>",
        ] {
            let t = CqlType::parse(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(t.name(), name);
        }
        for (_, t) in NATIVE_NAMES {
            assert_eq!(CqlType::parse(&t.name()), Some(t.clone()));
        }
    }

    #[test]
    fn parse_is_lenient_about_case_and_space() {
        assert_eq!(CqlType::parse(" VARCHAR "), Some(CqlType::Text));
        assert_eq!(
            CqlType::parse("Map < Text ,Frozen<List<INT>> >"),
            Some(CqlType::Map(
                Box::new(CqlType::Text),
                Box::new(CqlType::Frozen(Box::new(CqlType::List(Box::new(
                    CqlType::Int
                )))))
            ))
        );
        for bad in [
            "",
            "integer",
            "list<int",
            "map<int>",
            "list<int>>",
            "tuple<>",
            "int int",
        ] {
            assert_eq!(CqlType::parse(bad), None, "{bad:?}");
        }
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
    fn duration_vints() {
        for (m, d, n) in [
            (0, 0, 0),
            (1, 2, 3),
            (-1, -2, -3),
            (i32::MAX, i32::MAX, i64::MAX),
            (i32::MIN, i32::MIN, i64::MIN),
            (0, 0, 1_000_000_000_000),
            (12, 0, 0),
        ] {
            let enc = encode_duration(m, d, n);
            assert_eq!(decode_duration(&enc).unwrap(), (m, d, n));
            assert!(CqlType::Duration.validate(&enc).is_ok());
        }
        // Known encodings: zigzag(1) = 2, zigzag(-1) = 1; 1 month 2 days 3 ns.
        assert_eq!(encode_duration(1, 2, 3), vec![2, 4, 6]);
        assert_eq!(encode_duration(-1, 0, 0), vec![1, 0, 0]);
        // 64 needs 8 bits after zigzag (128): two bytes 0x80 0x80.
        assert_eq!(encode_duration(0, 64, 0), vec![0, 0x80, 0x80, 0]);
        assert!(CqlType::Duration
            .validate(&encode_duration(1, -1, 0))
            .is_err());
        assert!(CqlType::Duration.validate(&[]).is_err());
        assert!(CqlType::Duration.validate(&[0, 0]).is_err());
        assert!(CqlType::Duration.validate(&[0, 0, 0, 0]).is_err());
        // Months out of i32 range.
        let mut big = Vec::new();
        write_unsigned_vint(zigzag_encode(i64::from(i32::MAX) + 1), &mut big);
        big.extend_from_slice(&[0, 0]);
        assert!(CqlType::Duration.validate(&big).is_err());
    }

    #[test]
    fn vint_round_trip() {
        let mut rng_vals: Vec<u64> = (0..64).map(|s| 1u64 << s).collect();
        rng_vals.extend((0..64).map(|s| (1u64 << s).wrapping_sub(1)));
        rng_vals.push(u64::MAX);
        for v in rng_vals {
            let mut out = Vec::new();
            write_unsigned_vint(v, &mut out);
            let (back, rest) = read_unsigned_vint(&out).unwrap();
            assert_eq!(back, v);
            assert!(rest.is_empty());
            assert!(out.len() <= 9);
        }
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
}
