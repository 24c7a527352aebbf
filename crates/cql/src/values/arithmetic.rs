//! Cassandra's arithmetic operators (`OperationFcts`): `+ - * / %` and unary `-` on numbers,
//! `timestamp ± duration`, `date ± duration` and `+` on strings.
//!
//! Cassandra implements each operator as a set of overloaded native functions (`_add`,
//! `_substract`, `_multiply`, `_divide`, `_modulo`, `_negate` in the `system` keyspace) and
//! picks one with its function resolver. This module does the same in three steps:
//!
//! 1. [`signatures`]: every overload. For the nine numeric types (`tinyint`, `smallint`,
//!    `int`, `bigint`, `float`, `double`, `decimal`, `varint`, `counter`) each pair has one
//!    overload whose result is floating point if either side is (`float`, `double` or
//!    `decimal`) and as wide as the wider side (`counter` counting as `bigint`, `varint` and
//!    `decimal` as unbounded): `int + float` is `float`, `bigint * float` is `double`,
//!    `varint / double` is `decimal`, `counter + counter` is `bigint`. `+` and `-` also take
//!    `(timestamp, duration)` and `(date, duration)`; `+` concatenates `text` and `ascii`.
//! 2. [`resolve`]: Cassandra's `FunctionResolver.pickBestMatch`. Overloads whose result
//!    cannot be assigned to the receiver (when there is one) are dropped; the first whose
//!    parameters both match exactly wins; otherwise exactly one weak match must remain, or,
//!    with a receiver and no bind marker among the operands, the one whose parameters are
//!    both the receiver's type. Otherwise `the '+' operation is not supported between a and
//!    b` or `Ambiguous '+' operation with args a and b: …`. How well an operand fits a type
//!    is [`Operand`]'s business: a selector of known type, or a term (literals by their
//!    kind, nested operations by resolving them in turn).
//! 3. [`apply`] / [`negate`]: the operation on serialized values with Java's semantics —
//!    integer arithmetic wraps in the result's width (`tinyint`/`smallint` computed in `int`
//!    and narrowed), integer division and modulo by zero fail with `/ by zero`, `varint` by
//!    zero with `BigInteger divide by zero`; `float`/`double` follow IEEE; operands are
//!    widened as Java's `Number.floatValue()` / `doubleValue()` / `longValue()` do, and
//!    turned into `decimal` with `BigDecimal.valueOf(double)` (so `decimal * int` multiplies
//!    by `7.0`, scale 1). `decimal` `+ - *` round to 10 000 digits (Cassandra's
//!    `MathContext(10000)`); `/` uses Cassandra's `DecimalType.divide` scale rule (at least 32
//!    significant digits, at most 1000 decimals, half up, trailing zeros stripped); `%` is
//!    Java's `BigDecimal.remainder`. A null or empty operand gives null. A failure is a
//!    [`ValueError::FunctionFailure`] (`the operation 'int / int' failed: / by zero`).
//!
//! Deliberate limit: `decimal` operations whose exact intermediate values would need more
//! than [`MAX_DIGITS`] digits (e.g. `1E+1000000 + 1`, which Java rounds) are refused rather
//! than computed.

use super::assign::{unfrozen, value_compatible, Assignment};
use super::error::{FunctionFailure, ValueError, ValueResult};
use super::literal::duration_to_string;
use super::number::{decimal_of_f64, narrow, read_num, signed, Num};
use super::temporal::{add_duration_millis, MILLIS_PER_DAY};
use crate::ast::ArithmeticOp;
use bytes::Bytes;
use cairn_engine::model::types::decode_duration;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::types::{BigDecimal, BigInt};

/// The largest number of decimal digits (or limbs' worth of them) an exact `decimal` or
/// `varint` intermediate may have; beyond it the operation is refused.
pub const MAX_DIGITS: u64 = 20_000;

/// `decimal` `+ - *` round to this many significant digits (Cassandra's `MathContext`).
const DECIMAL_PRECISION: u64 = 10_000;

/// One overload of a binary operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSignature {
    /// The left parameter's type.
    pub left: CqlType,
    /// The right parameter's type.
    pub right: CqlType,
    /// The result type.
    pub ret: CqlType,
}

/// The numeric types, in Cassandra's registration order.
pub(crate) fn numeric_types() -> [CqlType; 9] {
    use CqlType as T;
    [
        T::Tinyint,
        T::Smallint,
        T::Int,
        T::Bigint,
        T::Float,
        T::Double,
        T::Decimal,
        T::Varint,
        T::Counter,
    ]
}

