//! How a term fits a type, and which overload a function call picks.
//!
//! [`assignment`] is Cassandra's `testAssignment` of a term to a type, used to pick
//! function and operator overloads and to check elements before evaluating them;
//! [`resolve`] is Cassandra's `FunctionResolver` for the term-level native functions of
//! [`super::functions`]: the signatures whose parameter types every argument can be
//! assigned to; if several remain, those matched exactly; if still several, the call is
//! ambiguous. The two recurse into each other (a call fits a type by its resolved return
//! type; resolving it tests its arguments' fit), so they live in one room, under term
//! evaluation ([`super::term`]) and above the function catalogue.

use super::arithmetic::{self, Operand};
use super::assign::{unfrozen, value_compatible, Assignment};
use super::collection_fns;
use super::display::term_display;
use super::error::{ValueError, ValueResult};
use super::functions::{describe, display_name, is_from_json, signatures, system_name, Signature};
use super::literal::{literal_accepts, literal_preferred_type, literal_to_bytes};
use super::masking;
use crate::ast::{FunctionCall, Term};
use cairn_engine::model::types::CqlType;
use std::cell::RefCell;
use std::collections::HashMap;

/// A term as an operator's operand (see [`arithmetic::resolve`]): it fits a type as
/// [`assignment`] says, and shows as [`term_display`] in messages.
pub fn operand(term: &Term) -> Operand<'_> {
    operand_flags(
        term,
        Operand::new(move || term_display(term), move |ty| assignment(term, ty)),
    )
}

