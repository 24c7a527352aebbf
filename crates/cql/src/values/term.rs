//! Terms to native-protocol bytes.
//!
//! [`term_to_bytes`] evaluates a parsed [`Term`] for a receiver (a column, or a part of one)
//! of a known type, the way Cassandra's `Term.Raw.prepare` + `bind` do:
//!
//! - literals go through [`super::literal`];
//! - `NULL` is [`TermValue::Null`] (refused for counters: `Invalid null value for counter
//!   increment/decrement`);
//! - bind markers ask the [`TermContext`]; bound bytes are validated for the type, and bound
//!   sets and maps are re-sorted and deduplicated as Cassandra's deserialization does;
//! - `[…]`, `{…}`, `{k: v…}`, `{}` and `(…)` must match the receiver's kind
//!   (`Invalid list literal for a of type set<int>`); each element is evaluated for
//!   `value(a)` / `key(a)` / `a[i]`; sets and maps come out sorted by the element (key) order
//!   of [`compare`](fn@cairn_engine::model::types::compare) and deduplicated (for maps the last value of a key
//!   wins); a null
//!   element is `null is not supported inside collections`; an unset element makes the whole
//!   collection unset (an unset map key is an error);
//! - `(type) term` checks that the hinted type can be assigned to the receiver and evaluates
//!   the term for the hinted type;
//! - function calls run Cassandra's term-level native functions (see [`super::functions`]);
//! - `a + b`, `-a` and the other operators pick Cassandra's overload for the receiver's type
//!   and run it (see [`super::arithmetic`]); a one-element tuple `(x)` stands for `x`
//!   wherever the receiver is not a tuple, which is how parentheses group terms.
//!
//! [`assignment`] is Cassandra's `testAssignment`, used to pick function overloads and to
//! check elements before evaluating them.

use super::arithmetic::{self, Operand};
pub use super::assign::{unfrozen, value_compatible, Assignment};
use super::error::{ValueError, ValueResult};
use super::functions;
use super::literal::{literal_accepts, literal_display, literal_to_bytes_at};
use super::placeholder::placeholder;
use crate::ast::{BindMarker, Literal, Term};
use bytes::Bytes;
use cairn_engine::model::types::compare;
use cairn_engine::model::types::framing::{
    build_collection, build_map, build_tuple, split_collection, split_map,
};
use cairn_engine::model::types::CqlType;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

/// The value of a term: null, unset (leave the column alone), or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermValue {
    Null,
    Unset,
    Value(Bytes),
}

impl TermValue {
    /// The bytes, if this is a value.
    pub fn bytes(&self) -> Option<&Bytes> {
        match self {
            TermValue::Value(b) => Some(b),
            _ => None,
        }
    }
}

/// What a bind marker is bound to.
pub type BoundValue = TermValue;

/// What evaluating a term needs from the statement's execution.
pub trait TermContext {
    /// The value bound to a marker, `None` if the request bound nothing for it.
    fn bind(&self, marker: &BindMarker) -> Option<BoundValue>;
    /// The statement's current time, in microseconds since the epoch (for `now()`,
    /// `currentTimestamp()`, `'now'`, list cell paths…).
    fn now_micros(&self) -> i64;
    /// Randomness for `uuid()` and the node half of `now()`.
    fn random_u64(&self) -> u64 {
        rand::random()
    }
    /// Whether every marker stands for a placeholder of its receiver's type instead of a
    /// bound value (PREPARE's check of a statement's shape; see [`super::placeholder`]).
    fn placeholders(&self) -> bool {
        false
    }
}

/// The type Cassandra infers for a literal by itself (`getPreferedTypeFor`).
pub fn literal_preferred_type(lit: &Literal) -> Option<CqlType> {
    Some(match lit {
        Literal::String(s) => {
            if s.is_ascii() {
                CqlType::Ascii
            } else {
                CqlType::Text
            }
        }
        Literal::Integer(s) => {
            if s.parse::<i32>().is_ok() {
                CqlType::Int
            } else if s.parse::<i64>().is_ok() {
                CqlType::Bigint
            } else {
                CqlType::Varint
            }
        }
        Literal::Float(_) => CqlType::Double,
        Literal::Boolean(_) => CqlType::Boolean,
        Literal::Uuid(s) => {
            if s.as_bytes().get(14) == Some(&b'1') {
                CqlType::Timeuuid
            } else {
                CqlType::Uuid
            }
        }
        Literal::Blob(_) => CqlType::Tinyint,
        Literal::Duration(_) => CqlType::Duration,
    })
}

