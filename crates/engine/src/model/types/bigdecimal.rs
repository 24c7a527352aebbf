//! Arbitrary-precision decimals (`decimal`): Java's `BigDecimal` — `unscaled × 10^-scale`,
//! with its parsing, `toString` forms, rounding and the arithmetic CQL needs.
//!
//! Invariant: comparison ([`BigDecimal::cmp_value`]) never rescales, so comparing values
//! whose scales lie far apart (`1E-2147483647` and `1`) costs the digits, not `10^scale`.

use super::bigint::BigInt;
use std::cmp::Ordering;

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

    /// Numeric comparison (ignores the scale: `1.50 == 1.5`), as Java's `compareTo`: by
    /// sign, then by adjusted exponent (digits before the point), then digit by digit —
    /// never by rescaling, which for scales far apart would build a number of 2^31 digits.
    pub fn cmp_value(&self, other: &BigDecimal) -> Ordering {
        let sign = |d: &BigDecimal| match (d.unscaled.is_zero(), d.unscaled.is_negative()) {
            (true, _) => 0i8,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let (da, db) = (
            self.unscaled.magnitude_digits(),
            other.unscaled.magnitude_digits(),
        );
        let adjusted = |digits: &str, scale: i32| digits.len() as i64 - i64::from(scale);
        let magnitude = adjusted(&da, self.scale)
            .cmp(&adjusted(&db, other.scale))
            .then_with(|| {
                // Same number of digits before the point: compare digit by digit, the
                // shorter padded with zeros.
                let (a, b) = (da.as_bytes(), db.as_bytes());
                (0..a.len().max(b.len()))
                    .map(|i| {
                        let x = a.get(i).copied().unwrap_or(b'0');
                        x.cmp(&b.get(i).copied().unwrap_or(b'0'))
                    })
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            });
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
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

    #[test]
    fn comparison_needs_no_rescaling() {
        let one = BigDecimal::from_int(BigInt::from_i128(1));
        let tiny = BigDecimal {
            unscaled: BigInt::from_i128(1),
            scale: i32::MAX,
        };
        let huge = BigDecimal {
            unscaled: BigInt::from_i128(1),
            scale: i32::MIN,
        };
        assert_eq!(tiny.cmp_value(&one), Ordering::Less);
        assert_eq!(huge.cmp_value(&one), Ordering::Greater);
        assert_eq!(one.neg().cmp_value(&tiny.neg()), Ordering::Less);
        assert_eq!(huge.neg().cmp_value(&tiny), Ordering::Less);
        let (a, b) = (
            BigDecimal::parse("1.50").unwrap(),
            BigDecimal::parse("1.5").unwrap(),
        );
        assert_eq!(a.cmp_value(&b), Ordering::Equal);
        assert_eq!(
            BigDecimal::parse("-0.00")
                .unwrap()
                .cmp_value(&BigDecimal::default()),
            Ordering::Equal
        );
        assert_eq!(
            BigDecimal::parse("99.9")
                .unwrap()
                .cmp_value(&BigDecimal::parse("100").unwrap()),
            Ordering::Less
        );
    }
}
