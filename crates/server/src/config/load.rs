//! Loading a configuration: the file's YAML tree, key by key through the key table
//! ([`super::keys`]), every problem collected with its line, then the command-line
//! overrides.
//!
//! Invariants: a file either loads whole or yields every problem it has, sorted by line;
//! a key the table does not know is a problem with a "did you mean" hint from the same
//! table; `key:` with no value keeps the default (except where the table says the key
//! takes it).

use super::keys::{self, Handling};
use super::setters::{refused, Bad};
use super::suggest::suggest;
use super::yaml::{parse_yaml, Node, Value};
use super::{Config, ConfigError, Loaded, Overrides, Problem};
use std::path::Path;

impl Config {
    /// Reads and checks a YAML file.
    pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source: path.display().to_string(),
            problems: vec![Problem {
                line: 0,
                key: String::new(),
                message: format!("cannot read the file: {e}"),
            }],
        })?;
        let mut loaded = Config::from_yaml_str(&text, &path.display().to_string())?;
        loaded.config.source = Some(path.to_path_buf());
        Ok(loaded)
    }

    /// Parses and checks YAML text; `source` names it in messages.
    pub fn from_yaml_str(text: &str, source: &str) -> Result<Loaded, ConfigError> {
        let fail = |problems| ConfigError {
            source: source.to_string(),
            problems,
        };
        let root = parse_yaml(text).map_err(|p| fail(vec![p]))?;
        let entries = match root {
            None
            | Some(Node {
                value: Value::Null, ..
            }) => Vec::new(),
            Some(Node {
                value: Value::Map(entries),
                ..
            }) => entries,
            Some(n) => {
                return Err(fail(vec![Problem {
                    line: n.line,
                    key: String::new(),
                    message: "the configuration must be a mapping of `key: value` lines".into(),
                }]))
            }
        };
        let mut config = Config::default();
        let mut problems = Vec::new();
        let mut ignored = Vec::new();
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for (key, key_line, node) in &entries {
            if let Some((_, first)) = seen.iter().find(|(k, _)| k == key) {
                problems.push(Problem {
                    line: *key_line,
                    key: key.clone(),
                    message: format!("duplicate key (first set at line {first})"),
                });
                continue;
            }
            seen.push((key, *key_line));
            config.key_lines.push((key.clone(), *key_line));
            match apply_key(&mut config, key, node) {
                Outcome::Used => {}
                Outcome::Ignored => ignored.push(key.clone()),
                Outcome::Unknown => {
                    let hint = suggest(key)
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    problems.push(Problem {
                        line: *key_line,
                        key: key.clone(),
                        message: format!(
                            "unknown property{hint}; like Cassandra, Cairn refuses to start \
                             with properties it does not know: remove it or fix its name"
                        ),
                    });
                }
                Outcome::Invalid(message) => problems.push(Problem {
                    line: node.line,
                    key: key.clone(),
                    message,
                }),
            }
        }
        // Cassandra's `AuthConfig`: an authorizer that enforces permissions needs logins.
        if config.authorizer == super::Authorizer::Cassandra
            && config.authenticator != super::Authenticator::Password
        {
            problems.push(Problem {
                line: config.key_line("authorizer").unwrap_or(0),
                key: "authorizer".into(),
                message: "org.apache.cassandra.auth.CassandraAuthorizer has authorization enabled \
                          which requires org.apache.cassandra.auth.AllowAllAuthenticator to enable \
                          authentication: set `authenticator: PasswordAuthenticator`"
                    .into(),
            });
        }
        if !problems.is_empty() {
            problems.sort_by_key(|p| p.line);
            return Err(fail(problems));
        }
        let mut warnings = Vec::new();
        if !ignored.is_empty() {
            warnings.push(format!(
                "{source}: these properties are accepted for compatibility but Cairn does not \
                 use them: {}",
                ignored.join(", ")
            ));
        }
        Ok(Loaded { config, warnings })
    }

    /// The startup path: embedded defaults, then the file named by `--config` (if any),
    /// then the other flags.
    pub fn resolve(overrides: &Overrides) -> Result<Loaded, ConfigError> {
        let mut loaded = match &overrides.config {
            Some(path) => Config::load(path)?,
            None => Loaded {
                config: Config::default(),
                warnings: Vec::new(),
            },
        };
        loaded.config.apply_overrides(overrides);
        Ok(loaded)
    }
}

/// What loading did with one top-level key.
enum Outcome {
    Used,
    Ignored,
    Unknown,
    /// The value was refused: the message for the problem.
    Invalid(String),
}

/// Applies one top-level key as the key table says.
fn apply_key(c: &mut Config, key: &str, v: &Node) -> Outcome {
    let Some(k) = keys::lookup(key) else {
        return Outcome::Unknown;
    };
    let (set, supported) = match k.handling {
        Handling::Ignored => return Outcome::Ignored,
        Handling::Set(set) => (set, ""),
        Handling::Security { supported, set } => (set, supported),
    };
    if matches!(v.value, Value::Null) && !k.takes_null {
        // `key:` with no value keeps the default, as in Cassandra.
        return Outcome::Used;
    }
    match set(c, v) {
        Ok(()) => Outcome::Used,
        Err(Bad::Invalid(message)) => Outcome::Invalid(message),
        Err(Bad::Refused(what)) => Outcome::Invalid(refused(supported, &what)),
    }
}