/// A term as an operator's operand (see [`arithmetic::resolve`]): it fits a type as
/// [`assignment`] says, and shows as [`term_display`] in messages.
pub fn operand(term: &Term) -> Operand<'_> {
    operand_flags(
        term,
        Operand::new(move || term_display(term), move |ty| assignment(term, ty)),
    )
}

/// [`operand`] sharing `memo` with the resolution it is part of.
fn operand_in<'a>(term: &'a Term, memo: &'a FitMemo) -> Operand<'a> {
    operand_flags(
        term,
        Operand::new(
            move || term_display(term),
            move |ty| assignment_in(term, ty, memo),
        ),
    )
}

fn operand_flags<'a>(term: &Term, op: Operand<'a>) -> Operand<'a> {
    match term {
        Term::Bind(_) => op.bind_marker(),
        Term::List(_) => op.list_literal(),
        _ => op,
    }
}

/// Remembered assignment tests of operations and function calls during one resolution.
///
/// Overload resolution tests each operand against every candidate's parameter type, and a
/// nested operation or call resolves its own operands for each of those tests; without the
/// memo, `1 + (1 + (1 + …))` would cost exponential time. Keys are the term's address (the
/// tree does not move while it is being resolved) and the tested type.
#[derive(Default)]
pub(crate) struct FitMemo {
    seen: RefCell<HashMap<(usize, CqlType), Assignment>>,
}

impl FitMemo {
    fn get_or(&self, term: &Term, ty: &CqlType, f: impl FnOnce() -> Assignment) -> Assignment {
        let key = (term as *const Term as usize, ty.clone());
        if let Some(a) = self.seen.borrow().get(&key) {
            return *a;
        }
        let a = f();
        self.seen.borrow_mut().insert(key, a);
        a
    }
}

/// Cassandra's `testAssignment` of a term to a type.
pub fn assignment(term: &Term, ty: &CqlType) -> Assignment {
    assignment_in(term, ty, &FitMemo::default())
}

