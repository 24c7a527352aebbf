//! Arbitrary-precision integers and decimals, just enough for `varint` and `decimal`.
//!
//! `varint` values are big-endian two's complement of any length (Java's
//! `BigInteger.toByteArray`: minimal, zero is one `0x00` byte); `decimal` values are a
//! big-endian i32 *scale* followed by the unscaled value as a varint, meaning
//! `unscaled × 10^-scale` (Java's `BigDecimal`). [`BigInt`] and [`BigDecimal`] parse the same
//! texts as Java's constructors, print the same `toString` forms, and do the arithmetic the
//! aggregates and casts need (add, subtract, multiply/divide by small numbers, compare).

use std::cmp::Ordering;

/// A signed integer of any size: sign and little-endian base-2^32 magnitude without
/// high zero limbs (zero has no limbs and is never negative).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BigInt {
    neg: bool,
    mag: Vec<u32>,
}

const BASE10_CHUNK: u32 = 1_000_000_000;

impl BigInt {
    /// Zero.
    pub fn zero() -> Self {
        BigInt::default()
    }

    fn normalize(mut self) -> Self {
        while self.mag.last() == Some(&0) {
            self.mag.pop();
        }
        if self.mag.is_empty() {
            self.neg = false;
        }
        self
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    /// True for values below zero.
    pub fn is_negative(&self) -> bool {
        self.neg
    }

    /// From a machine integer.
    pub fn from_i128(v: i128) -> Self {
        let neg = v < 0;
        let mut m = v.unsigned_abs();
        let mut mag = Vec::new();
        while m > 0 {
            mag.push(m as u32);
            m >>= 32;
        }
        BigInt { neg, mag }.normalize()
    }

    /// The value if it fits an i128.
    pub fn to_i128(&self) -> Option<i128> {
        if self.mag.len() > 4 {
            return None;
        }
        let mut m: u128 = 0;
        for &limb in self.mag.iter().rev() {
            m = (m << 32) | u128::from(limb);
        }
        if self.neg {
            if m <= i128::MAX as u128 + 1 {
                Some((m as i128).wrapping_neg())
            } else {
                None
            }
        } else {
            i128::try_from(m).ok()
        }
    }

    /// The low 64 bits of the two's complement, as Java's `BigInteger.longValue()`.
    pub fn low_i64(&self) -> i64 {
        let lo = u64::from(self.mag.first().copied().unwrap_or(0))
            | (u64::from(self.mag.get(1).copied().unwrap_or(0)) << 32);
        if self.neg {
            (lo as i64).wrapping_neg()
        } else {
            lo as i64
        }
    }

    /// An approximation as `f64` (exact for values below 2^53).
    pub fn to_f64(&self) -> f64 {
        let mut v = 0f64;
        for &limb in self.mag.iter().rev() {
            v = v * 4_294_967_296.0 + f64::from(limb);
        }
        if self.neg {
            -v
        } else {
            v
        }
    }

    /// Parses Java `new BigInteger(text)`: an optional sign and at least one decimal digit.
    pub fn parse(text: &str) -> Option<Self> {
        let (neg, digits) = match text.as_bytes().first()? {
            b'-' => (true, text.get(1..)?),
            b'+' => (false, text.get(1..)?),
            _ => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut out = BigInt::zero();
        for b in digits.bytes() {
            out.mul_add_small(10, u32::from(b - b'0'));
        }
        out.neg = neg;
        Some(out.normalize())
    }

    /// `self = self * m + a` on the magnitude.
    fn mul_add_small(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.mag {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.mag.push(carry as u32);
        }
    }

    /// Multiplies by a small factor.
    pub fn mul_small(&self, m: u32) -> Self {
        let mut out = self.clone();
        out.mul_add_small(m, 0);
        out.normalize()
    }

    /// Multiplies by `10^k`.
    pub fn mul_pow10(&self, mut k: u32) -> Self {
        let mut out = self.clone();
        while k >= 9 {
            out.mul_add_small(BASE10_CHUNK, 0);
            k -= 9;
        }
        out.mul_add_small(10u32.pow(k), 0);
        out.normalize()
    }

    /// Truncating division by a small divisor (Java's `divide`): quotient rounded toward
    /// zero and the remainder's magnitude.
    pub fn divrem_small(&self, d: u32) -> (BigInt, u32) {
        if d == 0 {
            return (BigInt::zero(), 0);
        }
        let mut rem: u64 = 0;
        let mut mag = self.mag.clone();
        for limb in mag.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / u64::from(d)) as u32;
            rem = cur % u64::from(d);
        }
        (BigInt { neg: self.neg, mag }.normalize(), rem as u32)
    }

