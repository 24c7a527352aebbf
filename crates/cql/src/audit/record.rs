//! One audit record — who did what, from where, when, and whether it failed — and its
//! forms as text (the syslog message, the node-log fallback).
//!
//! Invariant: `event_time` is a version-1 UUID of `time_micros`, unique within the node
//! ([`EventClock`]), so two records of the same microsecond are two rows of `audit_log`.

use super::filter::Category;
use cairn_cluster::consistency::Consistency;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicI64, Ordering};

/// What the audit log keeps of one statement or login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub category: Category,
    /// Empty when the statement names none.
    pub keyspace: String,
    /// Empty when the statement names none.
    pub table: String,
    /// The statement's text as the client sent it (a prepared statement's as prepared; no
    /// bound values), or `LOGIN`.
    pub operation: String,
    /// The role logged in on the connection, `anonymous` without one; for a login, the name
    /// tried.
    pub username: String,
    /// The client's address and port.
    pub source: SocketAddr,
    /// The request's consistency level (none for a login).
    pub consistency: Option<Consistency>,
    /// The request failed (its answer was an error).
    pub error: bool,
    /// When the request arrived, in microseconds since the epoch.
    pub time_micros: i64,
    /// `audit_log.event_time`: a time UUID of `time_micros`.
    pub event_time: [u8; 16],
}

/// The user name of a session without a login.
pub const ANONYMOUS: &str = "anonymous";

/// The operation of a login record.
pub const LOGIN: &str = "LOGIN";

impl AuditRecord {
    /// The syslog message: ScyllaDB's `key="value"` fields, with the client's port and the
    /// statement text cut at `max_query` bytes.
    pub fn syslog_fields(&self, node: IpAddr, max_query: usize) -> String {
        let mut query = self.operation.as_str();
        let mut cut = "";
        if query.len() > max_query {
            let mut end = max_query;
            while !query.is_char_boundary(end) {
                end -= 1;
            }
            query = &query[..end];
            cut = "…";
        }
        format!(
            "node=\"{node}\", category=\"{}\", cl=\"{}\", error=\"{}\", keyspace=\"{}\", \
             query=\"{}{cut}\", client_ip=\"{}\", table=\"{}\", username=\"{}\"",
            self.category,
            self.consistency.map_or("", Consistency::name),
            self.error,
            escape(&self.keyspace),
            escape(query),
            self.source,
            escape(&self.table),
            escape(&self.username),
        )
    }

    /// The record for the node's log, when it could not be stored in the audit log.
    pub fn fields_text(&self, node: Option<IpAddr>) -> String {
        let node = node.map_or_else(|| "this node".to_string(), |n| n.to_string());
        format!(
            "node {node} category {} cl {} error {} keyspace \"{}\" table \"{}\" client {} \
             username \"{}\" operation \"{}\"",
            self.category,
            self.consistency.map_or("", Consistency::name),
            self.error,
            escape(&self.keyspace),
            escape(&self.table),
            self.source,
            escape(&self.username),
            escape(&self.operation),
        )
    }
}

/// A field's text inside double quotes: `"` and `\` escaped, control characters as `\n`-style
/// escapes or `\u00XX` (JSON's rules), so a statement cannot forge fields or lines.
pub fn escape(s: &str) -> String {
    crate::values::json::quote_json(s)
}

/// The user name a SASL PLAIN token (`authzid \0 authcid \0 password`) tries, for the
/// record of a login; `None` when the token is not one.
pub fn sasl_plain_user(token: &[u8]) -> Option<String> {
    let mut parts = token.splitn(3, |b| *b == 0);
    let (_authzid, user) = (parts.next()?, parts.next()?);
    parts.next()?;
    Some(String::from_utf8_lossy(user).into_owned())
}

/// Hands out unique time UUIDs: one node's events never share one, even in one
/// microsecond (each takes the next 100 ns tick).
pub struct EventClock {
    /// The last tick handed out (100 ns units since 1582-10-15).
    last: AtomicI64,
    /// The clock-sequence-and-node half, random per process.
    node: u64,
}

impl Default for EventClock {
    fn default() -> Self {
        EventClock {
            last: AtomicI64::new(0),
            // Variant bits `10` in the top byte.
            node: (rand::random::<u64>() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000,
        }
    }
}

impl EventClock {
    /// A time UUID for `micros`, later than every one handed out before.
    pub fn next(&self, micros: i64) -> [u8; 16] {
        let ticks = micros
            .saturating_mul(10)
            .saturating_add(crate::values::temporal::GREGORIAN_OFFSET);
        let prev = self
            .last
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
                Some(ticks.max(last.saturating_add(1)))
            })
            .unwrap_or(ticks);
        let tick = ticks.max(prev.saturating_add(1));
        crate::values::temporal::make_v1(tick, self.node)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn fields_cannot_be_forged() {
        assert_eq!(escape("a\"b\\c\nd\u{1}"), "a\\\"b\\\\c\\nd\\u0001");
        let r = AuditRecord {
            category: Category::Dml,
            keyspace: "ks".into(),
            table: "t".into(),
            operation: "INSERT INTO t (a) VALUES ('\"')".into(),
            username: ANONYMOUS.into(),
            source: "127.0.0.1:5000".parse().unwrap(),
            consistency: Some(Consistency::Quorum),
            error: false,
            time_micros: 0,
            event_time: [0; 16],
        };
        assert_eq!(
            r.syslog_fields("10.0.0.1".parse().unwrap(), 1000),
            "node=\"10.0.0.1\", category=\"DML\", cl=\"QUORUM\", error=\"false\", \
             keyspace=\"ks\", query=\"INSERT INTO t (a) VALUES ('\\\"')\", \
             client_ip=\"127.0.0.1:5000\", table=\"t\", username=\"anonymous\""
        );
        // A long statement is cut on a character boundary.
        let long = AuditRecord {
            operation: "é".repeat(10),
            ..r
        };
        assert!(long
            .syslog_fields("10.0.0.1".parse().unwrap(), 5)
            .contains("query=\"éé…\""));
    }

    #[test]
    fn login_user_names() {
        assert_eq!(sasl_plain_user(b"\0bob\0secret").as_deref(), Some("bob"));
        assert_eq!(sasl_plain_user(b"\0bob\0se\0cret").as_deref(), Some("bob"));
        assert_eq!(sasl_plain_user(b"bob"), None);
        assert_eq!(sasl_plain_user(b"\0bob"), None);
    }

    #[test]
    fn event_times_are_unique_and_ordered() {
        let clock = EventClock::default();
        let ts = |u: &[u8; 16]| crate::values::temporal::v1_timestamp(u);
        let a = clock.next(1_000_000);
        let b = clock.next(1_000_000);
        let c = clock.next(999_999);
        assert!(ts(&a) < ts(&b) && ts(&b) < ts(&c));
        assert_eq!(crate::values::temporal::v1_unix_millis(&a), 1000);
    }
}