/// [`assignment`] sharing `memo` with the resolution it is part of.
pub(crate) fn assignment_in(term: &Term, ty: &CqlType, memo: &FitMemo) -> Assignment {
    let base = unfrozen(ty);
    let all = |terms: &mut dyn Iterator<Item = (&Term, &CqlType)>| {
        for (t, ty) in terms {
            if !assignment_in(t, ty, memo).is_assignable() {
                return Assignment::No;
            }
        }
        Assignment::Weak
    };
    // A resolved function or operation: exact for its own return type, weak for types that
    // can take its values; one that does not resolve is weak, so the caller reports the
    // real error later (`FunctionCall.Raw.testAssignment`).
    let returning = |ret: Option<CqlType>| match ret {
        Some(ret) if unfrozen(&ret) == base => Assignment::Exact,
        Some(ret) if value_compatible(base, &ret) => Assignment::Weak,
        Some(_) => Assignment::No,
        None => Assignment::Weak,
    };
    match term {
        Term::Literal(lit) => {
            if !literal_accepts(lit, base) {
                Assignment::No
            } else if literal_preferred_type(lit).as_ref() == Some(base) {
                Assignment::Exact
            } else {
                Assignment::Weak
            }
        }
        Term::Null => {
            if *base == CqlType::Counter {
                Assignment::No
            } else {
                Assignment::Weak
            }
        }
        Term::Bind(_) => Assignment::Weak,
        Term::List(elems) => match base {
            CqlType::List(e) => all(&mut elems.iter().map(|t| (t, &**e))),
            _ => Assignment::No,
        },
        Term::Set(elems) => match base {
            CqlType::Set(e) => all(&mut elems.iter().map(|t| (t, &**e))),
            _ => Assignment::No,
        },
        Term::Map(entries) => match base {
            CqlType::Map(k, v) => {
                all(&mut entries.iter().flat_map(|(kt, vt)| [(kt, &**k), (vt, &**v)]))
            }
            _ => Assignment::No,
        },
        Term::EmptyBraces => match base {
            CqlType::Set(_) | CqlType::Map(_, _) => Assignment::Weak,
            _ => Assignment::No,
        },
        // `(x)` for a receiver that is not a tuple is `x` (Cassandra's `Tuples.Literal`).
        Term::Tuple(elems) if elems.len() == 1 && !matches!(base, CqlType::Tuple(_)) => elems
            .first()
            .map_or(Assignment::No, |e| assignment_in(e, ty, memo)),
        Term::Tuple(elems) => match base {
            CqlType::Tuple(types) if elems.len() <= types.len() => {
                all(&mut elems.iter().zip(types.iter()))
            }
            _ => Assignment::No,
        },
        Term::UserType(_) => Assignment::No,
        // Its return type is the receiver's (a function factory: always weak, as Cassandra).
        Term::Function(call) if functions::is_from_json(call) => Assignment::Weak,
        Term::Function(call) => memo.get_or(term, base, || {
            returning(functions::return_type_in(call, memo))
        }),
        Term::TypeHint(hint, _) => match hint.to_cql_type() {
            Some(h) if unfrozen(&h) == base => Assignment::Exact,
            Some(h) if value_compatible(base, &h) => Assignment::Weak,
            _ => Assignment::No,
        },
        Term::Arithmetic(op, l, r) => memo.get_or(term, base, || {
            let (l, r) = (operand_in(l, memo), operand_in(r, memo));
            returning(
                arithmetic::resolve(*op, &l, &r, Some(base))
                    .ok()
                    .map(|s| s.ret),
            )
        }),
        Term::Negate(x) => memo.get_or(term, base, || {
            returning(arithmetic::resolve_negation(&operand_in(x, memo), Some(base)).ok())
        }),
    }
}

/// The bind markers inside `term`, evaluated for a receiver named `receiver` of type `ty`,
/// with the name and type Cassandra gives each in a PREPARE result: a marker is its
/// receiver (its own name when it has one); the arguments of a function or operator are
/// received by `arg0(system.blobasint)`, `arg1(system._add)`… of the resolved overload's
/// parameter types; elements of collections and tuples by the element types; a type hint's
/// marker by the hint's receiver. Markers in a call that does not resolve are left out (the
/// statement fails when it runs).
pub fn marker_types(term: &Term, receiver: &str, ty: &CqlType) -> Vec<(usize, String, CqlType)> {
    let mut out = Vec::new();
    collect_markers(term, receiver, ty, &mut out);
    out
}

fn collect_markers(
    term: &Term,
    receiver: &str,
    ty: &CqlType,
    out: &mut Vec<(usize, String, CqlType)>,
) {
    let base = unfrozen(ty);
    match term {
        Term::Bind(m) => out.push((
            m.index,
            m.name.clone().unwrap_or_else(|| receiver.to_string()),
            ty.clone(),
        )),
        Term::List(ts) | Term::Set(ts) => {
            if let CqlType::List(e) | CqlType::Set(e) = base {
                for t in ts {
                    collect_markers(t, receiver, e, out);
                }
            }
        }
        Term::Map(entries) => {
            if let CqlType::Map(k, v) = base {
                for (a, b) in entries {
                    collect_markers(a, receiver, k, out);
                    collect_markers(b, receiver, v, out);
                }
            }
        }
        Term::Tuple(ts) if ts.len() == 1 && !matches!(base, CqlType::Tuple(_)) => {
            for t in ts {
                collect_markers(t, receiver, ty, out);
            }
        }
        Term::Tuple(ts) => {
            if let CqlType::Tuple(types) = base {
                for (t, ty) in ts.iter().zip(types) {
                    collect_markers(t, receiver, ty, out);
                }
            }
        }
        Term::TypeHint(_, t) => collect_markers(t, receiver, ty, out),
        Term::Function(call) => {
            if let Some(specs) = functions::argument_specs(call) {
                for (arg, (name, t)) in call.args.iter().zip(&specs) {
                    collect_markers(arg, name, t, out);
                }
            }
        }
        Term::Arithmetic(op, l, r) => {
            let (lo, ro) = (operand(l), operand(r));
            if let Ok(sig) = arithmetic::resolve(*op, &lo, &ro, Some(base)) {
                let name = arithmetic::function_name(*op);
                collect_markers(l, &format!("arg0(system.{name})"), &sig.left, out);
                collect_markers(r, &format!("arg1(system.{name})"), &sig.right, out);
            }
        }
        Term::Negate(x) => {
            if let Ok(t) = arithmetic::resolve_negation(&operand(x), Some(base)) {
                let name = format!("arg0(system.{})", arithmetic::NEGATE_FUNCTION);
                collect_markers(x, &name, &t, out);
            }
        }
        Term::Literal(_) | Term::Null | Term::EmptyBraces | Term::UserType(_) => {}
    }
}