    /// Negation.
    pub fn neg(&self) -> Self {
        BigInt {
            neg: !self.neg,
            mag: self.mag.clone(),
        }
        .normalize()
    }

    fn cmp_mag(a: &[u32], b: &[u32]) -> Ordering {
        a.len()
            .cmp(&b.len())
            .then_with(|| a.iter().rev().cmp(b.iter().rev()))
    }

    fn add_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
        let mut carry = 0u64;
        for i in 0..a.len().max(b.len()) {
            let v = u64::from(a.get(i).copied().unwrap_or(0))
                + u64::from(b.get(i).copied().unwrap_or(0))
                + carry;
            out.push(v as u32);
            carry = v >> 32;
        }
        if carry > 0 {
            out.push(carry as u32);
        }
        out
    }

    /// `a - b` for `|a| >= |b|`.
    fn sub_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
        let mut out = Vec::with_capacity(a.len());
        let mut borrow = 0i64;
        for (i, &x) in a.iter().enumerate() {
            let mut v = i64::from(x) - i64::from(b.get(i).copied().unwrap_or(0)) - borrow;
            borrow = 0;
            if v < 0 {
                v += 1 << 32;
                borrow = 1;
            }
            out.push(v as u32);
        }
        out
    }

    /// Sum.
    pub fn add(&self, other: &BigInt) -> BigInt {
        if self.neg == other.neg {
            return BigInt {
                neg: self.neg,
                mag: Self::add_mag(&self.mag, &other.mag),
            }
            .normalize();
        }
        match Self::cmp_mag(&self.mag, &other.mag) {
            Ordering::Equal => BigInt::zero(),
            Ordering::Greater => BigInt {
                neg: self.neg,
                mag: Self::sub_mag(&self.mag, &other.mag),
            }
            .normalize(),
            Ordering::Less => BigInt {
                neg: other.neg,
                mag: Self::sub_mag(&other.mag, &self.mag),
            }
            .normalize(),
        }
    }

    /// Difference.
    pub fn sub(&self, other: &BigInt) -> BigInt {
        self.add(&other.neg())
    }

    /// Decimal digits of the magnitude (`"0"` for zero).
    pub fn magnitude_digits(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let mut chunks = Vec::new();
        let mut cur = BigInt {
            neg: false,
            mag: self.mag.clone(),
        };
        while !cur.is_zero() {
            let (q, r) = cur.divrem_small(BASE10_CHUNK);
            chunks.push(r);
            cur = q;
        }
        let mut s = String::new();
        for (i, c) in chunks.iter().rev().enumerate() {
            if i == 0 {
                s.push_str(&c.to_string());
            } else {
                s.push_str(&format!("{c:09}"));
            }
        }
        s
    }

    /// Java's `BigInteger.toByteArray`: minimal big-endian two's complement.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Magnitude as big-endian bytes.
        let mut be: Vec<u8> = self
            .mag
            .iter()
            .rev()
            .flat_map(|l| l.to_be_bytes())
            .collect();
        if self.neg {
            // Two's complement: invert and add one.
            for b in be.iter_mut() {
                *b = !*b;
            }
            for b in be.iter_mut().rev() {
                let (v, overflow) = b.overflowing_add(1);
                *b = v;
                if !overflow {
                    break;
                }
            }
            be.insert(0, 0xFF);
        } else {
            be.insert(0, 0x00);
        }
        // Drop redundant sign bytes.
        let mut start = 0;
        while start + 1 < be.len() {
            let (b0, b1) = (be[start], be[start + 1]);
            if (b0 == 0x00 && b1 & 0x80 == 0) || (b0 == 0xFF && b1 & 0x80 != 0) {
                start += 1;
            } else {
                break;
            }
        }
        be.split_off(start)
    }

    /// Reads big-endian two's complement bytes (empty is zero).
    pub fn from_bytes(bytes: &[u8]) -> BigInt {
        let Some(&first) = bytes.first() else {
            return BigInt::zero();
        };
        let neg = first & 0x80 != 0;
        let mut mag_be: Vec<u8> = bytes.to_vec();
        if neg {
            // Magnitude = invert and add one.
            for b in mag_be.iter_mut() {
                *b = !*b;
            }
            for b in mag_be.iter_mut().rev() {
                let (v, overflow) = b.overflowing_add(1);
                *b = v;
                if !overflow {
                    break;
                }
            }
        }
        let mut mag = Vec::with_capacity(mag_be.len() / 4 + 1);
        for chunk in mag_be.rchunks(4) {
            let mut limb = 0u32;
            for &b in chunk {
                limb = (limb << 8) | u32::from(b);
            }
            mag.push(limb);
        }
        // `-(2^(8n-1))` inverts to itself: its magnitude is right after the add.
        BigInt { neg, mag }.normalize()
    }

    /// Java's `BigInteger.toString()`.
    pub fn to_java_string(&self) -> String {
        if self.neg {
            format!("-{}", self.magnitude_digits())
        } else {
            self.magnitude_digits()
        }
    }
}

