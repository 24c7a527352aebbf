//! Durations and Cassandra's unsigned vints (`VIntCoding`): a duration's serialized form is
//! three zig-zag vints (months, days, nanoseconds), and its canonical form uses the shortest
//! vints.
//!
//! Invariant: [`decode_duration`] accepts exactly the values [`CqlType::validate`](super::CqlType::validate)
//! accepts for `duration` (all three parts of one sign, months and days in i32, nothing
//! after), and `decode_duration(&encode_duration(m, d, n)) == Ok((m, d, n))`.

use crate::error::{Error, Result};

/// Reads one unsigned vint (Cassandra `VIntCoding`: the count of leading 1-bits of the first
/// byte is the number of extra big-endian bytes). Returns the value and the rest.
pub fn read_unsigned_vint(data: &[u8]) -> Option<(u64, &[u8])> {
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
pub fn write_unsigned_vint(value: u64, out: &mut Vec<u8>) {
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
pub fn decode_duration(value: &[u8]) -> Result<(i32, i32, i64)> {
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
pub fn encode_duration(months: i32, days: i32, nanos: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(12);
    write_unsigned_vint(zigzag_encode(i64::from(months)), &mut out);
    write_unsigned_vint(zigzag_encode(i64::from(days)), &mut out);
    write_unsigned_vint(zigzag_encode(nanos), &mut out);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::model::types::CqlType;

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
}