/// [`operand`] sharing `memo` with the resolution it is part of.
pub(crate) fn operand_in<'a>(term: &'a Term, memo: &'a FitMemo) -> Operand<'a> {
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
        Term::Tuple(elems) => match base.components() {
            Some(types) if elems.len() <= types.len() => all(&mut elems.iter().zip(types.iter())),
            _ => Assignment::No,
        },
        // Cassandra's `testUserTypeAssignment`: known fields, each assignable; weak at best.
        Term::UserType(fields) => match base {
            CqlType::Udt(u) => {
                let known = fields.iter().all(|(f, _)| u.field_position(f).is_some());
                let fits = fields.iter().all(|(f, t)| {
                    u.field(f)
                        .is_some_and(|(_, fty)| assignment_in(t, fty, memo).is_assignable())
                });
                if known && fits {
                    Assignment::Weak
                } else {
                    Assignment::No
                }
            }
            _ => Assignment::No,
        },
        // Its return type is the receiver's (a function factory: always weak, as Cassandra).
        Term::Function(call) if is_from_json(call) => Assignment::Weak,
        Term::Function(call) => memo.get_or(term, base, || returning(return_type_in(call, memo))),
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

/// Picks the signature for a call, with Cassandra's resolution errors: the function's
/// unqualified name and the signature.
pub fn resolve(call: &FunctionCall<Term>) -> ValueResult<(String, Signature)> {
    resolve_in(call, &FitMemo::default())
}

fn resolve_in(call: &FunctionCall<Term>, memo: &FitMemo) -> ValueResult<(String, Signature)> {
    let assignment = |t: &Term, ty: &CqlType| assignment_in(t, ty, memo);
    if let Some(name @ ("tojson" | "to_json")) = system_name(call) {
        return to_json_signature(name, call, memo).map(|sig| (name.to_string(), sig));
    }
    if let Some(name) = system_name(call).filter(|n| masking::is_masking_fn(n)) {
        let names: Vec<String> = call.args.iter().map(term_display).collect();
        let sig = masking_signature_in(name, call, &names, true, memo)?;
        return Ok((name.to_string(), sig));
    }
    if let Some(name) = system_name(call).filter(|n| collection_fns::is_collection_fn(n)) {
        let [arg] = call.args.as_slice() else {
            return Err(ValueError::invalid(format!(
                "Invalid number of arguments for function system.{name}({})",
                collection_fns::parameter(name)
            )));
        };
        let ty = argument_type(arg, memo).ok_or_else(|| {
            ValueError::invalid(format!(
                "Cannot infer type of argument {} in call to function system.{name}({}): use type casts to disambiguate",
                term_display(arg),
                collection_fns::parameter(name)
            ))
        })?;
        let sig = collection_fns::signature(name, &ty, &term_display(arg))?;
        return Ok((name.to_string(), sig));
    }
    let unknown = || ValueError::invalid(format!("Unknown function {} called", display_name(call)));
    let name = system_name(call).ok_or_else(unknown)?;
    let sigs = signatures(name).ok_or_else(unknown)?;
    let qualified = format!("system.{name}");
    if let [only] = sigs.as_slice() {
        if only.args.len() != call.args.len() {
            return Err(ValueError::invalid(format!(
                "Invalid number of arguments in call to function {qualified}: {} required but {} provided",
                only.args.len(),
                call.args.len()
            )));
        }
        for (i, (arg, t)) in call.args.iter().zip(&only.args).enumerate() {
            if !assignment(arg, t).is_assignable() {
                return Err(ValueError::invalid(format!(
                    "Type error: {} cannot be passed as argument {i} of function {qualified} of type {}",
                    term_display(arg),
                    t.name()
                )));
            }
        }
        return Ok((name.to_string(), only.clone()));
    }
    let scored: Vec<(&Signature, bool)> = sigs
        .iter()
        .filter(|s| s.args.len() == call.args.len())
        .filter_map(|s| {
            let results: Vec<Assignment> = call
                .args
                .iter()
                .zip(&s.args)
                .map(|(a, t)| assignment(a, t))
                .collect();
            results
                .iter()
                .all(|r| r.is_assignable())
                .then(|| (s, results.iter().all(|r| *r == Assignment::Exact)))
        })
        .collect();
    let known = || {
        sigs.iter()
            .map(|s| describe(name, s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match scored.as_slice() {
        [] => Err(ValueError::invalid(format!(
            "Invalid call to function {}, none of its type signatures match (known type signatures: {})",
            display_name(call),
            known()
        ))),
        [(one, _)] => Ok((name.to_string(), (*one).clone())),
        many => {
            let exact: Vec<&Signature> = many.iter().filter(|(_, e)| *e).map(|(s, _)| *s).collect();
            if let [one] = exact.as_slice() {
                return Ok((name.to_string(), (*one).clone()));
            }
            let candidates: Vec<String> = many.iter().map(|(s, _)| describe(name, s)).collect();
            Err(ValueError::invalid(format!(
                "Ambiguous call to function {} (can be matched by following signatures: {}): use type casts to disambiguate",
                display_name(call),
                candidates.join(", ")
            )))
        }
    }
}

/// A masking function's signature ([`masking`]): made from the first argument's own type
/// (a literal's preferred type, a type hint's, a function's return type), the later
/// arguments tested against the parameters that type gives; constant padding and algorithm
/// arguments checked now, as Cassandra checks them when it prepares the call. `names` are
/// the arguments as the caller shows them in messages (a selection names a column argument
/// by the column).
pub(crate) fn masking_signature(
    call: &FunctionCall<Term>,
    names: &[String],
    check_constants: bool,
) -> ValueResult<Signature> {
    let name = call.name.name.as_str();
    masking_signature_in(name, call, names, check_constants, &FitMemo::default())
}

fn masking_signature_in(
    name: &str,
    call: &FunctionCall<Term>,
    names: &[String],
    check_constants: bool,
    memo: &FitMemo,
) -> ValueResult<Signature> {
    if !masking::takes(name, call.args.len()) {
        return Err(masking::arity_error(name));
    }
    let shown = |i: usize| names.get(i).cloned().unwrap_or_default();
    let own_type = |arg: &Term| match arg {
        Term::Literal(lit) => literal_preferred_type(lit),
        other => argument_type(other, memo),
    };
    let first_arg = call
        .args
        .first()
        .ok_or_else(|| masking::arity_error(name))?;
    let first = own_type(first_arg).ok_or_else(|| {
        ValueError::invalid(format!(
            "Cannot infer type of argument {} in call to function system.{name}({}): use type casts to disambiguate",
            shown(0),
            masking::parameters(name)
        ))
    })?;
    let rest = masking::rest_params(name, &first, &shown(0), call.args.len())?;
    for (i, (arg, param)) in call.args.iter().skip(1).zip(&rest).enumerate() {
        let index = i + 1;
        if !assignment_in(arg, param.ty(), memo).is_assignable() {
            return Err(match param {
                masking::Param::Fixed(want) => masking::fixed_param_error(
                    name,
                    want,
                    &shown(index),
                    &own_type(arg).unwrap_or_else(|| want.clone()),
                ),
                masking::Param::SameAsFirst(want) => ValueError::invalid(format!(
                    "Type error: {} cannot be passed as argument {index} of function system.{name} of type {}",
                    shown(index),
                    want.name()
                )),
            });
        }
        // (A column mask's constants are checked only when it runs, as Cassandra does.)
        if let (Term::Literal(lit), true) = (arg, check_constants) {
            let receiver = format!("arg{index}(system.{name})");
            let value = literal_to_bytes(lit, param.ty(), &receiver)?;
            masking::check_constant(name, index, Some(&value))?;
        }
    }
    Ok(masking::signature(name, &first, &rest))
}

/// `toJson(x)` takes any type: the argument's own type (a type hint, a function's return
/// type, a literal's preferred type), returning `text` (Cassandra's `ToJsonFct` factory).
fn to_json_signature(
    name: &str,
    call: &FunctionCall<Term>,
    memo: &FitMemo,
) -> ValueResult<Signature> {
    let [arg] = call.args.as_slice() else {
        return Err(ValueError::invalid(format!(
            "Invalid number of arguments for function system.{name}(any)"
        )));
    };
    let ty = match arg {
        Term::Literal(lit) => literal_preferred_type(lit),
        other => argument_type(other, memo),
    }
    .ok_or_else(|| {
        ValueError::invalid(format!(
            "Cannot infer type of argument {} in call to function system.{name}(any): use type casts to disambiguate",
            term_display(arg)
        ))
    })?;
    Ok(Signature::new(&[ty], CqlType::Text))
}

/// The type an argument has of its own, for a function taking any type: a type hint's, a
/// function's return type (not a literal's: its type comes from the receiver).
fn argument_type(arg: &Term, memo: &FitMemo) -> Option<CqlType> {
    match arg {
        Term::TypeHint(hint, _) => hint.to_cql_type(),
        Term::Function(inner) => return_type_in(inner, memo),
        _ => None,
    }
}

/// The receivers of a call's arguments as Cassandra names them when it prepares the call
/// (`arg0(system.blobasint)`) with their types; `None` if the call does not resolve.
/// `fromJson` takes `text`.
pub fn argument_specs(call: &FunctionCall<Term>) -> Option<Vec<(String, CqlType)>> {
    let types = if is_from_json(call) {
        vec![CqlType::Text]
    } else {
        resolve(call).ok()?.1.args
    };
    let name = call.name.name.to_lowercase();
    Some(
        types
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("arg{i}(system.{name})"), t))
            .collect(),
    )
}

/// The return type of a call, if it resolves.
pub fn return_type(call: &FunctionCall<Term>) -> Option<CqlType> {
    resolve(call).ok().map(|(_, s)| s.ret)
}

/// [`return_type`] sharing the memo of the resolution it is part of.
pub(crate) fn return_type_in(call: &FunctionCall<Term>, memo: &FitMemo) -> Option<CqlType> {
    resolve_in(call, memo).ok().map(|(_, s)| s.ret)
}
