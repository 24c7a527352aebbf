//! Protocol-level CQL type descriptions (`[option]` ids of spec §4.2.5.2) and column specs.
//!
//! These are the wire's view of types, deliberately independent of the `cql` crate's type
//! system: the executor converts its types into [`ColumnType`] when it builds metadata.
//!
//! Invariants:
//! * Encoding depends on the negotiated version the way Cassandra's does: types newer
//!   than a version travel as `Custom` with the Cassandra marshal class name (`date`,
//!   `time`, `smallint`, `tinyint` in v3; `duration` in v3 and v4), so a driver always
//!   receives an option id it knows.
//! * Decoding (used by tests and client-side tools) bounds nesting depth, so hostile
//!   input cannot overflow the stack.

use super::codec::{write_short, write_string, DecodeError, DecodeResult, Reader};

/// A column or bind-marker type, as carried in `[option]` form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// 0x0000: a custom type, by its fully qualified Java class name.
    Custom(String),
    Ascii,
    Bigint,
    Blob,
    Boolean,
    Counter,
    Decimal,
    Double,
    Float,
    Int,
    Timestamp,
    Uuid,
    Varchar,
    Varint,
    Timeuuid,
    Inet,
    Date,
    Time,
    Smallint,
    Tinyint,
    /// 0x0015 in v5; `Custom(DurationType)` in v3/v4.
    Duration,
    List(Box<ColumnType>),
    Map(Box<ColumnType>, Box<ColumnType>),
    Set(Box<ColumnType>),
    Udt {
        keyspace: String,
        name: String,
        fields: Vec<(String, ColumnType)>,
    },
    Tuple(Vec<ColumnType>),
}

/// Deepest type nesting accepted when decoding.
const MAX_TYPE_DEPTH: usize = 32;

fn marshal(class: &str) -> String {
    format!("org.apache.cassandra.db.marshal.{class}")
}

impl ColumnType {
    /// The `[option]` id this type is written with in `version`.
    pub fn option_id(&self, version: u8) -> u16 {
        use ColumnType::*;
        match self {
            Custom(_) => 0x0000,
            Ascii => 0x0001,
            Bigint => 0x0002,
            Blob => 0x0003,
            Boolean => 0x0004,
            Counter => 0x0005,
            Decimal => 0x0006,
            Double => 0x0007,
            Float => 0x0008,
            Int => 0x0009,
            Timestamp => 0x000B,
            Uuid => 0x000C,
            Varchar => 0x000D,
            Varint => 0x000E,
            Timeuuid => 0x000F,
            Inet => 0x0010,
            Date | Time | Smallint | Tinyint if version < 4 => 0x0000,
            Date => 0x0011,
            Time => 0x0012,
            Smallint => 0x0013,
            Tinyint => 0x0014,
            Duration if version < 5 => 0x0000,
            Duration => 0x0015,
            List(_) => 0x0020,
            Map(_, _) => 0x0021,
            Set(_) => 0x0022,
            Udt { .. } => 0x0030,
            Tuple(_) => 0x0031,
        }
    }

    /// Appends the `[option]` encoding for `version`.
    pub fn encode(&self, version: u8, out: &mut Vec<u8>) {
        use ColumnType::*;
        write_short(out, self.option_id(version));
        match self {
            Custom(class) => write_string(out, class),
            Date if version < 4 => write_string(out, &marshal("SimpleDateType")),
            Time if version < 4 => write_string(out, &marshal("TimeType")),
            Smallint if version < 4 => write_string(out, &marshal("ShortType")),
            Tinyint if version < 4 => write_string(out, &marshal("ByteType")),
            Duration if version < 5 => write_string(out, &marshal("DurationType")),
            List(t) | Set(t) => t.encode(version, out),
            Map(k, v) => {
                k.encode(version, out);
                v.encode(version, out);
            }
            Udt {
                keyspace,
                name,
                fields,
            } => {
                write_string(out, keyspace);
                write_string(out, name);
                let n = fields.len().min(u16::MAX as usize);
                write_short(out, n as u16);
                for (fname, ftype) in &fields[..n] {
                    write_string(out, fname);
                    ftype.encode(version, out);
                }
            }
            Tuple(types) => {
                let n = types.len().min(u16::MAX as usize);
                write_short(out, n as u16);
                for t in &types[..n] {
                    t.encode(version, out);
                }
            }
            _ => {}
        }
    }

    /// Reads an `[option]` type.
    pub fn decode(r: &mut Reader) -> DecodeResult<Self> {
        Self::decode_depth(r, 0)
    }