impl PartialOrd for BigInt {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigInt {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => Self::cmp_mag(&self.mag, &other.mag),
            (true, true) => Self::cmp_mag(&other.mag, &self.mag),
        }
    }
}

/// `unscaled × 10^-scale`, as Java's `BigDecimal` (scale kept, so `1.50 != 1.5` as values
/// but they compare equal).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BigDecimal {
    /// The unscaled value.
    pub unscaled: BigInt,
    /// The scale (digits after the point; negative for trailing zeros before it).
    pub scale: i32,
}

impl BigDecimal {
    /// Parses Java `new BigDecimal(text)`: `[sign] digits [. digits] [e|E [sign] digits]`
    /// where at least one digit comes before or after the point.
    pub fn parse(text: &str) -> Option<Self> {
        let (mantissa, exp) = match text.find(['e', 'E']) {
            Some(i) => {
                let e = text.get(i + 1..)?;
                let (negative, digits) = match e.as_bytes().first() {
                    Some(b'+') => (false, e.get(1..)?),
                    Some(b'-') => (true, e.get(1..)?),
                    _ => (false, e),
                };
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let magnitude = digits.parse::<i64>().ok()?;
                (
                    text.get(..i)?,
                    if negative { -magnitude } else { magnitude },
                )
            }
            None => (text, 0),
        };
        let (sign, body) = match mantissa.as_bytes().first()? {
            b'-' => ("-", mantissa.get(1..)?),
            b'+' => ("", mantissa.get(1..)?),
            _ => ("", mantissa),
        };
        let (int_part, frac_part) = match body.find('.') {
            Some(i) => (body.get(..i)?, body.get(i + 1..)?),
            None => (body, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let digits = format!("{sign}{int_part}{frac_part}");
        let unscaled = BigInt::parse(&digits)?;
        let scale = i64::try_from(frac_part.len()).ok()? - exp;
        let scale = i32::try_from(scale).ok()?;
        Some(BigDecimal { unscaled, scale })
    }

    /// From the protocol form (`[i32 scale][varint]`); `None` if shorter than 4 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let scale = i32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
        Some(BigDecimal {
            unscaled: BigInt::from_bytes(bytes.get(4..).unwrap_or_default()),
            scale,
        })
    }

    /// The protocol form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = self.scale.to_be_bytes().to_vec();
        out.extend(self.unscaled.to_bytes());
        out
    }

    /// From an integer (scale 0).
    pub fn from_int(v: BigInt) -> Self {
        BigDecimal {
            unscaled: v,
            scale: 0,
        }
    }

    /// The same value at a larger scale.
    fn rescaled(&self, scale: i32) -> BigInt {
        let diff = i64::from(scale) - i64::from(self.scale);
        if diff <= 0 {
            return self.unscaled.clone();
        }
        self.unscaled
            .mul_pow10(u32::try_from(diff).unwrap_or(u32::MAX))
    }

    /// Exact sum (scale = the larger scale, as Java).
    pub fn add(&self, other: &BigDecimal) -> BigDecimal {
        let scale = self.scale.max(other.scale);
        BigDecimal {
            unscaled: self.rescaled(scale).add(&other.rescaled(scale)),
            scale,
        }
    }

    /// Exact difference.
    pub fn sub(&self, other: &BigDecimal) -> BigDecimal {
        self.add(&BigDecimal {
            unscaled: other.unscaled.neg(),
            scale: other.scale,
        })
    }

