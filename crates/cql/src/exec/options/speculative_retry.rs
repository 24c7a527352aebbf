//! `speculative_retry` and `additional_write_policy` values, parsed, refused and shown back as
//! Cassandra's `SpeculativeRetryPolicy.fromString` and the policies' `toString` do:
//! `ALWAYS`, `NEVER` (or `NONE`), `<p>p` / `<p>percentile` with `0 < p < 100`, `<ms>ms`, and
//! `MIN(…)` / `MAX(…)` of a percentile and a fixed time. Case does not matter; the value is
//! stored in its canonical spelling (`99.5p`, `50ms`, `MIN(99p,50ms)`), which parses back to
//! itself.
//!
//! Cairn runs on one node, so no read or write is ever speculated: the policy is kept to be
//! shown back (and for the cluster to come).

use crate::error::{Error, Result};

/// A parsed policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    Always,
    Never,
    Percentile(f64),
    /// Milliseconds.
    Fixed(i32),
    Hybrid {
        max: bool,
        percentile: f64,
        fixed: i32,
    },
}

fn invalid(s: &str) -> Error {
    Error::Configuration(format!("Invalid value {s} for option 'speculative_retry'"))
}

/// `[0-9.]+` followed by `suffix` (any case), the whole string.
fn number_with_suffix<'a>(s: &'a str, suffixes: &[&str]) -> Option<&'a str> {
    let digits = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (value, rest) = s.split_at(digits);
    (!value.is_empty() && suffixes.iter().any(|x| rest.eq_ignore_ascii_case(x))).then_some(value)
}

impl Policy {
    /// `SpeculativeRetryPolicy.fromString`.
    pub fn parse(s: &str) -> Result<Policy> {
        if s.eq_ignore_ascii_case("ALWAYS") {
            return Ok(Policy::Always);
        }
        if s.eq_ignore_ascii_case("NEVER") || s.eq_ignore_ascii_case("NONE") {
            return Ok(Policy::Never);
        }
        if let Some(v) = number_with_suffix(s, &["p", "percentile"]) {
            let p: f64 = v.parse().map_err(|_| invalid(s))?;
            if p <= 0.0 || p >= 100.0 {
                return Err(Error::Configuration(format!(
                    "Invalid value {s} for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)"
                )));
            }
            return Ok(Policy::Percentile(p));
        }
        if let Some(v) = number_with_suffix(s, &["ms"]) {
            // Parsed as a double and truncated, as Cassandra does.
            let ms: f64 = v.parse().map_err(|_| invalid(s))?;
            return Ok(Policy::Fixed(ms as i32));
        }
        if let Some((max, a, b)) = hybrid_parts(s) {
            let (pa, pb) = match (Policy::parse(a), Policy::parse(b)) {
                (Ok(pa), Ok(pb)) => (pa, pb),
                _ => return Err(invalid(s)),
            };
            return match (pa, pb) {
                (Policy::Percentile(percentile), Policy::Fixed(fixed))
                | (Policy::Fixed(fixed), Policy::Percentile(percentile)) => Ok(Policy::Hybrid {
                    max,
                    percentile,
                    fixed,
                }),
                (x, _) => Err(Error::Configuration(format!(
                    "Invalid value {s} for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type {}",
                    x.kind()
                ))),
            };
        }
        Err(invalid(s))
    }

    fn kind(self) -> &'static str {
        match self {
            Policy::Always => "ALWAYS",
            Policy::Never => "NEVER",
            Policy::Percentile(_) => "PERCENTILE",
            Policy::Fixed(_) => "FIXED",
            Policy::Hybrid { .. } => "HYBRID",
        }
    }
}