    fn decode_depth(r: &mut Reader, depth: usize) -> DecodeResult<Self> {
        use ColumnType::*;
        if depth > MAX_TYPE_DEPTH {
            return Err(DecodeError::invalid("type", "nested too deeply"));
        }
        let d = depth + 1;
        let id = r.read_short()?;
        Ok(match id {
            0x0000 => Custom(r.read_string()?),
            0x0001 => Ascii,
            0x0002 => Bigint,
            0x0003 => Blob,
            0x0004 => Boolean,
            0x0005 => Counter,
            0x0006 => Decimal,
            0x0007 => Double,
            0x0008 => Float,
            0x0009 => Int,
            0x000B => Timestamp,
            0x000C => Uuid,
            0x000D => Varchar,
            0x000E => Varint,
            0x000F => Timeuuid,
            0x0010 => Inet,
            0x0011 => Date,
            0x0012 => Time,
            0x0013 => Smallint,
            0x0014 => Tinyint,
            0x0015 => Duration,
            0x0020 => List(Box::new(Self::decode_depth(r, d)?)),
            0x0021 => Map(
                Box::new(Self::decode_depth(r, d)?),
                Box::new(Self::decode_depth(r, d)?),
            ),
            0x0022 => Set(Box::new(Self::decode_depth(r, d)?)),
            0x0030 => {
                let keyspace = r.read_string()?;
                let name = r.read_string()?;
                let n = r.read_short()? as usize;
                r.ensure_count(n, 4, "udt fields")?;
                let mut fields = Vec::with_capacity(n);
                for _ in 0..n {
                    fields.push((r.read_string()?, Self::decode_depth(r, d)?));
                }
                Udt {
                    keyspace,
                    name,
                    fields,
                }
            }
            0x0031 => {
                let n = r.read_short()? as usize;
                r.ensure_count(n, 2, "tuple types")?;
                let mut types = Vec::with_capacity(n);
                for _ in 0..n {
                    types.push(Self::decode_depth(r, d)?);
                }
                Tuple(types)
            }
            other => {
                return Err(DecodeError::invalid(
                    "type",
                    format!("unknown option id 0x{other:04x}"),
                ))
            }
        })
    }
}

/// A keyspace and table name pair.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableSpec {
    pub keyspace: String,
    pub table: String,
}

impl TableSpec {
    pub fn new(keyspace: impl Into<String>, table: impl Into<String>) -> Self {
        TableSpec {
            keyspace: keyspace.into(),
            table: table.into(),
        }
    }
}

/// One result column or bind marker.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ColumnSpec {
    /// Keyspace and table; not written when the metadata has a global table spec.
    pub table: TableSpec,
    pub name: String,
    pub typ: ColumnType,
}

impl ColumnSpec {
    pub fn new(table: TableSpec, name: impl Into<String>, typ: ColumnType) -> Self {
        ColumnSpec {
            table,
            name: name.into(),
            typ,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn enc(t: &ColumnType, v: u8) -> Vec<u8> {
        let mut out = Vec::new();
        t.encode(v, &mut out);
        out
    }

    #[test]
    fn golden_option_encodings() {
        assert_eq!(enc(&ColumnType::Int, 4), [0x00, 0x09]);
        assert_eq!(enc(&ColumnType::Varchar, 4), [0x00, 0x0D]);
        assert_eq!(
            enc(
                &ColumnType::Map(Box::new(ColumnType::Varchar), Box::new(ColumnType::Bigint)),
                4
            ),
            [0x00, 0x21, 0x00, 0x0D, 0x00, 0x02]
        );
        assert_eq!(
            enc(
                &ColumnType::Tuple(vec![ColumnType::Int, ColumnType::Blob]),
                4
            ),
            [0x00, 0x31, 0x00, 0x02, 0x00, 0x09, 0x00, 0x03]
        );
        let udt = ColumnType::Udt {
            keyspace: "k".into(),
            name: "u".into(),
            fields: vec![("a".into(), ColumnType::Set(Box::new(ColumnType::Uuid)))],
        };
        assert_eq!(
            enc(&udt, 4),
            [0x00, 0x30, 0, 1, b'k', 0, 1, b'u', 0, 1, 0, 1, b'a', 0x00, 0x22, 0x00, 0x0C]
        );
    }

    #[test]
    fn version_dependent_custom_fallbacks() {
        let mut r = Reader::from_slice(&enc(&ColumnType::Smallint, 3));
        assert_eq!(
            ColumnType::decode(&mut r).unwrap(),
            ColumnType::Custom("org.apache.cassandra.db.marshal.ShortType".into())
        );
        assert_eq!(enc(&ColumnType::Smallint, 4), [0x00, 0x13]);
        let mut r = Reader::from_slice(&enc(&ColumnType::Duration, 4));
        assert_eq!(
            ColumnType::decode(&mut r).unwrap(),
            ColumnType::Custom("org.apache.cassandra.db.marshal.DurationType".into())
        );
    }

    #[test]
    fn round_trip_all_types() {
        use ColumnType::*;
        let all = vec![
            Custom("x.Y".into()),
            Ascii,
            Bigint,
            Blob,
            Boolean,
            Counter,
            Decimal,
            Double,
            Float,
            Int,
            Timestamp,
            Uuid,
            Varchar,
            Varint,
            Timeuuid,
            Inet,
            Date,
            Time,
            Smallint,
            Tinyint,
            List(Box::new(Int)),
            Set(Box::new(Varchar)),
            Map(Box::new(Uuid), Box::new(List(Box::new(Blob)))),
            Tuple(vec![Int, Tuple(vec![])]),
            Udt {
                keyspace: "ks".into(),
                name: "addr".into(),
                fields: vec![("street".into(), Varchar), ("zip".into(), Int)],
            },
        ];
        for t in all {
            let bytes = enc(&t, 4);
            let mut r = Reader::from_slice(&bytes);
            assert_eq!(ColumnType::decode(&mut r).unwrap(), t);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut bytes = Vec::new();
        for _ in 0..10_000 {
            bytes.extend_from_slice(&[0x00, 0x20]);
        }
        bytes.extend_from_slice(&[0x00, 0x09]);
        assert!(ColumnType::decode(&mut Reader::from_slice(&bytes)).is_err());
        assert!(ColumnType::decode(&mut Reader::from_slice(&[0x00, 0x0A])).is_err());
    }
}
