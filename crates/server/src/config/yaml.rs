//! A YAML tree with lines, built from saphyr-parser's events, and the scalar readers the
//! key table uses (text, paths, booleans, integers in a range, addresses).
//!
//! Invariants: every node carries the 1-based line it starts on, so every problem can name
//! its line; aliases, several documents and nesting deeper than 64 levels are refused
//! rather than expanded; an unquoted empty, `~` or `null` scalar is [`Value::Null`] while a
//! quoted one is text.

use super::Problem;
use saphyr_parser::{Event, Parser, ScalarStyle};
use std::net::{IpAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// A YAML node and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    pub(super) line: usize,
    pub(super) value: Value,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Null,
    /// Text, and whether it was quoted (a quoted `"null"` is a string).
    Scalar(String, bool),
    Seq(Vec<Node>),
    /// Key, the key's line, value.
    Map(Vec<(String, usize, Node)>),
}

fn syntax(line: usize, message: impl Into<String>) -> Problem {
    Problem {
        line,
        key: String::new(),
        message: message.into(),
    }
}

/// Parses one YAML document (`None` when the text holds none).
pub(super) fn parse_yaml(text: &str) -> Result<Option<Node>, Problem> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    for item in &mut parser {
        let (event, span) = item.map_err(|e| {
            syntax(
                e.marker().line(),
                format!("YAML syntax error: {}", e.info()),
            )
        })?;
        let line = span.start.line();
        let node = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(syntax(line, "more than one YAML document"));
                }
                continue;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::Alias(_) => {
                return Err(syntax(line, "YAML aliases (*name) are not supported here"))
            }
            Event::SequenceStart(..) => {
                if stack.len() > 64 {
                    return Err(syntax(line, "nested too deeply"));
                }
                stack.push(Frame::Seq(line, Vec::new()));
                continue;
            }
            Event::MappingStart(..) => {
                if stack.len() > 64 {
                    return Err(syntax(line, "nested too deeply"));
                }
                stack.push(Frame::Map(line, Vec::new(), None));
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq(l, items)) => Node {
                    line: l,
                    value: Value::Seq(items),
                },
                _ => return Err(syntax(line, "unbalanced sequence")),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map(l, entries, None)) => Node {
                    line: l,
                    value: Value::Map(entries),
                },
                _ => return Err(syntax(line, "unbalanced mapping")),
            },
            Event::Scalar(text, style, _, _) => {
                let quoted = !matches!(style, ScalarStyle::Plain);
                let value = if !quoted && matches!(&*text, "" | "~" | "null" | "Null" | "NULL") {
                    Value::Null
                } else {
                    Value::Scalar(text.into_owned(), quoted)
                };
                Node { line, value }
            }
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq(_, items)) => items.push(node),
            Some(Frame::Map(_, entries, pending)) => match pending.take() {
                None => match node.value {
                    Value::Scalar(k, _) => *pending = Some((k, node.line)),
                    Value::Null => *pending = Some((String::new(), node.line)),
                    _ => return Err(syntax(node.line, "mapping keys must be plain names")),
                },
                Some((k, kl)) => entries.push((k, kl, node)),
            },
        }
    }
    Ok(root)
}

enum Frame {
    Seq(usize, Vec<Node>),
    Map(usize, Vec<(String, usize, Node)>, Option<(String, usize)>),
}

impl Node {
    pub(super) fn scalar(&self) -> Result<&str, String> {
        match &self.value {
            Value::Scalar(s, _) => Ok(s),
            Value::Null => Err("expected a value".into()),
            Value::Seq(_) => Err("expected a single value, not a list".into()),
            Value::Map(_) => Err("expected a single value, not a mapping".into()),
        }
    }

    pub(super) fn string(&self) -> Result<String, String> {
        self.scalar().map(str::to_string)
    }

    /// The scalar's text; empty for `key:` with no value.
    pub(super) fn optional_string(&self) -> Result<String, String> {
        match &self.value {
            Value::Null => Ok(String::new()),
            _ => self.string(),
        }
    }

    pub(super) fn path(&self) -> Result<PathBuf, String> {
        let s = self.scalar()?;
        if s.is_empty() {
            return Err("empty path".into());
        }
        Ok(PathBuf::from(s))
    }

    pub(super) fn boolean(&self) -> Result<bool, String> {
        match self.scalar()?.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Ok(true),
            "false" | "no" | "off" => Ok(false),
            other => Err(format!("`{other}` is not a boolean (true or false)")),
        }
    }

    pub(super) fn int_in(&self, min: u64, max: u64) -> Result<u64, String> {
        let s = self.scalar()?;
        let n: u64 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a non-negative integer"))?;
        if n < min || n > max {
            return Err(format!("{n} is out of range ({min} to {max})"));
        }
        Ok(n)
    }

    pub(super) fn signed_from(&self, min: i64) -> Result<i64, String> {
        let s = self.scalar()?;
        let n: i64 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not an integer"))?;
        if n < min {
            return Err(format!("{n} is below the minimum {min}"));
        }
        Ok(n)
    }

    pub(super) fn float(&self) -> Result<f64, String> {
        let s = self.scalar()?;
        let f: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a number"))?;
        if !f.is_finite() {
            return Err(format!("`{s}` is not a finite number"));
        }
        Ok(f)
    }

    pub(super) fn port(&self) -> Result<u16, String> {
        Ok(self.int_in(0, 65535)? as u16)
    }

    pub(super) fn millis(&self) -> Result<Duration, String> {
        Ok(Duration::from_millis(self.int_in(0, u32::MAX as u64)?))
    }

    pub(super) fn address(&self) -> Result<String, String> {
        let s = self.scalar()?.trim().to_string();
        if s.is_empty() {
            return Err("empty address".into());
        }
        if s.parse::<IpAddr>().is_ok() || s == "localhost" {
            return Ok(s);
        }
        match (s.as_str(), 0u16).to_socket_addrs() {
            Ok(addrs) if !addrs.as_slice().is_empty() => Ok(s),
            _ => Err(format!(
                "`{s}` is neither an IP address nor a host name that resolves"
            )),
        }
    }
}
