//! The text Cassandra shows for a term in messages (its `getText`): `[1, 2]`, `:name`,
//! `system.blobasint(0x01)`, `system."_add"(a, 1)`.

use super::arithmetic;
use super::functions::display_name;
use super::literal::literal_display;
use crate::ast::Term;

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
        Term::Function(call) => format!("{}({})", display_name(call), join(&call.args)),
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
