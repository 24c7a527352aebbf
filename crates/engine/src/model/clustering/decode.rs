//! Decoding byte-comparable bodies back into canonical serialized values.

use super::super::types::encode_duration;
use super::super::types::CqlType;
use super::format::*;
use crate::error::Result;
use crate::model::types::compare::unorder_timestamp;
use crate::model::types::unfrozen;
use crate::model::types::BigInt;

// ---------------------------------------------------------------------------------------
// Decoding.

/// Reads an encoded key, undoing the DESC inversion through `mask`.
pub(super) struct Cursor<'a> {
    pub(super) data: &'a [u8],
    pub(super) pos: usize,
    /// `0xFF` inside a DESC column's body (every byte inverted), else `0x00`.
    pub(super) mask: u8,
    /// The type being decoded, for errors.
    pub(super) ty: &'static str,
}

impl Cursor<'_> {
    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub(super) fn byte(&mut self) -> Result<u8> {
        let b = self
            .data
            .get(self.pos)
            .ok_or_else(|| invalid(self.ty, "truncated encoded component"))?;
        self.pos += 1;
        Ok(b ^ self.mask)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        for b in out.iter_mut() {
            *b = self.byte()?;
        }
        Ok(out)
    }

    fn bytes(&mut self, n: usize) -> Result<Vec<u8>> {
        if self.data.len().saturating_sub(self.pos) < n {
            return Err(invalid(self.ty, "truncated encoded component"));
        }
        (0..n).map(|_| self.byte()).collect()
    }
}

pub(super) fn decode_body(ty: &CqlType, cur: &mut Cursor<'_>) -> Result<Vec<u8>> {
    if ty.is_composite() {
        return decode_composite(ty, cur);
    }
    let name = ty.static_name();
    if let CqlType::Ascii | CqlType::Text | CqlType::Blob | CqlType::Inet = ty {
        let mut out = Vec::new();
        loop {
            match cur.byte()? {
                0 => match cur.byte()? {
                    0 => break,
                    0xFF => out.push(0),
                    _ => return Err(invalid(name, "bad escape in encoded bytes")),
                },
                b => out.push(b),
            }
        }
        ty.validate(&out)?;
        return Ok(out);
    }
    let tag = cur.byte()?;
    if tag == TAG_EMPTY {
        return Ok(Vec::new());
    }
    let value = match ty {
        CqlType::Varint | CqlType::Decimal => {
            if tag == TAG_ZERO {
                return Ok(if *ty == CqlType::Decimal {
                    vec![0, 0, 0, 0, 0]
                } else {
                    vec![0]
                });
            }
            let negative = match tag {
                TAG_NEG => true,
                TAG_POS => false,
                _ => return Err(invalid(name, "bad sign tag")),
            };
            if negative {
                cur.mask ^= 0xFF;
            }
            let value = if *ty == CqlType::Varint {
                decode_varint_mag(cur, negative)?
            } else {
                decode_decimal(cur, negative)?
            };
            if negative {
                cur.mask ^= 0xFF;
            }
            value
        }
        _ if tag != TAG_VALUE => return Err(invalid(name, "bad value tag")),
        CqlType::Tinyint
        | CqlType::Smallint
        | CqlType::Int
        | CqlType::Bigint
        | CqlType::Counter
        | CqlType::Timestamp => {
            let width = match ty {
                CqlType::Tinyint => 1,
                CqlType::Smallint => 2,
                CqlType::Int => 4,
                _ => 8,
            };
            let mut v = cur.bytes(width)?;
            if let Some(first) = v.first_mut() {
                *first ^= 0x80;
            }
            v
        }
        CqlType::Date => cur.bytes(4)?,
        CqlType::Time => cur.bytes(8)?,
        CqlType::Boolean => match cur.byte()? {
            b @ (0 | 1) => vec![b],
            _ => return Err(invalid(name, "bad encoded boolean")),
        },
        CqlType::Float => {
            let key = u32::from_be_bytes(cur.array()?);
            let bits = if key & 0x8000_0000 != 0 {
                key ^ 0x8000_0000
            } else {
                !key
            };
            bits.to_be_bytes().to_vec()
        }
        CqlType::Double => {
            let key = u64::from_be_bytes(cur.array()?);
            let bits = if key & (1 << 63) != 0 {
                key ^ (1 << 63)
            } else {
                !key
            };
            bits.to_be_bytes().to_vec()
        }
        CqlType::Uuid => {
            let version = cur.byte()?;
            let first = u64::from_be_bytes(cur.array()?);
            let msb = if version == 1 {
                unorder_timestamp(first)
            } else {
                first
            };
            if (msb >> 12) & 0xF != u64::from(version) {
                return Err(invalid(name, "encoded version does not match the UUID"));
            }
            let mut v = msb.to_be_bytes().to_vec();
            v.extend_from_slice(&cur.array::<8>()?);
            v
        }
        CqlType::Timeuuid => {
            let msb = unorder_timestamp(u64::from_be_bytes(cur.array()?));
            let mut v = msb.to_be_bytes().to_vec();
            v.extend(cur.array::<8>()?.iter().map(|b| b ^ 0x80));
            v
        }
        CqlType::Duration => {
            let months = (u32::from_be_bytes(cur.array()?) ^ 0x8000_0000) as i32;
            let days = (u32::from_be_bytes(cur.array()?) ^ 0x8000_0000) as i32;
            let nanos = (u64::from_be_bytes(cur.array()?) ^ (1 << 63)) as i64;
            encode_duration(months, days, nanos)
        }
        _ => return Err(invalid(name, "type not supported in clustering keys")),
    };
    ty.validate(&value)?;
    Ok(value)
}

