//! The `WITH name = value AND …` properties of schema statements, read as Cassandra's
//! `PropertyDefinitions` reads them: unknown names, a map where a string is expected (or the
//! reverse), booleans, integers and doubles (Java's syntax, `cairn_engine::java`), each with
//! Cassandra's error (a syntax error without a position, code 0x2000).

use crate::ast::{Property, PropertyValue};
use crate::error::{Error, Result};
use cairn_engine::java::parse_double;

/// The properties of one statement (the parser has already refused repeated names).
#[derive(Clone, Copy)]
pub struct Properties<'a>(pub &'a [Property]);

impl<'a> Properties<'a> {
    /// Refuses a property whose name is not in `known` (`Unknown property 'x'`).
    pub fn check_known(&self, known: &[&str]) -> Result<()> {
        match self.0.iter().find(|p| !known.contains(&p.name.as_str())) {
            Some(p) => Err(Error::syntax(format!("Unknown property '{}'", p.name))),
            None => Ok(()),
        }
    }

    /// Whether the property is given.
    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|p| p.name == name)
    }

    fn value(&self, name: &str) -> Option<&'a PropertyValue> {
        self.0.iter().find(|p| p.name == name).map(|p| &p.value)
    }

    /// A string property (`None` when absent).
    pub fn string(&self, name: &str) -> Result<Option<&'a str>> {
        match self.value(name) {
            None => Ok(None),
            Some(PropertyValue::Simple(s)) => Ok(Some(s)),
            Some(PropertyValue::Map(_)) => Err(Error::syntax(format!(
                "Invalid value for property '{name}'. It should be a string"
            ))),
        }
    }

    /// A map property (`None` when absent).
    pub fn map(&self, name: &str) -> Result<Option<&'a [(String, String)]>> {
        match self.value(name) {
            None => Ok(None),
            Some(PropertyValue::Map(m)) => Ok(Some(m)),
            Some(PropertyValue::Simple(_)) => Err(Error::syntax(format!(
                "Invalid value for property '{name}'. It should be a map."
            ))),
        }
    }

    /// A boolean property (`1`/`true`/`yes`, `0`/`false`/`no`, any case).
    pub fn boolean(&self, name: &str) -> Result<Option<bool>> {
        self.string(name)?
            .map(|v| parse_boolean(name, v))
            .transpose()
    }

    /// An `int` property.
    pub fn int(&self, name: &str) -> Result<Option<i32>> {
        self.string(name)?
            .map(|v| {
                v.parse::<i32>()
                    .map_err(|_| Error::syntax(format!("Invalid integer value {v} for '{name}'")))
            })
            .transpose()
    }

    /// A `double` property (Java's `Double.parseDouble` syntax).
    pub fn double(&self, name: &str) -> Result<Option<f64>> {
        self.string(name)?
            .map(|v| {
                parse_double(v)
                    .ok_or_else(|| Error::syntax(format!("Invalid double value {v} for '{name}'")))
            })
            .transpose()
    }
}

/// `PropertyDefinitions.parseBoolean`.
pub fn parse_boolean(name: &str, value: &str) -> Result<bool> {
    match value.to_lowercase().as_str() {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err(Error::syntax(format!(
            "Invalid boolean value {value} for '{name}'. Positive values can be '1', 'true' or 'yes'. Negative values can be '0', 'false' or 'no'."
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn booleans() {
        for t in ["1", "true", "TRUE", "yes", "Yes"] {
            assert_eq!(parse_boolean("x", t), Ok(true));
        }
        for f in ["0", "false", "No"] {
            assert_eq!(parse_boolean("x", f), Ok(false));
        }
        assert_eq!(
            parse_boolean("durable_writes", "maybe").unwrap_err().to_string(),
            "Invalid boolean value maybe for 'durable_writes'. Positive values can be '1', 'true' or 'yes'. Negative values can be '0', 'false' or 'no'."
        );
    }
}