/// The byte size Cassandra's `OperationFcts.size` gives a numeric type (`None` = unbounded).
fn size(ty: &CqlType) -> Option<u8> {
    match ty {
        CqlType::Tinyint => Some(1),
        CqlType::Smallint => Some(2),
        CqlType::Int | CqlType::Float => Some(4),
        CqlType::Bigint | CqlType::Counter | CqlType::Double => Some(8),
        _ => None,
    }
}

/// The result type of a numeric operation (`OperationFcts.returnType`).
fn numeric_result(left: &CqlType, right: &CqlType) -> CqlType {
    let floating = |t: &CqlType| matches!(t, CqlType::Float | CqlType::Double | CqlType::Decimal);
    let width = match (size(left), size(right)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    match (floating(left) || floating(right), width) {
        (true, Some(4)) => CqlType::Float,
        (true, Some(8)) => CqlType::Double,
        (true, _) => CqlType::Decimal,
        (false, Some(1)) => CqlType::Tinyint,
        (false, Some(2)) => CqlType::Smallint,
        (false, Some(4)) => CqlType::Int,
        (false, Some(8)) => CqlType::Bigint,
        (false, _) => CqlType::Varint,
    }
}

/// Every overload of a binary operator, in Cassandra's registration order.
pub fn signatures(op: ArithmeticOp) -> Vec<OpSignature> {
    use CqlType as T;
    let sig = |left: T, right: T, ret: T| OpSignature { left, right, ret };
    let mut out = Vec::with_capacity(87);
    for l in numeric_types() {
        for r in numeric_types() {
            let ret = numeric_result(&l, &r);
            out.push(sig(l.clone(), r, ret));
        }
    }
    if matches!(op, ArithmeticOp::Add | ArithmeticOp::Sub) {
        out.push(sig(T::Timestamp, T::Duration, T::Timestamp));
        out.push(sig(T::Date, T::Duration, T::Date));
    }
    if op == ArithmeticOp::Add {
        out.push(sig(T::Text, T::Text, T::Text));
        out.push(sig(T::Ascii, T::Ascii, T::Ascii));
        out.push(sig(T::Ascii, T::Text, T::Text));
        out.push(sig(T::Text, T::Ascii, T::Text));
    }
    out
}

/// The native function behind an operator (`_add`, `_substract` — sic —, …).
pub fn function_name(op: ArithmeticOp) -> &'static str {
    match op {
        ArithmeticOp::Add => "_add",
        ArithmeticOp::Sub => "_substract",
        ArithmeticOp::Mul => "_multiply",
        ArithmeticOp::Div => "_divide",
        ArithmeticOp::Mod => "_modulo",
    }
}

/// The native function behind unary minus.
pub const NEGATE_FUNCTION: &str = "_negate";

/// An operand, as overload resolution sees it: how well it fits each parameter type, and
/// the text Cassandra shows for it in messages. [`Operand::typed`] is a selector of known
/// type (a column, a function result, an element…); `term::operand` makes one of a term.
pub struct Operand<'a> {
    text: Box<dyn Fn() -> String + 'a>,
    fit: Box<dyn Fn(&CqlType) -> Assignment + 'a>,
    marker: bool,
    list_literal: bool,
}

impl<'a> Operand<'a> {
    /// An operand that fits a parameter type as `fit` says and shows as `text()`.
    pub fn new(text: impl Fn() -> String + 'a, fit: impl Fn(&CqlType) -> Assignment + 'a) -> Self {
        Operand {
            text: Box::new(text),
            fit: Box::new(fit),
            marker: false,
            list_literal: false,
        }
    }

    /// A selector of type `ty` shown as `text`: exact for its own type, weak for the types
    /// that can take its values.
    pub fn typed(ty: &CqlType, text: impl Into<String>) -> Operand<'static> {
        let (ty, text) = (unfrozen(ty).clone(), text.into());
        Operand::new(
            move || text.clone(),
            move |param| {
                if ty == *unfrozen(param) {
                    Assignment::Exact
                } else if value_compatible(param, &ty) {
                    Assignment::Weak
                } else {
                    Assignment::No
                }
            },
        )
    }

    /// Marks the operand as a bind marker (Cassandra then never settles an ambiguity by the
    /// receiver's type).
    pub fn bind_marker(mut self) -> Self {
        self.marker = true;
        self
    }

    /// Marks the operand as a list literal, which Cassandra 5 refuses to test against
    /// anything but a list (its `ArrayLiteral` throws, ending the resolution).
    pub fn list_literal(mut self) -> Self {
        self.list_literal = true;
        self
    }

    /// The text Cassandra shows for the operand in messages.
    pub fn text(&self) -> String {
        (self.text)()
    }

    fn fit(&self, ty: &CqlType) -> Assignment {
        (self.fit)(ty)
    }
}