/// The text Cassandra shows for a term in messages (`getText`).
pub fn term_display(term: &Term) -> String {
    let join = |ts: &[Term]| ts.iter().map(term_display).collect::<Vec<_>>().join(", ");
    match term {
        Term::Literal(lit) => literal_display(lit),
        Term::Null => "NULL".to_string(),
        Term::Bind(m) => match &m.name {
            Some(n) => format!(":{n}"),
            None => "?".to_string(),
        },
        Term::List(ts) => format!("[{}]", join(ts)),
        Term::Set(ts) => format!("{{{}}}", join(ts)),
        Term::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}: {}", term_display(k), term_display(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Term::EmptyBraces => "{}".to_string(),
        Term::Tuple(ts) => format!("({})", join(ts)),
        Term::UserType(fields) => format!(
            "{{{}}}",
            fields
                .iter()
                .map(|(f, v)| format!("{f}: {}", term_display(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Term::Function(call) => format!("{}({})", functions::display_name(call), join(&call.args)),
        Term::TypeHint(t, inner) => format!("({t}){}", term_display(inner)),
        // Operations are function calls to Cassandra, and show as such.
        Term::Arithmetic(op, l, r) => format!(
            "system.\"{}\"({}, {})",
            arithmetic::function_name(*op),
            term_display(l),
            term_display(r)
        ),
        Term::Negate(inner) => format!(
            "system.\"{}\"({})",
            arithmetic::NEGATE_FUNCTION,
            term_display(inner)
        ),
    }
}

/// Evaluates `term` for a receiver named `receiver` of type `ty`.
pub fn term_to_bytes(
    term: &Term,
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let base = unfrozen(ty);
    match term {
        Term::Literal(lit) => literal_value(lit, ty, receiver, ctx),
        Term::Null => {
            if *base == CqlType::Counter {
                Err(ValueError::invalid(
                    "Invalid null value for counter increment/decrement",
                ))
            } else {
                Ok(TermValue::Null)
            }
        }
        Term::Bind(_) if ctx.placeholders() => Ok(TermValue::Value(placeholder(ty))),
        Term::Bind(marker) => bound_value(term, marker, ty, ctx),
        Term::List(elems) => list_literal(elems, ty, receiver, ctx),
        Term::Set(elems) => set_literal(elems, ty, receiver, ctx),
        Term::EmptyBraces => match base {
            CqlType::Set(_) | CqlType::Map(_, _) => {
                Ok(TermValue::Value(Bytes::from(0i32.to_be_bytes().to_vec())))
            }
            _ => Err(kind_error(receiver, ty, "set")),
        },
        Term::Map(entries) => map_literal(entries, ty, receiver, ctx),
        // `(x)` for a receiver that is not a tuple is `x`: that is how `(1 + 2) * 3` reads.
        Term::Tuple(elems) if elems.len() == 1 && !matches!(base, CqlType::Tuple(_)) => {
            match elems.first() {
                Some(e) => term_to_bytes(e, ty, receiver, ctx),
                None => Err(kind_error(receiver, ty, "tuple")),
            }
        }
        Term::Tuple(elems) => tuple_literal(elems, ty, receiver, ctx),
        Term::UserType(_) => Err(ValueError::invalid(format!(
            "Invalid user type literal for {receiver} of type {}",
            ty.name()
        ))),
        Term::Function(call) if functions::is_from_json(call) => {
            functions::from_json_call(call, ty, receiver, ctx)
        }
        Term::Function(call) => function_value(call, ty, receiver, ctx),
        Term::TypeHint(hint, inner) => type_hinted(term, hint, inner, ty, receiver, ctx),
        Term::Arithmetic(op, l, r) => arithmetic_value(*op, l, r, base, ctx),
        Term::Negate(x) => negation(x, base, ctx),
    }
}

/// "Invalid list literal for r of type t" and its kin: a literal of the wrong kind.
fn kind_error(receiver: &str, ty: &CqlType, kind: &str) -> ValueError {
    ValueError::invalid(format!(
        "Invalid {kind} literal for {receiver} of type {}",
        ty.name()
    ))
}

/// A constant, at the statement's time (for `'now'`), with the receiver's full type name in
/// its errors.
fn literal_value(
    lit: &crate::ast::Literal,
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let base = unfrozen(ty);
    let now_ms = ctx.now_micros().div_euclid(1000);
    literal_to_bytes_at(lit, base, receiver, now_ms)
        .map_err(|e| match e {
            ValueError::InvalidConstant {
                kind,
                text,
                receiver,
                ..
            } => ValueError::InvalidConstant {
                kind,
                text,
                receiver,
                type_name: ty.name(),
            },
            other => other,
        })
        .map(TermValue::Value)
}

/// A bound value, checked against its type and put in canonical order.
fn bound_value(
    term: &Term,
    marker: &crate::ast::BindMarker,
    ty: &CqlType,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let bound = ctx.bind(marker).ok_or_else(|| {
        ValueError::invalid(format!(
            "No value bound for bind marker {} ({})",
            marker.index,
            term_display(term)
        ))
    })?;
    match bound {
        TermValue::Value(bytes) => {
            validate_bound(ty, &bytes)?;
            Ok(TermValue::Value(normalize_collection(ty, bytes)))
        }
        other => Ok(other),
    }
}

/// `[a, b]` for a list receiver.
fn list_literal(
    elems: &[Term],
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    match unfrozen(ty) {
        CqlType::List(elem_ty) => collection_literal(elems, elem_ty, "list", receiver, ctx),
        _ => Err(kind_error(receiver, ty, "list")),
    }
}

/// `{a, b}` for a set receiver, elements sorted and deduplicated.
fn set_literal(
    elems: &[Term],
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    match unfrozen(ty) {
        CqlType::Set(elem_ty) => collection_literal(elems, elem_ty, "set", receiver, ctx),
        _ => Err(kind_error(receiver, ty, "set")),
    }
}

/// The elements of a list or set literal (`kind`), each checked against `elem_ty` first;
/// a set's sorted and deduplicated. An unset element makes the whole value unset.
fn collection_literal(
    elems: &[Term],
    elem_ty: &CqlType,
    kind: &str,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let spec = format!("value({receiver})");
    check_elements(elems, elem_ty, |t| {
        format!(
            "Invalid {kind} literal for {receiver}: value {} is not of type {}",
            term_display(t),
            elem_ty.name()
        )
    })?;
    let mut out = Vec::with_capacity(elems.len());
    for e in elems {
        match element(e, elem_ty, &spec, ctx)? {
            Some(b) => out.push(b),
            None => return Ok(TermValue::Unset),
        }
    }
    if kind == "set" {
        out = sorted_set(elem_ty, out);
    }
    Ok(TermValue::Value(Bytes::from(build_collection(&out))))
}

/// `{k: v}` for a map receiver, entries sorted by key.
fn map_literal(
    entries: &[(Term, Term)],
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let base = unfrozen(ty);
    let CqlType::Map(key_ty, val_ty) = base else {
        return Err(kind_error(receiver, ty, "map"));
    };
    for (k, v) in entries {
        if !assignment(k, key_ty).is_assignable() {
            return Err(ValueError::invalid(format!(
                "Invalid map literal for {receiver}: key {} is not of type {}",
                term_display(k),
                key_ty.name()
            )));
        }
        if !assignment(v, val_ty).is_assignable() {
            return Err(ValueError::invalid(format!(
                "Invalid map literal for {receiver}: value {} is not of type {}",
                term_display(v),
                val_ty.name()
            )));
        }
    }
    let (kspec, vspec) = (format!("key({receiver})"), format!("value({receiver})"));
    let mut out = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let key = match term_to_bytes(k, key_ty, &kspec, ctx)? {
            TermValue::Value(b) => b,
            TermValue::Null => return Err(null_in_collection()),
            TermValue::Unset => {
                return Err(ValueError::invalid(
                    "unset value is not supported for map keys",
                ))
            }
        };
        match element(v, val_ty, &vspec, ctx)? {
            Some(val) => out.push((key, val)),
            None => return Ok(TermValue::Unset),
        }
    }
    Ok(TermValue::Value(Bytes::from(build_map(&sorted_map(
        key_ty, out,
    )))))
}

/// `(a, b)` for a tuple receiver.
fn tuple_literal(
    elems: &[Term],
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let base = unfrozen(ty);
    let CqlType::Tuple(types) = base else {
        return Err(ValueError::invalid(format!(
            "Invalid tuple type literal for {receiver} of type {}",
            ty.name()
        )));
    };
    if elems.len() > types.len() {
        return Err(ValueError::invalid(format!(
            "Invalid tuple literal for {receiver}: too many elements. Type {} expects {} but got {}",
            base.name(),
            types.len(),
            elems.len()
        )));
    }
    for (i, (e, t)) in elems.iter().zip(types).enumerate() {
        if !assignment(e, t).is_assignable() {
            return Err(ValueError::invalid(format!(
                "Invalid tuple literal for {receiver}: component {i} is not of type {}",
                t.name()
            )));
        }
    }
    let mut out = Vec::with_capacity(elems.len());
    for (i, (e, t)) in elems.iter().zip(types).enumerate() {
        match term_to_bytes(e, t, &format!("{receiver}[{i}]"), ctx)? {
            TermValue::Value(b) => out.push(Some(b)),
            TermValue::Null => out.push(None),
            TermValue::Unset => {
                return Err(ValueError::invalid(format!(
                    "Invalid unset value for tuple field number {i}"
                )))
            }
        }
    }
    Ok(TermValue::Value(Bytes::from(build_tuple(&out))))
}

/// A function call's result, if its type fits the receiver.
fn function_value(
    call: &crate::ast::FunctionCall<Term>,
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let base = unfrozen(ty);
    let (ret, value) = functions::call(call, ctx)?;
    if !value_compatible(base, &ret) {
        return Err(ValueError::invalid(format!(
            "Type error: cannot assign result of function {} (type {}) to {receiver} (type {})",
            functions::qualified_name(call),
            ret.name(),
            ty.name()
        )));
    }
    Ok(value)
}

/// `(type) term`.
fn type_hinted(
    term: &Term,
    hint: &crate::ast::TypeName,
    inner: &Term,
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let base = unfrozen(ty);
    let text = term_display(term);
    let Some(hinted) = hint.to_cql_type() else {
        return Err(ValueError::invalid(format!(
            "Cannot cast value {} to type {hint}",
            term_display(inner)
        )));
    };
    if !assignment(inner, &hinted).is_assignable() {
        return Err(ValueError::invalid(format!(
            "Cannot cast value {} to type {hint}",
            term_display(inner)
        )));
    }
    if !value_compatible(base, &hinted) {
        return Err(ValueError::invalid(format!(
            "Cannot assign value {text} to {receiver} of type {}",
            ty.name()
        )));
    }
    term_to_bytes(inner, &hinted, &text, ctx)
}

/// `a + b` and the other operators, with Cassandra's overload resolution.
fn arithmetic_value(
    op: crate::ast::ArithmeticOp,
    l: &Term,
    r: &Term,
    base: &CqlType,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let memo = FitMemo::default();
    let (lo, ro) = (operand_in(l, &memo), operand_in(r, &memo));
    let sig = arithmetic::resolve(op, &lo, &ro, Some(base))?;
    let name = format!("system.{}", arithmetic::function_name(op));
    // Both arguments are bound (an unset one is an error) before a null one makes
    // the result null, as Cassandra's `FunctionCall` does.
    let lv = operation_arg(l, &sig.left, 0, &name, ctx)?;
    let rv = operation_arg(r, &sig.right, 1, &name, ctx)?;
    let (Some(lv), Some(rv)) = (lv, rv) else {
        return Ok(TermValue::Null);
    };
    Ok(
        match arithmetic::apply(op, &sig.left, &lv, &sig.right, &rv)? {
            Some(b) => TermValue::Value(b),
            None => TermValue::Null,
        },
    )
}

/// `- a`.
fn negation(x: &Term, base: &CqlType, ctx: &dyn TermContext) -> ValueResult<TermValue> {
    let arg_ty = arithmetic::resolve_negation(&operand(x), Some(base))?;
    let name = format!("system.{}", arithmetic::NEGATE_FUNCTION);
    let Some(v) = operation_arg(x, &arg_ty, 0, &name, ctx)? else {
        return Ok(TermValue::Null);
    };
    Ok(match arithmetic::negate(&arg_ty, &v)? {
        Some(b) => TermValue::Value(b),
        None => TermValue::Null,
    })
}

/// Argument `index` of an operator's function, evaluated for the parameter type (receiver
/// `arg0(system._add)`, as Cassandra names it): `None` for null, an error for unset.
fn operation_arg(
    term: &Term,
    ty: &CqlType,
    index: usize,
    function: &str,
    ctx: &dyn TermContext,
) -> ValueResult<Option<Bytes>> {
    match term_to_bytes(term, ty, &format!("arg{index}({function})"), ctx)? {
        TermValue::Value(b) => Ok(Some(b)),
        TermValue::Null => Ok(None),
        TermValue::Unset => Err(ValueError::invalid(format!(
            "Invalid unset value for argument in call to function {}",
            function.trim_start_matches("system.")
        ))),
    }
}

fn null_in_collection() -> ValueError {
    ValueError::invalid("null is not supported inside collections")
}

fn check_elements(
    elems: &[Term],
    elem_ty: &CqlType,
    msg: impl Fn(&Term) -> String,
) -> ValueResult<()> {
    match elems
        .iter()
        .find(|t| !assignment(t, elem_ty).is_assignable())
    {
        Some(t) => Err(ValueError::invalid(msg(t))),
        None => Ok(()),
    }
}

/// One collection element: `Some(bytes)`, `None` for unset; null is an error.
fn element(
    t: &Term,
    ty: &CqlType,
    spec: &str,
    ctx: &dyn TermContext,
) -> ValueResult<Option<Bytes>> {
    match term_to_bytes(t, ty, spec, ctx)? {
        TermValue::Value(b) => Ok(Some(b)),
        TermValue::Null => Err(null_in_collection()),
        TermValue::Unset => Ok(None),
    }
}

/// Sorts set elements by the element order and drops duplicates (first kept).
pub fn sorted_set(elem_ty: &CqlType, mut elems: Vec<Bytes>) -> Vec<Bytes> {
    elems.sort_by(|a, b| compare(elem_ty, a, b));
    elems.dedup_by(|a, b| compare(elem_ty, a, b) == Ordering::Equal);
    elems
}

/// Sorts map entries by key order; for equal keys the last entry wins.
pub fn sorted_map(key_ty: &CqlType, entries: Vec<(Bytes, Bytes)>) -> Vec<(Bytes, Bytes)> {
    let mut indexed: Vec<(usize, (Bytes, Bytes))> = entries.into_iter().enumerate().collect();
    indexed.sort_by(|(i, (a, _)), (j, (b, _))| compare(key_ty, a, b).then(j.cmp(i)));
    indexed.dedup_by(|a, b| compare(key_ty, &a.1 .0, &b.1 .0) == Ordering::Equal);
    indexed.into_iter().map(|(_, e)| e).collect()
}

/// The canonical form of a serialized value, as Cassandra's deserialization of a bound value
/// gives it: sets and maps re-sorted and deduplicated at every depth (inside lists, tuples,
/// map values and other sets), so that equal values have equal bytes and lookups of frozen
/// collections match. Anything malformed is returned unchanged (validation reports it).
pub fn normalize_collection(ty: &CqlType, bytes: Bytes) -> Bytes {
    canonical(ty, &bytes).map_or(bytes, Bytes::from)
}

fn canonical(ty: &CqlType, bytes: &[u8]) -> Option<Vec<u8>> {
    let canon = |t: &CqlType, b: &[u8]| {
        canonical(t, b).map_or_else(|| Bytes::copy_from_slice(b), Bytes::from)
    };
    match unfrozen(ty) {
        CqlType::Set(e) => {
            let elems = split_collection(bytes)?
                .into_iter()
                .map(|x| canon(e, x))
                .collect();
            Some(build_collection(&sorted_set(e, elems)))
        }
        CqlType::List(e) => {
            let elems: Vec<Bytes> = split_collection(bytes)?
                .into_iter()
                .map(|x| canon(e, x))
                .collect();
            Some(build_collection(&elems))
        }
        CqlType::Map(k, v) => {
            let entries = split_map(bytes)?
                .into_iter()
                .map(|(kb, vb)| (canon(k, kb), canon(v, vb)))
                .collect();
            Some(build_map(&sorted_map(k, entries)))
        }
        CqlType::Tuple(types) => {
            let parts = cairn_engine::model::types::framing::split_tuple(bytes)?;
            let out: Vec<Option<Bytes>> = parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| {
                    p.map(|b| match types.get(i) {
                        Some(t) => canon(t, b),
                        None => Bytes::copy_from_slice(b),
                    })
                })
                .collect();
            Some(build_tuple(&out))
        }
        _ => None,
    }
}

/// Validates a bound value, with Cassandra's `MarshalException` texts for native types.
pub fn validate_bound(ty: &CqlType, v: &[u8]) -> ValueResult<()> {
    use CqlType as T;
    let n = v.len();
    let msg = match unfrozen(ty) {
        T::Int if n != 4 && n != 0 => format!("Expected 4 or 0 byte int ({n})"),
        T::Bigint | T::Counter if n != 8 && n != 0 => format!("Expected 8 or 0 byte long ({n})"),
        T::Smallint if n != 2 => format!("Expected 2 bytes for a smallint ({n})"),
        T::Tinyint if n != 1 => format!("Expected 1 byte for a tinyint ({n})"),
        T::Float if n != 4 && n != 0 => format!("Expected 4 or 0 byte value for a float ({n})"),
        T::Double if n != 8 && n != 0 => format!("Expected 8 or 0 byte value for a double ({n})"),
        T::Boolean if n > 1 => format!("Expected 1 or 0 byte value ({n})"),
        T::Timestamp if n != 8 && n != 0 => format!("Expected 8 or 0 byte long for date ({n})"),
        T::Date if n != 4 => format!("Expected 4 byte long for date ({n})"),
        T::Time if n != 8 => format!("Expected 8 byte long for time ({n})"),
        T::Uuid if n != 16 && n != 0 => format!("UUID should be 16 or 0 bytes ({n})"),
        T::Timeuuid if n != 16 && n != 0 => format!("TimeUUID should be 16 or 0 bytes ({n})"),
        T::Timeuuid if n == 16 && v.get(6).is_some_and(|b| b >> 4 != 1) => {
            "Invalid version for TimeUUID type.".to_string()
        }
        T::Text if std::str::from_utf8(v).is_err() => "String didn't validate.".to_string(),
        T::Ascii if !v.is_ascii() => {
            let b = v.iter().find(|b| !b.is_ascii()).copied().unwrap_or(0);
            format!("Invalid byte for ascii: {}", b as i8)
        }
        _ => match ty.validate(v) {
            Ok(()) => return Ok(()),
            Err(e) => e.to_string(),
        },
    };
    Err(ValueError::Marshal(msg))
}