    /// Numeric comparison (ignores the scale: `1.50 == 1.5`).
    pub fn cmp_value(&self, other: &BigDecimal) -> Ordering {
        let scale = self.scale.max(other.scale);
        self.rescaled(scale).cmp(&other.rescaled(scale))
    }

    /// Java's `divide(BigDecimal.valueOf(d), RoundingMode.HALF_EVEN)`: the quotient at this
    /// value's scale, rounded half to even.
    pub fn div_small_half_even(&self, d: u32) -> BigDecimal {
        let (q, r) = self.unscaled.divrem_small(d);
        let twice = u64::from(r) * 2;
        let round_up = match twice.cmp(&u64::from(d)) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => q.divrem_small(2).1 == 1,
        };
        let q = if round_up {
            let one = BigInt::from_i128(if self.unscaled.is_negative() { -1 } else { 1 });
            q.add(&one)
        } else {
            q
        };
        BigDecimal {
            unscaled: q,
            scale: self.scale,
        }
    }

    /// The integer part (truncated toward zero), as Java's `toBigInteger`.
    pub fn to_bigint(&self) -> BigInt {
        if self.scale <= 0 {
            return self
                .unscaled
                .mul_pow10(u32::try_from(-i64::from(self.scale)).unwrap_or(u32::MAX));
        }
        let mut v = self.unscaled.clone();
        let mut k = self.scale;
        while k > 0 && !v.is_zero() {
            let step = k.min(9);
            v = v.divrem_small(10u32.pow(step as u32)).0;
            k -= step;
        }
        v
    }

    /// Plain notation without exponent (Java's `toPlainString`).
    pub fn to_plain_string(&self) -> String {
        let digits = self.unscaled.magnitude_digits();
        let sign = if self.unscaled.is_negative() { "-" } else { "" };
        if self.scale <= 0 {
            let zeros = if self.unscaled.is_zero() {
                0
            } else {
                (-i64::from(self.scale)) as usize
            };
            return format!("{sign}{digits}{}", "0".repeat(zeros));
        }
        let scale = self.scale as usize;
        if digits.len() > scale {
            let (i, f) = digits.split_at(digits.len() - scale);
            format!("{sign}{i}.{f}")
        } else {
            format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
        }
    }

    /// Java's `BigDecimal.toString()`: plain unless the scale is negative or the adjusted
    /// exponent is below -6, then scientific (`1.5E+10`, `1E-7`).
    pub fn to_java_string(&self) -> String {
        let digits = self.unscaled.magnitude_digits();
        let sign = if self.unscaled.is_negative() { "-" } else { "" };
        let adjusted = -i64::from(self.scale) + (digits.len() as i64 - 1);
        if self.scale >= 0 && adjusted >= -6 {
            return self.to_plain_string();
        }
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let exp_sign = if adjusted >= 0 { "+" } else { "" };
        format!("{sign}{mantissa}E{exp_sign}{adjusted}")
    }

    /// An approximation as `f64` (Java's `doubleValue`).
    pub fn to_f64(&self) -> f64 {
        format!(
            "{}{}e{}",
            if self.unscaled.is_negative() { "-" } else { "" },
            self.unscaled.magnitude_digits(),
            -i64::from(self.scale)
        )
        .parse()
        .unwrap_or(f64::NAN)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn varint_bytes() {
        for (v, bytes) in [
            (0i128, vec![0x00]),
            (1, vec![0x01]),
            (127, vec![0x7F]),
            (128, vec![0x00, 0x80]),
            (255, vec![0x00, 0xFF]),
            (256, vec![0x01, 0x00]),
            (-1, vec![0xFF]),
            (-128, vec![0x80]),
            (-129, vec![0xFF, 0x7F]),
            (-256, vec![0xFF, 0x00]),
            (i64::MIN as i128, vec![0x80, 0, 0, 0, 0, 0, 0, 0]),
        ] {
            let b = BigInt::from_i128(v);
            assert_eq!(b.to_bytes(), bytes, "{v}");
            assert_eq!(BigInt::from_bytes(&bytes), b, "{v}");
            assert_eq!(b.to_java_string(), v.to_string());
            assert_eq!(BigInt::parse(&v.to_string()).unwrap(), b);
        }
        // Non-minimal encodings read the same.
        assert_eq!(BigInt::from_bytes(&[0xFF, 0xFF]).to_i128(), Some(-1));
        assert_eq!(BigInt::from_bytes(&[0, 0, 1]).to_i128(), Some(1));
        assert_eq!(BigInt::from_bytes(&[]), BigInt::zero());
        let big = "123456789012345678901234567890123456789012345678901234567890";
        assert_eq!(BigInt::parse(big).unwrap().to_java_string(), big);
        assert_eq!(BigInt::parse("+5").unwrap().to_i128(), Some(5));
        for bad in ["", "-", "+", "1.0", "1e3", " 1", "--1"] {
            assert!(BigInt::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn decimal_parse_and_print() {
        for (text, unscaled, scale, java) in [
            ("1.50", 150, 2, "1.50"),
            ("-0.001", -1, 3, "-0.001"),
            ("1e10", 1, -10, "1E+10"),
            ("1.5E-7", 15, 8, "1.5E-7"),
            ("123", 123, 0, "123"),
            (".5", 5, 1, "0.5"),
            ("5.", 5, 0, "5"),
            ("0.000001", 1, 6, "0.000001"),
            ("0.0000001", 1, 7, "1E-7"),
        ] {
            let d = BigDecimal::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(d.unscaled.to_i128(), Some(unscaled), "{text}");
            assert_eq!(d.scale, scale, "{text}");
            assert_eq!(d.to_java_string(), java, "{text}");
            assert_eq!(BigDecimal::from_bytes(&d.to_bytes()).unwrap(), d);
        }
        for bad in ["", ".", "e5", "1e", "1.2.3", "abc", "NaN", "1e+-5"] {
            assert!(BigDecimal::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(
            BigDecimal::parse("1.50").unwrap().to_bytes(),
            vec![0, 0, 0, 2, 0x00, 0x96]
        );
        assert_eq!(BigDecimal::parse("1e3").unwrap().to_plain_string(), "1000");
    }

    #[test]
    fn decimal_arithmetic() {
        let a = BigDecimal::parse("1.5").unwrap();
        let b = BigDecimal::parse("2.25").unwrap();
        assert_eq!(a.add(&b).to_java_string(), "3.75");
        assert_eq!(a.sub(&b).to_java_string(), "-0.75");
        assert_eq!(
            BigDecimal::parse("1.50")
                .unwrap()
                .cmp_value(&BigDecimal::parse("1.5").unwrap()),
            Ordering::Equal
        );
        // HALF_EVEN at the dividend's scale.
        let d = |s: &str| BigDecimal::parse(s).unwrap();
        assert_eq!(d("2.5").div_small_half_even(2).to_java_string(), "1.2");
        assert_eq!(d("3.5").div_small_half_even(2).to_java_string(), "1.8");
        assert_eq!(d("-2.5").div_small_half_even(2).to_java_string(), "-1.2");
        assert_eq!(d("10").div_small_half_even(3).to_java_string(), "3");
        assert_eq!(d("-7.9").to_bigint().to_i128(), Some(-7));
        assert_eq!(d("1e3").to_bigint().to_i128(), Some(1000));
        assert_eq!(d("1.25").to_f64(), 1.25);
    }

    proptest! {
        #[test]
        fn bigint_matches_i128(a in any::<i64>(), b in any::<i64>(), d in 1u32..1000) {
            let (x, y) = (BigInt::from_i128(a.into()), BigInt::from_i128(b.into()));
            prop_assert_eq!(x.add(&y).to_i128(), Some(i128::from(a) + i128::from(b)));
            prop_assert_eq!(x.sub(&y).to_i128(), Some(i128::from(a) - i128::from(b)));
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            prop_assert_eq!(x.divrem_small(d).0.to_i128(), Some(i128::from(a) / i128::from(d)));
            prop_assert_eq!(x.low_i64(), a);
            prop_assert_eq!(BigInt::from_bytes(&x.to_bytes()), x.clone());
            prop_assert_eq!(x.to_java_string(), a.to_string());
        }

        #[test]
        fn bigint_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let v = BigInt::from_bytes(&bytes);
            prop_assert_eq!(BigInt::from_bytes(&v.to_bytes()), v.clone());
            prop_assert_eq!(BigInt::parse(&v.to_java_string()), Some(v));
        }
    }
}
