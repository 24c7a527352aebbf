//! Reading a CQL compaction map: keys taken one at a time so that the ones no strategy
//! claimed can be reported (Cassandra's "unchecked options"), and the number, boolean and
//! double forms Cassandra parses and prints.

use crate::error::OptionError;
use crate::java::{hash_map_order, parse_double};

pub(super) fn invalid(option: &'static str, message: String) -> OptionError {
    OptionError::Invalid { option, message }
}

/// Looks up keys and remembers which were consumed (Cassandra's "unchecked options").
pub(super) struct Map<'a> {
    entries: &'a [(String, String)],
    used: Vec<bool>,
}

impl<'a> Map<'a> {
    pub(super) fn new(entries: &'a [(String, String)]) -> Self {
        Map {
            entries,
            used: vec![false; entries.len()],
        }
    }

    /// The value of `key` (the last one if repeated), marking every occurrence as known.
    pub(super) fn take(&mut self, key: &str) -> Option<&'a str> {
        let mut found = None;
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if k == key {
                if let Some(u) = self.used.get_mut(i) {
                    *u = true;
                }
                found = Some(v.as_str());
            }
        }
        found
    }

    /// The value of `key` without claiming it.
    pub(super) fn peek(&self, key: &str) -> Option<&'a str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Keys nobody claimed, as Cassandra lists them (`[a, b]`, in the order of its hash map
    /// of the `entries` options the strategy was given).
    pub(super) fn unknown(&self, entries: usize) -> Option<String> {
        let mut rest: Vec<&str> = Vec::new();
        for ((k, _), used) in self.entries.iter().zip(&self.used) {
            if !*used && !rest.contains(&k.as_str()) {
                rest.push(k);
            }
        }
        if rest.is_empty() {
            return None;
        }
        Some(format!("[{}]", hash_map_order(&rest, entries).join(", ")))
    }

    /// A Java `long` (`Long.parseLong`), with Cassandra's message.
    pub(super) fn long(&mut self, key: &'static str, default: i64) -> Result<i64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse::<i64>().map_err(|_| not_an_int(key, v)),
        }
    }

    /// A Java `int` (`Integer.parseInt`), with Cassandra's message.
    pub(super) fn int(&mut self, key: &'static str, default: i64) -> Result<i64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<i32>()
                .map(i64::from)
                .map_err(|_| not_an_int(key, v)),
        }
    }

    /// A Java `double` (`Double.parseDouble`), with `what` naming the type in the message.
    pub(super) fn double(
        &mut self,
        key: &'static str,
        default: f64,
        what: &str,
    ) -> Result<f64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => parse_double(v)
                .ok_or_else(|| invalid(key, format!("{v} is not a parsable {what} for {key}"))),
        }
    }

    /// ScyllaDB's options (Cassandra has none of these): exactly `true` / `false`.
    pub(super) fn scylla_boolean(
        &mut self,
        key: &'static str,
        default: bool,
    ) -> Result<bool, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(invalid(
                key,
                format!("{key} value ({v}) must be \"true\" or \"false\""),
            )),
        }
    }

    /// ScyllaDB's options: a finite double.
    pub(super) fn scylla_double(
        &mut self,
        key: &'static str,
        default: f64,
    ) -> Result<f64, OptionError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(invalid(
                    key,
                    format!("Invalid double value {v} for '{key}'"),
                )),
            },
        }
    }
}

pub(super) fn not_an_int(key: &'static str, v: &str) -> OptionError {
    invalid(key, format!("{v} is not a parsable int (base10) for {key}"))
}

/// Cassandra's check of a boolean option: `true` or `false`, any case.
pub(super) fn cassandra_boolean(
    m: &mut Map<'_>,
    key: &'static str,
    message: impl Fn(&str) -> String,
) -> Result<Option<bool>, OptionError> {
    match m.take(key) {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(v) => Err(invalid(key, message(v))),
    }
}

/// Formats a float the way `to_map` shows it (`0.5`, `1.4142`, `2`).
pub(super) fn fmt_f64(x: f64) -> String {
    format!("{x}")
}