/// `MIN(a, b)` / `MAX(a, b)` with `a` and `b` each `[0-9.]+[a-z]+` (any case): whether it is
/// MAX, and the two arguments.
fn hybrid_parts(s: &str) -> Option<(bool, &str, &str)> {
    let open = s.find('(')?;
    let (fun, rest) = s.split_at(open);
    let max = if fun.eq_ignore_ascii_case("MAX") {
        true
    } else if fun.eq_ignore_ascii_case("MIN") {
        false
    } else {
        return None;
    };
    let inner = rest.strip_prefix('(')?.strip_suffix(')')?;
    let (a, b) = inner.split_once(',')?;
    let (a, b) = (a.trim_end(), b.trim_start());
    let shaped = |x: &str| {
        let digits = x
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(x.len());
        digits > 0 && digits < x.len() && x[digits..].chars().all(|c| c.is_ascii_alphabetic())
    };
    (shaped(a) && shaped(b)).then_some((max, a, b))
}

/// A percentile as Cassandra prints it (`#.####`: at most four decimals, no trailing zeros).
fn percentile(p: f64) -> String {
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}p")
}

impl std::fmt::Display for Policy {
    /// The canonical spelling Cassandra stores and shows.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Policy::Always => f.write_str("ALWAYS"),
            Policy::Never => f.write_str("NEVER"),
            Policy::Percentile(p) => f.write_str(&percentile(p)),
            Policy::Fixed(ms) => write!(f, "{ms}ms"),
            Policy::Hybrid {
                max,
                percentile: p,
                fixed,
            } => write!(
                f,
                "{}({},{fixed}ms)",
                if max { "MAX" } else { "MIN" },
                percentile(p)
            ),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn shown(s: &str) -> String {
        Policy::parse(s).unwrap().to_string()
    }

    fn err(s: &str) -> String {
        Policy::parse(s).unwrap_err().to_string()
    }

    #[test]
    fn accepted_values_in_canonical_form() {
        assert_eq!(shown("99p"), "99p");
        assert_eq!(shown("99PERCENTILE"), "99p");
        assert_eq!(shown("99.50P"), "99.5p");
        assert_eq!(shown("99.999999p"), "100p");
        assert_eq!(shown("50ms"), "50ms");
        assert_eq!(shown("50.5MS"), "50ms");
        assert_eq!(shown("0ms"), "0ms");
        assert_eq!(shown("always"), "ALWAYS");
        assert_eq!(shown("none"), "NEVER");
        assert_eq!(shown("NEVER"), "NEVER");
        assert_eq!(shown("min(99p, 50ms)"), "MIN(99p,50ms)");
        assert_eq!(shown("MAX(50ms,99p)"), "MAX(99p,50ms)");
        assert_eq!(shown("Min(99P,50MS)"), "MIN(99p,50ms)");
        for s in ["99p", "50ms", "MIN(99.5p,50ms)", "ALWAYS", "NEVER"] {
            assert_eq!(shown(&shown(s)), shown(s));
        }
    }

    #[test]
    fn refused_values_with_cassandras_texts() {
        let range = |s: &str| {
            format!("Invalid value {s} for PERCENTILE option 'speculative_retry': must be between (0.0 and 100.0)")
        };
        assert_eq!(err("0p"), range("0p"));
        assert_eq!(err("100p"), range("100p"));
        assert_eq!(err("101p"), range("101p"));
        for bad in [
            "-1p", "-5ms", "99", "foo", "", " 50ms", "50 ms", "1e2ms", "1e1p", "1.2.3p",
        ] {
            assert_eq!(
                err(bad),
                format!("Invalid value {bad} for option 'speculative_retry'")
            );
        }
        for bad in [
            "MIN(99p,ALWAYS)",
            "MIN(99p)",
            "FOO(99p,50ms)",
            "MIN(99p,0p)",
        ] {
            assert_eq!(
                err(bad),
                format!("Invalid value {bad} for option 'speculative_retry'")
            );
        }
        assert_eq!(
            err("MIN(99p,90p)"),
            "Invalid value MIN(99p,90p) for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type PERCENTILE"
        );
        assert_eq!(
            err("MIN(10ms,50ms)"),
            "Invalid value MIN(10ms,50ms) for option 'speculative_retry': MIN()/MAX() arguments should be of different types, but both are of type FIXED"
        );
    }
}
