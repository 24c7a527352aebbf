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
//! Term evaluation is the top of this module's rooms: it dispatches on the kind of term to
//! the literal, collection, function and operator rules below it. How a term fits a type
//! and which overload a call picks are [`super::fit`]'s; the function catalogue is
//! [`super::functions`]; what a term evaluates to is [`super::value`]. [`call`] evaluates a
//! function call (its arguments are terms, so it lives here), and [`marker_types`] names
//! the bind markers inside a term for PREPARE.

use super::arithmetic;
pub use super::assign::{unfrozen, value_compatible, Assignment};
use super::canonical::{normalize_collection, sorted_map, sorted_set};
pub use super::display::term_display;
use super::error::{ValueError, ValueResult};
use super::fit::{argument_specs, assignment_in, operand_in, resolve, FitMemo};
pub use super::fit::{assignment, operand, return_type};
use super::functions::{self, is_from_json, qualified_name, Signature};
use super::json;
use super::literal::literal_to_bytes_at;
use super::masking;
use super::placeholder::placeholder;
use super::value::validate_bound;
pub use super::value::{BoundValue, TermContext, TermValue};
use crate::ast::{FunctionCall, Term};
use bytes::Bytes;
use cairn_engine::model::types::framing::{build_collection, build_map, build_tuple};
use cairn_engine::model::types::CqlType;

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
            if let Some(types) = base.components() {
                for (t, ty) in ts.iter().zip(types) {
                    collect_markers(t, receiver, ty, out);
                }
            }
        }
        // Cassandra's `UserTypes.fieldSpecOf`: a field's marker is `column.field`.
        Term::UserType(fields) => {
            if let CqlType::Udt(u) = base {
                for (f, t) in fields {
                    if let Some((_, fty)) = u.field(f) {
                        collect_markers(t, &format!("{receiver}.{f}"), fty, out);
                    }
                }
            }
        }
        Term::TypeHint(_, t) => collect_markers(t, receiver, ty, out),
        Term::Function(call) => {
            if let Some(specs) = argument_specs(call) {
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
        Term::Literal(_) | Term::Null | Term::EmptyBraces => {}
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
        Term::UserType(fields) => user_type_literal(fields, ty, receiver, ctx),
        Term::Function(call) if is_from_json(call) => from_json_call(call, ty, receiver, ctx),
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
    // A user type is a tuple to Cassandra's `Tuples.Literal` too.
    let Some(types) = base.components() else {
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

/// `{field: value, …}` for a user-type receiver (Cassandra's `UserTypes.Literal`): every
/// field of the type, the missing ones null.
fn user_type_literal(
    fields: &[(String, Term)],
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let CqlType::Udt(u) = unfrozen(ty) else {
        return Err(ValueError::invalid(format!(
            "Invalid user type literal for {receiver} of type {}",
            ty.name()
        )));
    };
    for (name, t) in u.fields() {
        if let Some((_, e)) = fields.iter().find(|(f, _)| f == name) {
            if !assignment(e, t).is_assignable() {
                return Err(ValueError::invalid(format!(
                    "Invalid user type literal for {receiver}: field {name} is not of type {}",
                    t.name()
                )));
            }
        }
    }
    if let Some((f, _)) = fields.iter().find(|(f, _)| u.field_position(f).is_none()) {
        return Err(ValueError::invalid(format!(
            "Unknown field '{f}' in value of user defined type {}",
            u.name
        )));
    }
    let mut out = Vec::with_capacity(u.field_types.len());
    for (name, t) in u.fields() {
        let value = match fields.iter().find(|(f, _)| f == name) {
            Some((_, e)) => term_to_bytes(e, t, &format!("{receiver}.{name}"), ctx)?,
            None => TermValue::Null,
        };
        match value {
            TermValue::Value(b) => out.push(Some(b)),
            TermValue::Null => out.push(None),
            TermValue::Unset => {
                return Err(ValueError::invalid(format!(
                    "Invalid unset value for field '{name}' of user defined type {}",
                    u.name
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
    let (ret, value) = self::call(call, ctx)?;
    if !value_compatible(base, &ret) {
        return Err(ValueError::invalid(format!(
            "Type error: cannot assign result of function {} (type {}) to {receiver} (type {})",
            qualified_name(call),
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

/// Evaluates a call: its return type and value.
pub fn call(call: &FunctionCall<Term>, ctx: &dyn TermContext) -> ValueResult<(CqlType, TermValue)> {
    let (name, sig) = resolve(call)?;
    let qualified = format!("system.{name}");
    if masking::is_masking_fn(&name) {
        return masking_call(&name, &sig, call, ctx);
    }
    let mut args = Vec::with_capacity(call.args.len());
    for (i, (arg, t)) in call.args.iter().zip(&sig.args).enumerate() {
        let spec = format!("arg{i}({qualified})");
        match term_to_bytes(arg, t, &spec, ctx)? {
            TermValue::Value(b) => args.push(b),
            // `toJson(null)` is the text `null`; every other function returns null.
            TermValue::Null if matches!(name.as_str(), "tojson" | "to_json") => {
                return Ok((sig.ret, TermValue::Value(Bytes::from_static(b"null"))))
            }
            TermValue::Null => return Ok((sig.ret, TermValue::Null)),
            TermValue::Unset => {
                return Err(ValueError::invalid(format!(
                    "Invalid unset value for argument in call to function {qualified}"
                )))
            }
        }
    }
    let value = functions::apply(&name, &sig, &args, ctx)?;
    Ok((
        sig.ret,
        match value {
            Some(b) => TermValue::Value(b),
            None => TermValue::Null,
        },
    ))
}

/// A masking function's call: null arguments are passed on, not a null result
/// ([`masking`]).
fn masking_call(
    name: &str,
    sig: &Signature,
    call: &FunctionCall<Term>,
    ctx: &dyn TermContext,
) -> ValueResult<(CqlType, TermValue)> {
    let mut args = Vec::with_capacity(call.args.len());
    for (i, (arg, t)) in call.args.iter().zip(&sig.args).enumerate() {
        let spec = format!("arg{i}(system.{name})");
        args.push(match term_to_bytes(arg, t, &spec, ctx)? {
            TermValue::Value(b) => Some(b),
            TermValue::Null => None,
            TermValue::Unset => {
                return Err(ValueError::invalid(format!(
                    "Invalid unset value for argument in call to function system.{name}"
                )))
            }
        });
    }
    let value = match masking::apply(name, sig, &args)? {
        Some(b) => TermValue::Value(b),
        None => TermValue::Null,
    };
    Ok((sig.ret.clone(), value))
}

/// `fromJson(text)` for a receiver of type `ty` (Cassandra's `FromJsonFct`, whose return
/// type is the receiver's), for the calls [`is_from_json`] finds.
fn from_json_call(
    call: &FunctionCall<Term>,
    ty: &CqlType,
    receiver: &str,
    ctx: &dyn TermContext,
) -> ValueResult<TermValue> {
    let name = call.name.name.as_str();
    let [arg] = call.args.as_slice() else {
        return Err(ValueError::invalid(format!(
            "Invalid number of arguments for function system.{name}(text)"
        )));
    };
    if !assignment_in(arg, &CqlType::Text, &FitMemo::default()).is_assignable() {
        return Err(ValueError::invalid(format!(
            "Type error: {} cannot be passed as argument 0 of function system.{name} of type text",
            term_display(arg)
        )));
    }
    match term_to_bytes(arg, &CqlType::Text, &format!("arg0(system.{name})"), ctx)? {
        TermValue::Value(b) => {
            let text = std::str::from_utf8(&b)
                .map_err(|_| ValueError::marshal("String didn't validate."))?;
            json::from_json_function(ty, text, name, receiver)
        }
        TermValue::Null => Ok(TermValue::Null),
        TermValue::Unset => Err(ValueError::invalid(format!(
            "Invalid unset value for argument in call to function {name}"
        ))),
    }
}
