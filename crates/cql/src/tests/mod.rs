//! Tests of the whole front end: statement tables, lexing round trips, error messages
//! and positions, and fuzz-style robustness.

mod errors;
mod expressions;
mod fuzz;
mod lexing;
mod statements;

/// Parses each input and compares the statement's `Debug` form (or `ERR <message>`).
fn check(cases: &[(&str, &str)]) {
    for (input, expected) in cases {
        let got = match crate::parse_statement(input) {
            Ok(p) => format!("{:?}", p.statement),
            Err(e) => format!("ERR {e}"),
        };
        assert_eq!(&got, expected, "input: {input}");
    }
}
