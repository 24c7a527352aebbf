//! Arbitrary-precision integers, just enough for `varint` (and, in [`super::bigdecimal`],
//! `decimal`): the one big-number implementation of Cairn, used by Cassandra's order
//! ([`super::compare`]), the clustering encoding and the CQL layer's literals, casts,
//! aggregates and arithmetic.
//!
//! `varint` values are big-endian two's complement of any length (Java's
//! `BigInteger.toByteArray`: minimal, zero is one `0x00` byte); `decimal` values are a
//! big-endian i32 *scale* followed by the unscaled value as a varint, meaning
//! `unscaled × 10^-scale` (Java's `BigDecimal`). [`BigInt`] and
//! [`BigDecimal`](super::bigdecimal::BigDecimal) parse the same
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

    /// How many 32-bit limbs the magnitude has (a measure of the cost of operations).
    pub fn limbs(&self) -> usize {
        self.mag.len()
    }

    /// Product (schoolbook; callers bound the operand sizes).
    pub fn mul(&self, other: &BigInt) -> BigInt {
        if self.is_zero() || other.is_zero() {
            return BigInt::zero();
        }
        let mut out = vec![0u32; self.mag.len() + other.mag.len()];
        for (i, &a) in self.mag.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in other.mag.iter().enumerate() {
                let cur = u64::from(out[i + j]) + u64::from(a) * u64::from(b) + carry;
                out[i + j] = cur as u32;
                carry = cur >> 32;
            }
            let mut k = i + other.mag.len();
            while carry > 0 {
                let cur = u64::from(out[k]) + carry;
                out[k] = cur as u32;
                carry = cur >> 32;
                k += 1;
            }
        }
        BigInt {
            neg: self.neg != other.neg,
            mag: out,
        }
        .normalize()
    }

    /// Truncating division (Java's `BigInteger.divideAndRemainder`): the quotient rounded
    /// toward zero and the remainder with the dividend's sign; `None` for a zero divisor.
    pub fn divrem(&self, other: &BigInt) -> Option<(BigInt, BigInt)> {
        if other.is_zero() {
            return None;
        }
        let (q, r) = Self::divrem_mag(&self.mag, &other.mag);
        Some((
            BigInt {
                neg: self.neg != other.neg,
                mag: q,
            }
            .normalize(),
            BigInt {
                neg: self.neg,
                mag: r,
            }
            .normalize(),
        ))
    }

    /// Magnitude division (Knuth's algorithm D) of `u` by a non-zero normalised `v`.
    fn divrem_mag(u: &[u32], v: &[u32]) -> (Vec<u32>, Vec<u32>) {
        if Self::cmp_mag(u, v) == Ordering::Less {
            return (Vec::new(), u.to_vec());
        }
        let n = v.len();
        if n == 1 {
            let d = u64::from(v[0]);
            let mut q = vec![0u32; u.len()];
            let mut rem = 0u64;
            for i in (0..u.len()).rev() {
                let cur = (rem << 32) | u64::from(u[i]);
                q[i] = (cur / d) as u32;
                rem = cur % d;
            }
            return (q, vec![rem as u32]);
        }
        let m = u.len() - n;
        let shift = v[n - 1].leading_zeros();
        let shl = |x: &[u32], extra: bool| -> Vec<u32> {
            let mut out = Vec::with_capacity(x.len() + 1);
            let mut carry = 0u32;
            for &limb in x {
                out.push(if shift == 0 {
                    limb
                } else {
                    (limb << shift) | carry
                });
                carry = if shift == 0 { 0 } else { limb >> (32 - shift) };
            }
            if extra {
                out.push(carry);
            }
            out
        };
        let vn = shl(v, false);
        let mut un = shl(u, true);
        let mut q = vec![0u32; m + 1];
        let base = 1u64 << 32;
        let (v_hi, v_next) = (u64::from(vn[n - 1]), u64::from(vn[n - 2]));
        for j in (0..=m).rev() {
            let num = (u64::from(un[j + n]) << 32) | u64::from(un[j + n - 1]);
            let mut qhat = num / v_hi;
            let mut rhat = num % v_hi;
            while qhat >= base || qhat * v_next > ((rhat << 32) | u64::from(un[j + n - 2])) {
                qhat -= 1;
                rhat += v_hi;
                if rhat >= base {
                    break;
                }
            }
            // un[j..=j+n] -= qhat * vn
            let mut borrow = 0i64;
            let mut carry = 0u64;
            for i in 0..n {
                let p = qhat * u64::from(vn[i]) + carry;
                carry = p >> 32;
                let t = i64::from(un[i + j]) - borrow - (p & 0xFFFF_FFFF) as i64;
                un[i + j] = t as u32;
                borrow = i64::from(t < 0);
            }
            let t = i64::from(un[j + n]) - borrow - carry as i64;
            un[j + n] = t as u32;
            if t < 0 {
                // qhat was one too large: add the divisor back.
                qhat -= 1;
                let mut c = 0u64;
                for i in 0..n {
                    let sum = u64::from(un[i + j]) + u64::from(vn[i]) + c;
                    un[i + j] = sum as u32;
                    c = sum >> 32;
                }
                un[j + n] = un[j + n].wrapping_add(c as u32);
            }
            q[j] = qhat as u32;
        }
        let mut r = Vec::with_capacity(n);
        for i in 0..n {
            r.push(if shift == 0 {
                un[i]
            } else {
                (un[i] >> shift) | (un[i + 1] << (32 - shift))
            });
        }
        (q, r)
    }

    /// `10^k`.
    pub fn pow10(k: u32) -> BigInt {
        BigInt::from_i128(1).mul_pow10(k)
    }

    /// How many decimal digits the magnitude has (1 for zero).
    pub fn digit_count(&self) -> u64 {
        self.magnitude_digits().len() as u64
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

    /// The magnitude as big-endian bytes without leading zeros (empty for zero).
    pub fn magnitude_bytes(&self) -> Vec<u8> {
        let be: Vec<u8> = self
            .mag
            .iter()
            .rev()
            .flat_map(|l| l.to_be_bytes())
            .skip_while(|&b| b == 0)
            .collect();
        be
    }

    /// `±magnitude` from big-endian magnitude bytes (leading zeros allowed).
    pub fn from_sign_magnitude(negative: bool, magnitude: &[u8]) -> BigInt {
        let mut mag = Vec::with_capacity(magnitude.len() / 4 + 1);
        for chunk in magnitude.rchunks(4) {
            mag.push(chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)));
        }
        BigInt { neg: negative, mag }.normalize()
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
