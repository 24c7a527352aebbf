//! The audit log (ScyllaDB's design and keys): who ran which statement, or tried to log
//! in, from where, when, and whether it failed — kept in the `audit.audit_log` table or
//! sent to syslog.
//!
//! Pieces: [`filter`] decides what is logged (a statement's category, keyspace and table
//! against `audit_categories`, `audit_keyspaces`, `audit_tables`); [`record`] is one record
//! and its text forms; [`sink`] writes records on a thread of their own. The [`Auditor`] is
//! the face the request path uses: it makes the records a request will need before the
//! request runs (the session's keyspace and user as they were), and the caller hands them
//! back with the outcome ([`Auditor::log`]).
//!
//! Invariants: with `audit: none` there is no auditor and the request path looks at nothing;
//! a request takes room in the writer's bounded queue for its records before it runs
//! ([`Auditor::try_reserve`], [`Auditor::reserve`]) and queues them before its answer leaves
//! ([`Auditor::log`]), so no record is dropped and overload slows requests down instead (see
//! [`sink`]); a record never carries bound values, only the statement's text.

pub mod filter;
pub mod record;
pub mod sink;

use crate::ast::Statement;
use crate::error::Result;
use crate::exec::{Executor, Session};
use cairn_cluster::consistency::Consistency;
pub use filter::{AuditFilter, Category, Target};
pub use record::{AuditRecord, ANONYMOUS, LOGIN};
pub use sink::{AuditStats, MAX_QUEUE_RECORDS, QUEUE_RECORDS};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

/// `audit`: where records go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuditMode {
    /// No audit log (the default).
    #[default]
    None,
    /// ScyllaDB's `audit.audit_log` table.
    Table,
    /// The local syslog socket.
    Syslog,
}

impl AuditMode {
    /// The setting's value (`none`, `table`, `syslog`).
    pub fn name(self) -> &'static str {
        match self {
            AuditMode::None => "none",
            AuditMode::Table => "table",
            AuditMode::Syslog => "syslog",
        }
    }

    /// The mode a setting names, if Cairn has it.
    pub fn parse(value: &str) -> Option<AuditMode> {
        [AuditMode::None, AuditMode::Table, AuditMode::Syslog]
            .into_iter()
            .find(|m| m.name() == value.trim())
    }
}

/// The audit settings of a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    /// `audit`.
    pub mode: AuditMode,
    /// `audit_categories`, `audit_keyspaces`, `audit_tables`.
    pub filter: AuditFilter,
    /// `audit_unix_socket_path` (ScyllaDB's key): the syslog socket; `/dev/log` without it.
    pub unix_socket_path: Option<PathBuf>,
    /// `audit_queue_records` (Cairn's key): the records the writer's queue has room for
    /// before requests wait ([`QUEUE_RECORDS`] by default).
    pub queue_records: usize,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            mode: AuditMode::default(),
            filter: AuditFilter::default(),
            unix_socket_path: None,
            queue_records: QUEUE_RECORDS,
        }
    }
}

/// One request's records with room for them in the writer's queue: what
/// [`Auditor::log`] takes, so that queueing them never waits nor drops them.
#[derive(Debug)]
pub struct Reserved {
    records: Vec<AuditRecord>,
    room: Option<sink::Room>,
}

/// A node's audit log: decides, makes and queues records.
pub struct Auditor {
    filter: AuditFilter,
    writer: sink::Writer,
    clock: record::EventClock,
}

impl Auditor {
    /// The node's audit log for `config`, or `None` with `audit: none` (or no category on).
    /// With `table`, creates ScyllaDB's audit keyspace and table through `executor` (or
    /// keeps trying, on the writer's thread, while the schema cannot change); with `syslog`,
    /// sends one datagram to the socket, so a socket that is not there stops the node.
    /// Blocks (schema changes, the socket): call it where a thread may wait.
    /// `node` is this node's address (`audit_log.node`).
    /// `syslog` is the socket [`Auditor::open_syslog`] opened (opened here without it).
    pub fn start(
        config: &AuditConfig,
        executor: &Arc<Executor>,
        node: IpAddr,
        syslog: Option<sink::SyslogSink>,
    ) -> Result<Option<Arc<Auditor>>> {
        let sink = match config.mode {
            AuditMode::None => return Ok(None),
            _ if !config.filter.any() => return Ok(None),
            AuditMode::Table => sink::Sink::Table(sink::TableSink::open(Arc::clone(executor))),
            AuditMode::Syslog => sink::Sink::Syslog(match syslog {
                Some(s) => s,
                None => sink::SyslogSink::open(config.unix_socket_path.as_deref())?,
            }),
        };
        Ok(Some(Arc::new(Auditor {
            filter: config.filter.clone(),
            writer: sink::Writer::start(sink, node, config.queue_records)?,
            clock: record::EventClock::default(),
        })))
    }

