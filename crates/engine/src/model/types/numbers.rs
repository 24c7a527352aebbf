//! Arbitrary-precision helpers for `varint` and `decimal` values (magnitudes are unsigned
//! big-endian byte strings): sign and magnitude, decimal digits, a decimal's normal form.
//! Cassandra's order of them is [`super::compare`]'s; the clustering encoding uses these.

// ---------------------------------------------------------------------------------------
// Arbitrary-precision helpers (magnitudes are unsigned big-endian byte strings).

/// Splits a non-empty two's-complement integer into (negative, magnitude without leading
/// zero bytes; empty for zero).
pub(crate) fn varint_to_sign_mag(v: &[u8]) -> (bool, Vec<u8>) {
    let negative = v.first().is_some_and(|&f| f & 0x80 != 0);
    let mut mag = v.to_vec();
    if negative {
        negate_in_place(&mut mag);
    }
    let skip = mag.iter().take_while(|&&b| b == 0).count();
    mag.drain(..skip);
    (negative, mag)
}

/// Two's-complement negation within the same width.
pub(crate) fn negate_in_place(v: &mut [u8]) {
    let mut carry = true;
    for b in v.iter_mut().rev() {
        let (x, c) = (!*b).overflowing_add(u8::from(carry));
        *b = x;
        carry = c;
    }
}

/// Shortest two's-complement encoding of `±mag` (Java's `BigInteger.toByteArray`).
pub(crate) fn sign_mag_to_varint(negative: bool, mag: &[u8]) -> Vec<u8> {
    let skip = mag.iter().take_while(|&&b| b == 0).count();
    let mag = mag.get(skip..).unwrap_or_default();
    if mag.is_empty() {
        return vec![0];
    }
    let mut out = Vec::with_capacity(mag.len() + 1);
    if negative {
        out.extend_from_slice(mag);
        negate_in_place(&mut out);
        if out.first().is_some_and(|&f| f & 0x80 == 0) {
            out.insert(0, 0xFF);
        }
    } else {
        if mag.first().is_some_and(|&f| f & 0x80 != 0) {
            out.push(0);
        }
        out.extend_from_slice(mag);
    }
    out
}

/// Decimal digits (0-9, most significant first) of a magnitude; empty for zero.
pub(crate) fn mag_to_digits(mag: &[u8]) -> Vec<u8> {
    // Base 2^32 limbs, most significant first, repeatedly divided by 10^9.
    let mut limbs: Vec<u32> = Vec::with_capacity(mag.len() / 4 + 1);
    let head = mag.len() % 4;
    if head > 0 {
        limbs.push(
            mag.iter()
                .take(head)
                .fold(0u32, |a, &b| (a << 8) | u32::from(b)),
        );
    }
    for chunk in mag.get(head..).unwrap_or_default().chunks_exact(4) {
        limbs.push(chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)));
    }
    let mut groups: Vec<u32> = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem: u64 = 0;
        for l in limbs.iter_mut() {
            let cur = (rem << 32) | u64::from(*l);
            *l = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        groups.push(rem as u32);
        let lead = limbs.iter().take_while(|&&l| l == 0).count();
        limbs.drain(..lead);
    }
    let mut digits = Vec::with_capacity(groups.len() * 9);
    for g in groups.iter().rev() {
        let mut buf = [0u8; 9];
        let mut x = *g;
        for d in buf.iter_mut().rev() {
            *d = (x % 10) as u8;
            x /= 10;
        }
        digits.extend_from_slice(&buf);
    }
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    digits
}

/// Magnitude (no leading zero bytes) of a decimal digit string.
pub(crate) fn digits_to_mag(digits: &[u8]) -> Vec<u8> {
    // Base 2^32 limbs, least significant first; multiply-add 9 digits at a time.
    let mut limbs: Vec<u32> = Vec::new();
    for chunk in digits.chunks(9) {
        let mul = 10u64.pow(chunk.len() as u32);
        let add = chunk.iter().fold(0u64, |a, &d| a * 10 + u64::from(d));
        let mut carry = add;
        for l in limbs.iter_mut() {
            let cur = u64::from(*l) * mul + carry;
            *l = cur as u32;
            carry = cur >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    let mut out: Vec<u8> = limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
    let lead = out.iter().take_while(|&&b| b == 0).count();
    out.drain(..lead);
    out
}

/// A decimal split into sign, significant digits (no leading or trailing zeros) and the
/// exponent `e` such that the value is `0.digits × 10^e`. `None` digits means zero.
pub(crate) struct NormDecimal {
    pub(crate) negative: bool,
    pub(crate) digits: Vec<u8>,
    pub(crate) exponent: i64,
}

pub(crate) fn normalize_decimal(v: &[u8]) -> Option<NormDecimal> {
    let scale = i32::from_be_bytes(v.get(..4)?.try_into().ok()?);
    let unscaled = v.get(4..)?;
    if unscaled.is_empty() {
        return Some(NormDecimal {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        });
    }
    let (negative, mag) = varint_to_sign_mag(unscaled);
    let mut digits = mag_to_digits(&mag);
    let trailing = digits.iter().rev().take_while(|&&d| d == 0).count();
    digits.truncate(digits.len() - trailing);
    let exponent = if digits.is_empty() {
        0
    } else {
        // value = digits × 10^(trailing - scale) = 0.digits × 10^(len + trailing - scale)
        digits.len() as i64 + trailing as i64 - i64::from(scale)
    };
    Some(NormDecimal {
        negative: negative && !digits.is_empty(),
        digits,
        exponent,
    })
}