/// Picks the overload of `op` for two operands, as Cassandra's function resolver does;
/// `receiver` is the type the result is assigned to, when there is one (a column in
/// `SET`/`VALUES`/`WHERE`, a function parameter), `None` in selectors.
pub fn resolve(
    op: ArithmeticOp,
    left: &Operand,
    right: &Operand,
    receiver: Option<&CqlType>,
) -> ValueResult<OpSignature> {
    let candidates: Vec<OpSignature> = signatures(op)
        .into_iter()
        .filter(|sig| receiver.is_none_or(|r| value_compatible(r, &sig.ret)))
        .collect();
    // Cassandra 5's list literal throws when tested against anything but a list, which ends
    // the resolution (it names the type it was tested against).
    if let (true, Some(first)) = (left.list_literal || right.list_literal, candidates.first()) {
        let tested = receiver.unwrap_or(&first.left);
        return Err(ValueError::invalid(format!(
            "Unexpected receiver type '{}'; only list and vector are expected",
            unfrozen(tested).name()
        )));
    }
    let mut exact: Vec<OpSignature> = Vec::new();
    let mut compatible: Vec<OpSignature> = Vec::new();
    for sig in candidates {
        match (left.fit(&sig.left), right.fit(&sig.right)) {
            (Assignment::No, _) | (_, Assignment::No) => {}
            (Assignment::Exact, Assignment::Exact) => exact.push(sig),
            _ => compatible.push(sig),
        }
    }
    // Cassandra returns the first exact match in its (hash) order; several can only come
    // from nested operations that fit more than one type, and then the receiver's own
    // type is the one that always works.
    let receiver_typed = |sigs: &[OpSignature]| {
        let r = unfrozen(receiver?);
        sigs.iter().find(|s| s.left == *r && s.right == *r).cloned()
    };
    if !exact.is_empty() {
        return Ok(receiver_typed(&exact).unwrap_or_else(|| exact.remove(0)));
    }
    let symbol = op.symbol();
    match compatible.len() {
        0 => Err(ValueError::invalid(format!(
            "the '{symbol}' operation is not supported between {} and {}",
            left.text(),
            right.text()
        ))),
        1 => Ok(compatible.remove(0)),
        _ => {
            if !left.marker && !right.marker {
                if let Some(sig) = receiver_typed(&compatible) {
                    return Ok(sig);
                }
            }
            Err(ValueError::invalid(format!(
                "Ambiguous '{symbol}' operation with args {} and {}: use type hint to disambiguate, example '(int) ?'",
                left.text(),
                right.text()
            )))
        }
    }
}

