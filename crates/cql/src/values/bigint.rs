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

    /// Java's `precision()`: the number of digits of the unscaled value (1 for zero).
    pub fn precision(&self) -> u64 {
        self.unscaled.digit_count()
    }

    /// Exact product (Java's `multiply`: the scales add up); `None` if the scale overflows.
    pub fn mul(&self, other: &BigDecimal) -> Option<BigDecimal> {
        Some(BigDecimal {
            unscaled: self.unscaled.mul(&other.unscaled),
            scale: self.scale.checked_add(other.scale)?,
        })
    }

    /// Negation (scale kept).
    pub fn neg(&self) -> BigDecimal {
        BigDecimal {
            unscaled: self.unscaled.neg(),
            scale: self.scale,
        }
    }

    /// Java's `stripTrailingZeros`: trailing zeros of the unscaled value removed (the scale
    /// lowered to match); zero becomes `0` at scale 0.
    pub fn strip_trailing_zeros(&self) -> BigDecimal {
        if self.unscaled.is_zero() {
            return BigDecimal::default();
        }
        let mut unscaled = self.unscaled.clone();
        let mut scale = i64::from(self.scale);
        loop {
            let (q, r) = unscaled.divrem_small(10);
            if r != 0 || scale <= i64::from(i32::MIN) {
                break;
            }
            unscaled = q;
            scale -= 1;
        }
        BigDecimal {
            unscaled,
            scale: scale as i32,
        }
    }

    /// `self / 10^k`, rounded half up (away from zero on a tie), at `scale - k`.
    fn drop_digits_half_up(&self, k: u32) -> Option<BigDecimal> {
        let divisor = BigInt::pow10(k);
        let (q, r) = self.unscaled.divrem(&divisor)?;
        let twice = r.add(&r);
        let up = !r.is_zero() && Self::cmp_abs(&twice, &divisor) != Ordering::Less;
        let q = if up {
            q.add(&BigInt::from_i128(if self.unscaled.is_negative() {
                -1
            } else {
                1
            }))
        } else {
            q
        };
        Some(BigDecimal {
            unscaled: q,
            scale: i32::try_from(i64::from(self.scale) - i64::from(k)).ok()?,
        })
    }

    fn cmp_abs(a: &BigInt, b: &BigInt) -> Ordering {
        let abs = |x: &BigInt| if x.is_negative() { x.neg() } else { x.clone() };
        abs(a).cmp(&abs(b))
    }

    /// Java's rounding to a `MathContext(precision, HALF_UP)`: at most `precision` digits,
    /// the dropped ones rounded half away from zero. `None` if the scale overflows.
    pub fn round_half_up(&self, precision: u64) -> Option<BigDecimal> {
        let mut out = self.clone();
        loop {
            let p = out.precision();
            if p <= precision {
                return Some(out);
            }
            out = out.drop_digits_half_up(u32::try_from(p - precision).ok()?)?;
        }
    }

    /// Java's `divide(divisor, scale, RoundingMode.HALF_UP)`: the quotient at `scale`, rounded
    /// half away from zero. `None` for a zero divisor or a result too large to compute
    /// (`max_digits` bounds the power of ten the operands are scaled by).
    pub fn div_half_up(
        &self,
        divisor: &BigDecimal,
        scale: i32,
        max_digits: u64,
    ) -> Option<BigDecimal> {
        if divisor.unscaled.is_zero() {
            return None;
        }
        // q = self.unscaled * 10^e / divisor.unscaled with e = scale + divisor.scale - self.scale.
        let e = i64::from(scale) + i64::from(divisor.scale) - i64::from(self.scale);
        if e.unsigned_abs() > max_digits {
            return None;
        }
        let (num, den) = if e >= 0 {
            (self.unscaled.mul_pow10(e as u32), divisor.unscaled.clone())
        } else {
            (
                self.unscaled.clone(),
                divisor.unscaled.mul_pow10((-e) as u32),
            )
        };
        let (q, r) = num.divrem(&den)?;
        let up = !r.is_zero() && Self::cmp_abs(&r.add(&r), &den) != Ordering::Less;
        let q = if up {
            let negative = num.is_negative() != den.is_negative();
            q.add(&BigInt::from_i128(if negative { -1 } else { 1 }))
        } else {
            q
        };
        Some(BigDecimal { unscaled: q, scale })
    }

    /// Java's `remainder(divisor)`: `self - q * divisor` with `q` the quotient truncated
    /// toward zero, at the scale Java's `divideAndRemainder` gives it. `None` for a zero
    /// divisor or operands too far apart to compute (`max_digits`).
    pub fn java_remainder(&self, divisor: &BigDecimal, max_digits: u64) -> Option<BigDecimal> {
        if divisor.unscaled.is_zero() {
            return None;
        }
        let (ls, rs) = (i64::from(self.scale), i64::from(divisor.scale));
        if (ls - rs).unsigned_abs() > max_digits {
            return None;
        }
        let common = ls.max(rs);
        let x = self.rescaled(common as i32);
        let y = divisor.rescaled(common as i32);
        let (q, r) = x.divrem(&y)?;
        // Java's integral quotient keeps the preferred scale `ls - rs` when that is not
        // negative, otherwise it strips trailing zeros down to it; the remainder's scale is
        // then max(ls, q.scale + rs).
        let scale = if ls >= rs || q.is_zero() {
            ls
        } else {
            let mut tz = 0i64;
            let mut v = q.clone();
            while tz < rs - ls {
                let (next, rem) = v.divrem_small(10);
                if rem != 0 {
                    break;
                }
                v = next;
                tz += 1;
            }
            ls.max(rs - tz)
        };
        // `r` is at scale `common >= scale`, and divisible by 10^(common - scale).
        let down = u32::try_from(common - scale).ok()?;
        let unscaled = if down == 0 {
            r
        } else {
            r.divrem(&BigInt::pow10(down))?.0
        };
        Some(BigDecimal {
            unscaled,
            scale: i32::try_from(scale).ok()?,
        })
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

    #[test]
    fn decimal_java_operations() {
        let d = |s: &str| BigDecimal::parse(s).unwrap();
        // Java's results, checked against Cassandra 5.0.9 (`SELECT x % y`, `x / y`).
        let rem = |a: &str, b: &str| d(a).java_remainder(&d(b), 10_000).unwrap().to_java_string();
        assert_eq!(rem("10.25", "3.0"), "1.25");
        assert_eq!(rem("10.25", "0.7"), "0.45");
        assert_eq!(rem("100", "0.5"), "0");
        assert_eq!(rem("1", "5.00"), "1");
        assert_eq!(rem("10", "0.3"), "0.1");
        assert_eq!(rem("0", "0.5"), "0");
        assert_eq!(rem("7.50", "2"), "1.50");
        assert_eq!(rem("7", "2.50"), "2.00");
        assert_eq!(rem("-7", "2"), "-1");
        assert!(d("1").java_remainder(&d("0"), 10).is_none());
        let div = |a: &str, b: &str, s: i32| {
            d(a).div_half_up(&d(b), s, 10_000)
                .unwrap()
                .strip_trailing_zeros()
                .to_java_string()
        };
        assert_eq!(
            div("10.25", "3.0", 32),
            "3.41666666666666666666666666666667"
        );
        assert_eq!(div("10.25", "0.5", 32), "20.5");
        assert_eq!(div("-1", "3", 2), "-0.33");
        assert_eq!(div("2", "3", 2), "0.67");
        assert_eq!(div("-2", "3", 2), "-0.67");
        assert_eq!(div("1", "8", 2), "0.13");
        assert_eq!(div("100", "1", 0), "1E+2");
        assert!(d("1").div_half_up(&d("0"), 2, 10).is_none());
        assert_eq!(d("1.2300").strip_trailing_zeros().to_java_string(), "1.23");
        assert_eq!(d("0.000").strip_trailing_zeros().to_java_string(), "0");
        assert_eq!(
            d("12.345").round_half_up(4).unwrap().to_java_string(),
            "12.35"
        );
        assert_eq!(
            d("-12.345").round_half_up(4).unwrap().to_java_string(),
            "-12.35"
        );
        assert_eq!(
            d("9.9999").round_half_up(3).unwrap().to_java_string(),
            "10.0"
        );
        assert_eq!(
            d("12.344").round_half_up(4).unwrap().to_java_string(),
            "12.34"
        );
        assert_eq!(
            d("10.25").mul(&d("7.0")).unwrap().to_java_string(),
            "71.750"
        );
        assert_eq!(
            d("10.25").mul(&d("1.0E10")).unwrap().to_java_string(),
            "1.0250E+11"
        );
        assert_eq!(d("10.25").precision(), 4);
        assert_eq!(d("0.00").precision(), 1);
    }

    #[test]
    fn bigint_division_of_large_values() {
        let p = |s: &str| BigInt::parse(s).unwrap();
        let a = p("123456789012345678901234567890123456789012345678901234567890");
        let b = p("98765432109876543210987");
        let (q, r) = a.divrem(&b).unwrap();
        assert_eq!(q.mul(&b).add(&r), a);
        assert_eq!(q.to_java_string(), "1249999988609375000142391093749550070");
        assert_eq!(a.neg().divrem(&b).unwrap().1, r.neg());
        assert!(a.divrem(&BigInt::zero()).is_none());
        assert_eq!(BigInt::pow10(20).to_java_string(), "100000000000000000000");
        assert_eq!(p("-999").digit_count(), 3);
    }

    proptest! {
        #[test]
        fn bigint_mul_div_match_i128(a in any::<i64>(), b in any::<i64>()) {
            let (x, y) = (BigInt::from_i128(a.into()), BigInt::from_i128(b.into()));
            prop_assert_eq!(x.mul(&y).to_i128(), Some(i128::from(a) * i128::from(b)));
            if b != 0 {
                let (q, r) = x.divrem(&y).unwrap();
                prop_assert_eq!(q.to_i128(), Some(i128::from(a) / i128::from(b)));
                prop_assert_eq!(r.to_i128(), Some(i128::from(a) % i128::from(b)));
            }
        }

        #[test]
        fn bigint_divrem_identity(
            a in proptest::collection::vec(any::<u8>(), 1..60),
            b in proptest::collection::vec(any::<u8>(), 1..30),
        ) {
            let (x, y) = (BigInt::from_bytes(&a), BigInt::from_bytes(&b));
            if let Some((q, r)) = x.divrem(&y) {
                prop_assert_eq!(q.mul(&y).add(&r), x.clone());
                prop_assert!(BigDecimal::cmp_abs(&r, &y) == Ordering::Less);
                prop_assert!(r.is_zero() || r.is_negative() == x.is_negative());
            } else {
                prop_assert!(y.is_zero());
            }
        }

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