    /// With `audit: syslog`, the socket, reached once: a node checks it before it opens
    /// its data, as it checks its other files, so a missing socket stops it at once.
    pub fn open_syslog(config: &AuditConfig) -> Result<Option<sink::SyslogSink>> {
        match config.mode {
            AuditMode::Syslog if config.filter.any() => {
                sink::SyslogSink::open(config.unix_socket_path.as_deref()).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// What is logged.
    pub fn filter(&self) -> &AuditFilter {
        &self.filter
    }

    /// The records of one statement (one per BATCH member) that the filter keeps, to be
    /// completed with the outcome and passed to [`Auditor::log`]; `text` is what the
    /// client sent (or prepared). Empty when nothing is logged.
    pub fn statement(
        &self,
        stmt: &Statement,
        text: &str,
        session: &Session,
        source: SocketAddr,
        consistency: Consistency,
    ) -> Vec<AuditRecord> {
        let targets = {
            let ks = session.keyspace.read();
            filter::targets(stmt, ks.as_deref())
        };
        let mut out: Vec<AuditRecord> = Vec::new();
        for t in targets {
            if !self.filter.logs(t.category, &t.keyspace, &t.table) {
                continue;
            }
            // A BATCH sent as one text names its tables once each.
            if out
                .iter()
                .any(|r| r.keyspace == t.keyspace && r.table == t.table)
            {
                continue;
            }
            out.push(self.record(t, text, user(session), source, Some(consistency)));
        }
        out
    }

    /// The record of a login with SASL PLAIN `token` (the user name it tries), if logins
    /// (AUTH) are logged.
    pub fn login(&self, token: &[u8], source: SocketAddr) -> Option<AuditRecord> {
        if !self.filter.logs(Category::Auth, "", "") {
            return None;
        }
        let user = record::sasl_plain_user(token).unwrap_or_default();
        let target = Target {
            category: Category::Auth,
            keyspace: String::new(),
            table: String::new(),
        };
        Some(self.record(target, LOGIN, user, source, None))
    }

    fn record(
        &self,
        t: Target,
        text: &str,
        username: String,
        source: SocketAddr,
        consistency: Option<Consistency>,
    ) -> AuditRecord {
        let time_micros = sink::now_micros();
        AuditRecord {
            category: t.category,
            keyspace: t.keyspace,
            table: t.table,
            operation: text.to_string(),
            username,
            source,
            consistency,
            error: false,
            time_micros,
            event_time: self.clock.next(time_micros),
        }
    }

    /// Room for `records` (made by [`Auditor::statement`] or [`Auditor::login`]) if the
    /// queue has it now — for a request about to run where it must not wait; else the
    /// records back, and the request goes where it may await [`Auditor::reserve`].
    pub fn try_reserve(
        &self,
        records: Vec<AuditRecord>,
    ) -> std::result::Result<Reserved, Vec<AuditRecord>> {
        match self.writer.try_room(records.len()) {
            Some(room) => Ok(Reserved {
                records,
                room: Some(room),
            }),
            None => Err(records),
        }
    }

    /// Room for `records`, awaited (in arrival order) without holding a thread: the
    /// backpressure that keeps an overloaded audit log from dropping records.
    pub async fn reserve(&self, records: Vec<AuditRecord>) -> Reserved {
        let room = self.writer.room(records.len()).await;
        Reserved { records, room }
    }

    /// Queues a request's records, `failed` saying whether its answer was an error. Never
    /// waits: the room was taken before the request ran.
    pub fn log(&self, reserved: Reserved, failed: bool) {
        let Reserved { mut records, room } = reserved;
        for r in &mut records {
            r.error = failed;
        }
        self.writer.push(records, room);
    }

    /// What the audit log did (records written, failed, time requests waited for room).
    pub fn stats(&self) -> &AuditStats {
        self.writer.stats()
    }

    /// Records queued or being written now, and the room there is for them.
    pub fn queue(&self) -> (usize, usize) {
        (self.writer.queued(), self.writer.capacity())
    }
}

/// The session's user name for a record.
fn user(session: &Session) -> String {
    session
        .user
        .read()
        .clone()
        .unwrap_or_else(|| ANONYMOUS.to_string())
}