/// Picks the overload of unary minus (the operand's numeric type), as Cassandra's resolver
/// does for `_negate`.
pub fn resolve_negation(operand: &Operand, receiver: Option<&CqlType>) -> ValueResult<CqlType> {
    let mut compatible = Vec::new();
    for ty in numeric_types() {
        if receiver.is_some_and(|r| !value_compatible(r, &ty)) {
            continue;
        }
        match operand.fit(&ty) {
            Assignment::Exact => return Ok(ty),
            Assignment::Weak => compatible.push(ty),
            Assignment::No => {}
        }
    }
    match compatible.len() {
        // The order of Cassandra's (hash-ordered) list of signatures.
        0 => Err(ValueError::invalid(format!(
            "Invalid call to function system.{NEGATE_FUNCTION}, none of its type signatures match (known type signatures: {})",
            ["bigint", "decimal", "counter", "float", "double", "smallint", "varint", "tinyint", "int"]
                .iter()
                .map(|t| format!("system.\"{NEGATE_FUNCTION}\" : ({t}) -> {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        1 => Ok(compatible.remove(0)),
        _ => Err(ValueError::invalid(
            "Ambiguous negation: use type casts to disambiguate",
        )),
    }
}

/// The result type of `left op right` for operands of these types (the overload Cassandra
/// picks for two selectors of these types, e.g. `int` for `tinyint + int`, `timestamp` for
/// `timestamp - duration`), with Cassandra's errors when there is none or several
/// (`timestamp + int`: a timestamp is also a `bigint` and a `varint`).
pub fn result_type(op: ArithmeticOp, left: &CqlType, right: &CqlType) -> ValueResult<CqlType> {
    let typed = |ty: &CqlType| Operand::typed(ty, ty.name());
    Ok(resolve(op, &typed(left), &typed(right), None)?.ret)
}

/// A Function_failure for operator `op` on parameters of these types.
fn failure(op: &str, symbol: &str, types: &[&CqlType], detail: &str) -> ValueError {
    let names: Vec<String> = types.iter().map(|t| t.name()).collect();
    let message = match names.as_slice() {
        [l, r] => format!("the operation '{l} {symbol} {r}' failed: {detail}"),
        _ => format!(
            "execution of 'system.{op}[{}]' failed: {detail}",
            names.join(", ")
        ),
    };
    ValueError::FunctionFailure(FunctionFailure {
        keyspace: "system".into(),
        function: op.into(),
        arg_types: names,
        message,
    })
}

/// `left op right` on values of the overload's parameter types `left_ty` and `right_ty`
/// (from [`resolve`]); the result is of the overload's result type. `None` (null) when
/// either operand is empty, as Cassandra reads an empty number as null.
pub fn apply(
    op: ArithmeticOp,
    left_ty: &CqlType,
    left: &[u8],
    right_ty: &CqlType,
    right: &[u8],
) -> ValueResult<Option<Bytes>> {
    let (lt, rt) = (unfrozen(left_ty), unfrozen(right_ty));
    let fail = |detail: &str| failure(function_name(op), op.symbol(), &[lt, rt], detail);
    let sig = signatures(op)
        .into_iter()
        .find(|s| s.left == *lt && s.right == *rt)
        .ok_or_else(|| {
            ValueError::invalid(format!(
                "the '{}' operation is not supported between {} and {}",
                op.symbol(),
                lt.name(),
                rt.name()
            ))
        })?;
    if lt.validate(left).is_err() || rt.validate(right).is_err() {
        return Err(fail("invalid value"));
    }
    let is_string = |t: &CqlType| matches!(t, CqlType::Text | CqlType::Ascii);
    if is_string(lt) {
        let (Ok(a), Ok(b)) = (std::str::from_utf8(left), std::str::from_utf8(right)) else {
            return Err(fail("invalid UTF-8 string"));
        };
        return Ok(Some(Bytes::from(format!("{a}{b}"))));
    }
    if left.is_empty() || right.is_empty() {
        return Ok(None);
    }
    if *rt == CqlType::Duration {
        return temporal(op, lt, left, right, &fail).map(Some);
    }
    let bad = || fail("invalid value");
    let (a, b) = (
        read_num(lt, left).ok_or_else(bad)?,
        read_num(rt, right).ok_or_else(bad)?,
    );
    numeric(op, &sig.ret, a, b).map(Some).map_err(|d| fail(&d))
}

/// `-value` for a value of numeric type `ty`; `None` (null) for an empty value.
pub fn negate(ty: &CqlType, value: &[u8]) -> ValueResult<Option<Bytes>> {
    let ty = unfrozen(ty);
    if value.is_empty() {
        return Ok(None);
    }
    let bad = || failure(NEGATE_FUNCTION, "-", &[ty], "invalid value");
    if ty.validate(value).is_err() {
        return Err(bad());
    }
    let out = match (ty, read_num(ty, value).ok_or_else(bad)?) {
        (CqlType::Float, Num::Float(f)) => Bytes::copy_from_slice(&(-(f as f32)).to_be_bytes()),
        (CqlType::Double, Num::Float(f)) => Bytes::copy_from_slice(&(-f).to_be_bytes()),
        (_, Num::Int(i)) => narrow(ty, -i128::from(i)),
        (_, Num::Big(b)) => Bytes::from(b.neg().to_bytes()),
        (_, Num::Dec(d)) => Bytes::from(d.neg().to_bytes()),
        _ => return Err(bad()),
    };
    Ok(Some(out))
}

/// `timestamp ± duration` or `date ± duration` (Cassandra's `TemporalType`).
fn temporal(
    op: ArithmeticOp,
    ty: &CqlType,
    value: &[u8],
    duration: &[u8],
    fail: &dyn Fn(&str) -> ValueError,
) -> ValueResult<Bytes> {
    let (months, days, nanos) = decode_duration(duration).map_err(|_| fail("invalid value"))?;
    let millis = match ty {
        CqlType::Timestamp => signed(value).filter(|_| value.len() == 8),
        CqlType::Date => <[u8; 4]>::try_from(value)
            .ok()
            .map(|raw| (i64::from(u32::from_be_bytes(raw)) - (1i64 << 31)) * MILLIS_PER_DAY),
        _ => None,
    }
    .ok_or_else(|| fail("invalid value"))?;
    // Checked inside the function, so Cassandra reports them as the operation's failure.
    if *ty == CqlType::Timestamp && nanos % 1_000_000 != 0 {
        return Err(fail(&format!(
            "The duration must have a millisecond precision. Was: {}",
            duration_to_string(months, days, nanos)
        )));
    }
    if *ty == CqlType::Date && nanos != 0 {
        return Err(fail(&format!(
            "The duration must have a day precision. Was: {}",
            duration_to_string(months, days, nanos)
        )));
    }
    let result = if op == ArithmeticOp::Sub {
        add_duration_millis(
            millis,
            months.wrapping_neg(),
            days.wrapping_neg(),
            nanos.wrapping_neg(),
        )
    } else {
        add_duration_millis(millis, months, days, nanos)
    };
    Ok(if *ty == CqlType::Timestamp {
        Bytes::copy_from_slice(&result.to_be_bytes())
    } else {
        // `SimpleDateSerializer.timeInMillisToDay`: whole days toward zero, as a Java int.
        let days = (result / MILLIS_PER_DAY).wrapping_sub(i64::from(i32::MIN)) as i32;
        Bytes::copy_from_slice(&days.to_be_bytes())
    })
}

/// An operand as a Java `long` (`Number.longValue()`).
fn long_value(n: &Num) -> i64 {
    match n {
        Num::Int(i) => *i,
        Num::Float(f) => *f as i64,
        Num::Big(b) => b.low_i64(),
        Num::Dec(d) => d.to_bigint().low_i64(),
    }
}

/// An operand as a Java `double` (`Number.doubleValue()`).
fn double_value(n: &Num) -> f64 {
    match n {
        Num::Int(i) => *i as f64,
        Num::Float(f) => *f,
        Num::Big(b) => b.to_f64(),
        Num::Dec(d) => d.to_f64(),
    }
}

/// An operand as a `BigDecimal` (`DecimalType.toBigDecimal`).
fn decimal_value(n: Num) -> Result<BigDecimal, String> {
    match n {
        Num::Dec(d) => Ok(d),
        Num::Big(b) => Ok(BigDecimal::from_int(b)),
        other => {
            let d = double_value(&other);
            if d.is_nan() {
                Err("A NaN cannot be converted into a decimal".into())
            } else if d.is_infinite() {
                Err("An infinite number cannot be converted into a decimal".into())
            } else {
                decimal_of_f64(d).ok_or_else(|| "invalid value".to_string())
            }
        }
    }
}

/// The operation in the result type's arithmetic; `Err` is the Java exception's message.
fn numeric(op: ArithmeticOp, ret: &CqlType, a: Num, b: Num) -> Result<Bytes, String> {
    use ArithmeticOp as O;
    const DIV_ZERO: &str = "/ by zero";
    match ret {
        CqlType::Tinyint | CqlType::Smallint | CqlType::Int => {
            // Java computes byte and short arithmetic in int, then narrows.
            let (x, y) = (long_value(&a) as i32, long_value(&b) as i32);
            let (x, y) = match ret {
                CqlType::Tinyint => (i32::from(x as i8), i32::from(y as i8)),
                CqlType::Smallint => (i32::from(x as i16), i32::from(y as i16)),
                _ => (x, y),
            };
            let v = match op {
                O::Add => x.wrapping_add(y),
                O::Sub => x.wrapping_sub(y),
                O::Mul => x.wrapping_mul(y),
                O::Div | O::Mod if y == 0 => return Err(DIV_ZERO.into()),
                O::Div => x.wrapping_div(y),
                O::Mod => x.wrapping_rem(y),
            };
            Ok(narrow(ret, i128::from(v)))
        }
        CqlType::Bigint => {
            let (x, y) = (long_value(&a), long_value(&b));
            let v = match op {
                O::Add => x.wrapping_add(y),
                O::Sub => x.wrapping_sub(y),
                O::Mul => x.wrapping_mul(y),
                O::Div | O::Mod if y == 0 => return Err(DIV_ZERO.into()),
                O::Div => x.wrapping_div(y),
                O::Mod => x.wrapping_rem(y),
            };
            Ok(Bytes::copy_from_slice(&v.to_be_bytes()))
        }
        CqlType::Float => {
            // Operands of a float result are at most 4 bytes wide: ints and floats.
            let v = ieee(op, double_value(&a) as f32, double_value(&b) as f32);
            Ok(Bytes::copy_from_slice(&v.to_be_bytes()))
        }
        CqlType::Double => {
            let v = ieee(op, double_value(&a), double_value(&b));
            Ok(Bytes::copy_from_slice(&v.to_be_bytes()))
        }
        CqlType::Varint => {
            let big = |n: Num| match n {
                Num::Big(b) => b,
                other => BigInt::from_i128(i128::from(long_value(&other))),
            };
            let (x, y) = (big(a), big(b));
            if matches!(op, O::Mul | O::Div | O::Mod)
                && (x.limbs() as u64).saturating_mul(y.limbs() as u64)
                    > MAX_DIGITS * MAX_DIGITS / 100
            {
                return Err(too_large());
            }
            let v = match op {
                O::Add => x.add(&y),
                O::Sub => x.sub(&y),
                O::Mul => x.mul(&y),
                O::Div => x.divrem(&y).ok_or("BigInteger divide by zero")?.0,
                O::Mod => x.divrem(&y).ok_or("BigInteger divide by zero")?.1,
            };
            Ok(Bytes::from(v.to_bytes()))
        }
        CqlType::Decimal => {
            let (x, y) = (decimal_value(a)?, decimal_value(b)?);
            let v = decimal_op(op, &x, &y)?;
            Ok(Bytes::from(v.to_bytes()))
        }
        _ => Err("invalid value".into()),
    }
}

/// An IEEE operation in `f32` or `f64` (`%` is Java's: the remainder of the truncated
/// quotient, as Rust's).
fn ieee<F>(op: ArithmeticOp, x: F, y: F) -> F
where
    F: std::ops::Add<Output = F>
        + std::ops::Sub<Output = F>
        + std::ops::Mul<Output = F>
        + std::ops::Div<Output = F>
        + std::ops::Rem<Output = F>,
{
    match op {
        ArithmeticOp::Add => x + y,
        ArithmeticOp::Sub => x - y,
        ArithmeticOp::Mul => x * y,
        ArithmeticOp::Div => x / y,
        ArithmeticOp::Mod => x % y,
    }
}

fn too_large() -> String {
    format!("the operands are too large (Cairn computes decimals and varints of up to {MAX_DIGITS} digits)")
}

/// Cassandra's `DecimalType` operations.
fn decimal_op(op: ArithmeticOp, x: &BigDecimal, y: &BigDecimal) -> Result<BigDecimal, String> {
    use ArithmeticOp as O;
    let (px, py) = (x.precision(), y.precision());
    let (sx, sy) = (i64::from(x.scale), i64::from(y.scale));
    // Bound the exact intermediate values: aligning scales multiplies by 10^|sx - sy|.
    let aligned = (sx - sy).unsigned_abs() + px.max(py);
    let round = |d: BigDecimal| d.round_half_up(DECIMAL_PRECISION).ok_or_else(too_large);
    match op {
        O::Add | O::Sub => {
            if aligned > MAX_DIGITS {
                return Err(too_large());
            }
            round(if op == O::Add { x.add(y) } else { x.sub(y) })
        }
        O::Mul => {
            if px + py > MAX_DIGITS {
                return Err(too_large());
            }
            round(x.mul(y).ok_or_else(too_large)?)
        }
        O::Div => {
            if y.unscaled.is_zero() {
                return Err("BigInteger divide by zero".into());
            }
            // DecimalType.divide: at least 32 significant digits, at most 1000 decimals.
            let first_digit = (px as i64 - sx) - (py as i64 - sy);
            let scale = (32 - first_digit).max(sx).max(sy).clamp(32, 1000);
            let q = x
                .div_half_up(y, scale as i32, MAX_DIGITS)
                .ok_or_else(too_large)?;
            Ok(q.strip_trailing_zeros())
        }
        O::Mod => {
            if y.unscaled.is_zero() {
                return Err(if x.unscaled.is_zero() {
                    "Division undefined".into()
                } else {
                    "Division by zero".into()
                });
            }
            if aligned > MAX_DIGITS {
                return Err(too_large());
            }
            x.java_remainder(y, MAX_DIGITS).ok_or_else(too_large)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::format::format_value;
    use super::super::tests::{ty, value};
    use super::*;
    use ArithmeticOp::*;

    /// `a op b` on literals of the given types, formatted as CQL, or the error text.
    fn run(op: ArithmeticOp, lt: &str, a: &str, rt: &str, b: &str) -> String {
        let (l, r) = (ty(lt), ty(rt));
        let sig = match resolve(op, &Operand::typed(&l, "a"), &Operand::typed(&r, "b"), None) {
            Ok(s) => s,
            Err(e) => return format!("ERR {e}"),
        };
        match apply(op, &sig.left, &value(a, lt), &sig.right, &value(b, rt)) {
            Ok(Some(v)) => format!("{}:{}", sig.ret.name(), format_value(&sig.ret, &v)),
            Ok(None) => "null".into(),
            Err(e) => format!("ERR {e}"),
        }
    }

    #[test]
    fn result_types() {
        let ambiguous = "ERR Ambiguous '+' operation with args timestamp and int: use type hint to disambiguate, example '(int) ?'";
        for (op, l, r, expected) in [
            (Add, "tinyint", "tinyint", "tinyint"),
            (Add, "tinyint", "smallint", "smallint"),
            (Add, "int", "tinyint", "int"),
            (Add, "int", "bigint", "bigint"),
            (Mul, "counter", "counter", "bigint"),
            (Mul, "counter", "int", "bigint"),
            (Add, "int", "float", "float"),
            (Add, "bigint", "float", "double"),
            (Add, "float", "double", "double"),
            (Div, "varint", "int", "varint"),
            (Div, "varint", "float", "decimal"),
            (Div, "decimal", "tinyint", "decimal"),
            (Sub, "timestamp", "duration", "timestamp"),
            (Add, "date", "duration", "date"),
            (Add, "text", "ascii", "text"),
            (Add, "ascii", "ascii", "ascii"),
            (Add, "timestamp", "int", ambiguous),
            (
                Add,
                "int",
                "text",
                "ERR the '+' operation is not supported between int and text",
            ),
            (
                Mul,
                "timestamp",
                "duration",
                "ERR the '*' operation is not supported between timestamp and duration",
            ),
            (
                Add,
                "duration",
                "duration",
                "ERR the '+' operation is not supported between duration and duration",
            ),
            (
                Sub,
                "text",
                "text",
                "ERR the '-' operation is not supported between text and text",
            ),
        ] {
            let got = result_type(op, &ty(l), &ty(r))
                .map(|t| t.name())
                .unwrap_or_else(|e| format!("ERR {e}"));
            assert_eq!(got, expected, "{l} {} {r}", op.symbol());
        }
    }

    #[test]
    fn integers_and_floats_like_java() {
        // The floating point cases were checked against Cassandra 5.0.9.
        for (op, lt, a, rt, b, expected) in [
            (Add, "int", "2147483647", "int", "1", "int:-2147483648"),
            (
                Mul,
                "smallint",
                "-32768",
                "smallint",
                "-32768",
                "smallint:0",
            ),
            (Div, "tinyint", "-128", "int", "-1", "int:128"),
            (Div, "tinyint", "-128", "tinyint", "-1", "tinyint:-128"),
            (Div, "int", "-2147483648", "int", "-1", "int:-2147483648"),
            (Mod, "int", "-2147483648", "int", "-1", "int:0"),
            (Div, "int", "-7", "int", "2", "int:-3"),
            (Mod, "int", "-7", "int", "3", "int:-1"),
            (Mod, "int", "7", "int", "-3", "int:1"),
            (
                Mul,
                "bigint",
                "9223372036854775807",
                "int",
                "2",
                "bigint:-2",
            ),
            (Add, "counter", "5", "counter", "6", "bigint:11"),
            (
                Div,
                "int",
                "7",
                "int",
                "0",
                "ERR the operation 'int / int' failed: / by zero",
            ),
            (
                Mod,
                "bigint",
                "7",
                "int",
                "0",
                "ERR the operation 'bigint % int' failed: / by zero",
            ),
            (
                Div,
                "tinyint",
                "7",
                "tinyint",
                "0",
                "ERR the operation 'tinyint / tinyint' failed: / by zero",
            ),
            (Add, "int", "7", "float", "0.1", "float:7.1"),
            (Div, "float", "0.1", "int", "3", "float:0.033333335"),
            (
                Add,
                "bigint",
                "10000000000",
                "float",
                "0.1",
                "double:1.00000000001E10",
            ),
            (
                Mod,
                "float",
                "0.1",
                "double",
                "0.03",
                "double:0.010000001490116123",
            ),
            (Div, "double", "1.5", "int", "0", "double:Infinity"),
            (Div, "float", "0", "float", "0", "float:NaN"),
            (Mod, "double", "0", "double", "0", "double:NaN"),
            (Add, "counter", "5", "double", "1.5", "double:6.5"),
        ] {
            assert_eq!(
                run(op, lt, a, rt, b),
                expected,
                "{lt} {a} {} {rt} {b}",
                op.symbol()
            );
        }
    }

    #[test]
    fn decimals_and_varints_like_java() {
        // Each checked against Cassandra 5.0.9.
        for (op, lt, a, rt, b, expected) in [
            (Add, "decimal", "10.25", "int", "7", "decimal:17.25"),
            (Mul, "decimal", "10.25", "int", "7", "decimal:71.750"),
            (Mul, "decimal", "10.25", "bigint", "10000000000", "decimal:1.0250E+11"),
            (Add, "decimal", "10.25", "bigint", "10000000000", "decimal:10000000010.25"),
            (Mul, "decimal", "10.25", "float", "0.1", "decimal:1.0250000152736902300"),
            (Add, "decimal", "10.25", "double", "0.1", "decimal:10.35"),
            (Add, "varint", "5", "float", "0.1", "decimal:5.10000000149011612"),
            (Mul, "varint", "5", "double", "0.1", "decimal:0.5"),
            (Div, "varint", "5", "float", "0.1", "decimal:49.99999925494195110223008998315175"),
            (Div, "decimal", "10.25", "int", "3", "decimal:3.41666666666666666666666666666667"),
            (Mod, "decimal", "10.25", "int", "3", "decimal:1.25"),
            (Mod, "decimal", "10.25", "double", "0.7", "decimal:0.45"),
            (Div, "decimal", "10.25", "double", "0.5", "decimal:20.5"),
            (Mul, "decimal", "1.5", "int", "2", "decimal:3.00"),
            (Div, "decimal", "10.25", "int", "0", "ERR the operation 'decimal / int' failed: BigInteger divide by zero"),
            (Mod, "decimal", "10.25", "int", "0", "ERR the operation 'decimal % int' failed: Division by zero"),
            (Mod, "decimal", "0", "decimal", "0", "ERR the operation 'decimal % decimal' failed: Division undefined"),
            (Add, "decimal", "1", "double", "NaN", "ERR the operation 'decimal + double' failed: A NaN cannot be converted into a decimal"),
            (Add, "decimal", "1", "float", "-Infinity", "ERR the operation 'decimal + float' failed: An infinite number cannot be converted into a decimal"),
            (Mul, "varint", "12345678901234567890", "varint", "98765432109876543210", "varint:1219326311370217952237463801111263526900"),
            (Div, "varint", "-12345678901234567890", "int", "7", "varint:-1763668414462081127"),
            (Mod, "varint", "-12345678901234567890", "int", "7", "varint:-1"),
            (Div, "varint", "5", "int", "0", "ERR the operation 'varint / int' failed: BigInteger divide by zero"),
        ] {
            assert_eq!(run(op, lt, a, rt, b), expected, "{lt} {a} {} {rt} {b}", op.symbol());
        }
        assert!(run(Add, "decimal", "1E+1000000", "decimal", "1").contains("too large"));
    }

    #[test]
    fn temporal_and_strings() {
        let ts = |t: &str| {
            format!(
                "timestamp:{}",
                format_value(&ty("timestamp"), &value(t, "timestamp"))
            )
        };
        assert_eq!(
            run(Add, "timestamp", "'2024-01-01'", "duration", "1mo1d1h"),
            ts("'2024-02-02 01:00:00'")
        );
        assert_eq!(
            run(Sub, "timestamp", "'2024-01-01'", "duration", "13mo"),
            ts("'2022-12-01'")
        );
        assert_eq!(
            run(Sub, "date", "'2024-01-31'", "duration", "1mo"),
            "date:'2023-12-31'"
        );
        assert_eq!(
            run(Add, "date", "'2024-01-31'", "duration", "1mo"),
            "date:'2024-02-29'"
        );
        assert_eq!(
            run(Sub, "date", "'2024-01-31'", "duration", "1h"),
            "ERR the operation 'date - duration' failed: The duration must have a day precision. Was: 1h"
        );
        assert_eq!(
            run(Add, "timestamp", "'2024-01-31'", "duration", "1us"),
            "ERR the operation 'timestamp + duration' failed: The duration must have a millisecond precision. Was: 1us"
        );
        assert_eq!(run(Add, "text", "'hé'", "ascii", "'abc'"), "text:'héabc'");
        assert_eq!(run(Add, "ascii", "'a'", "ascii", "''"), "ascii:'a'");
    }

    #[test]
    fn negation() {
        let neg = |t: &str, v: &str| match negate(&ty(t), &value(v, t)) {
            Ok(Some(b)) => format_value(&ty(t), &b),
            Ok(None) => "null".into(),
            Err(e) => format!("ERR {e}"),
        };
        assert_eq!(neg("tinyint", "-128"), "-128");
        assert_eq!(neg("smallint", "-32768"), "-32768");
        assert_eq!(neg("int", "5"), "-5");
        assert_eq!(
            neg("bigint", "-9223372036854775808"),
            "-9223372036854775808"
        );
        assert_eq!(neg("counter", "5"), "-5");
        assert_eq!(neg("float", "1.5"), "-1.5");
        assert_eq!(neg("double", "-0.0"), "0.0");
        assert_eq!(
            neg("varint", "12345678901234567890"),
            "-12345678901234567890"
        );
        assert_eq!(neg("decimal", "1.50"), "-1.50");
        assert_eq!(negate(&ty("int"), &[]).unwrap(), None);
    }

    #[test]
    fn empty_operands_are_null() {
        assert_eq!(
            apply(Add, &ty("int"), &[], &ty("int"), &[0, 0, 0, 1]).unwrap(),
            None
        );
        assert_eq!(
            apply(Add, &ty("text"), b"", &ty("text"), b"x").unwrap(),
            Some(Bytes::from_static(b"x"))
        );
        assert!(apply(Add, &ty("int"), &[1], &ty("int"), &[0, 0, 0, 1]).is_err());
        assert!(apply(Add, &ty("int"), &[0, 0, 0, 1], &ty("text"), b"x").is_err());
    }
}