pub(super) fn push_framed(v: Option<&[u8]>, out: &mut Vec<u8>) -> Result<()> {
    let len = match v {
        None => -1,
        Some(v) => i32::try_from(v.len())
            .map_err(|_| invalid("clustering key", "decoded element too long"))?,
    };
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(v.unwrap_or_default());
    Ok(())
}

/// Decodes a collection or tuple body back to its serialization (see [`encode_composite`]).
pub(super) fn decode_composite(ty: &CqlType, cur: &mut Cursor<'_>) -> Result<Vec<u8>> {
    let ty = unfrozen(ty);
    let name = ty.static_name();
    let mut body = Vec::new();
    let mut count: usize = 0;
    loop {
        let marker = cur.byte()?;
        match (ty, marker) {
            (CqlType::List(_) | CqlType::Set(_) | CqlType::Map(_, _), TAG_EMPTY) if count == 0 => {
                return Ok(Vec::new());
            }
            (_, ITEM_END) => break,
            (CqlType::Tuple(_) | CqlType::Udt(_), ITEM_NULL | ITEM_VALUE) => {
                let t = ty
                    .components()
                    .and_then(|types| types.get(count))
                    .ok_or_else(|| invalid(name, "more encoded fields than the tuple type has"))?;
                if marker == ITEM_NULL {
                    push_framed(None, &mut body)?;
                } else {
                    push_framed(Some(&decode_body(t, cur)?), &mut body)?;
                }
            }
            (CqlType::List(e) | CqlType::Set(e), ITEM_VALUE) => {
                push_framed(Some(&decode_body(e, cur)?), &mut body)?;
            }
            (CqlType::Map(k, v), ITEM_VALUE) => {
                push_framed(Some(&decode_body(k, cur)?), &mut body)?;
                push_framed(Some(&decode_body(v, cur)?), &mut body)?;
            }
            _ => return Err(invalid(name, "bad encoded item marker")),
        }
        count += 1;
    }
    let out = if ty.components().is_some() {
        body
    } else {
        let n = i32::try_from(count).map_err(|_| invalid(name, "too many encoded elements"))?;
        let mut out = Vec::with_capacity(body.len() + 4);
        out.extend_from_slice(&n.to_be_bytes());
        out.extend_from_slice(&body);
        out
    };
    // Rejects what the encoder never writes, e.g. an empty value nested where its type's
    // serializer refuses it.
    ty.validate(&out)?;
    Ok(out)
}

pub(super) fn decode_varint_mag(cur: &mut Cursor<'_>, negative: bool) -> Result<Vec<u8>> {
    let first = cur.byte()?;
    let len = if usize::from(first) <= SHORT_LEN_MAX {
        usize::from(first)
    } else {
        let n = usize::from(first) - SHORT_LEN_MAX;
        cur.bytes(n)?
            .iter()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b)) as usize
    };
    let mag = cur.bytes(len)?;
    if mag.first().is_none_or(|&b| b == 0) {
        return Err(invalid("varint", "non-canonical encoded magnitude"));
    }
    Ok(BigInt::from_sign_magnitude(negative, &mag).to_bytes())
}

/// Longest run of zeros decoding may append to bring a scale back into i32 range (a value
/// like `10` at scale `i32::MIN` is encoded as `1` at an exponent whose scale would be
/// `i32::MIN - 1`). Bounded so that a corrupt exponent cannot make decoding allocate and
/// multiply millions of digits; only a value with more trailing zeros than this *and* a
/// scale within this distance of `i32::MIN` fails to decode.
pub(super) const MAX_DECIMAL_PADDING: i64 = 4096;

pub(super) fn decode_decimal(cur: &mut Cursor<'_>, negative: bool) -> Result<Vec<u8>> {
    let exponent = (u64::from_be_bytes(cur.array()?) ^ (1 << 63)) as i64;
    let mut digits = Vec::new();
    loop {
        match cur.byte()? {
            0 => break,
            b @ 1..=100 => {
                digits.push((b - 1) / 10);
                digits.push((b - 1) % 10);
            }
            _ => return Err(invalid("decimal", "bad encoded digit pair")),
        }
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.first().is_none_or(|&d| d == 0) {
        return Err(invalid("decimal", "non-canonical encoded digits"));
    }
    // value = 0.digits × 10^exponent = digits × 10^-(len - exponent)
    let mut scale = (digits.len() as i64)
        .checked_sub(exponent)
        .ok_or_else(|| invalid("decimal", "exponent out of range"))?;
    if scale < i64::from(i32::MIN) {
        let pad = i64::from(i32::MIN) - scale;
        if pad > MAX_DECIMAL_PADDING {
            return Err(invalid("decimal", "exponent out of range"));
        }
        digits.extend(std::iter::repeat_n(0, pad as usize));
        scale = i64::from(i32::MIN);
    }
    let scale = i32::try_from(scale).map_err(|_| invalid("decimal", "scale out of range"))?;
    let mut out = scale.to_be_bytes().to_vec();
    // The digits are 0-9 and start with a non-zero one (checked above), so they parse.
    let text: String = digits.iter().map(|&d| char::from(b'0' + d)).collect();
    let magnitude = BigInt::parse(&text).unwrap_or_default();
    let unscaled = if negative { magnitude.neg() } else { magnitude };
    out.extend(unscaled.to_bytes());
    Ok(out)
}
