//! Where trace sessions are kept: Cassandra 5.0's `system_traces.sessions` and
//! `system_traces.events` (`TraceKeyspace`), and the thread that writes them.
//!
//! The tables ([`super::tables`]) are replicated as Cassandra's are (SimpleStrategy, two
//! replicas) and the rows are written through the storage proxy, so a session is read back
//! from any node at ONE as long as one of its replicas is up.
//!
//! One writer thread per node ([`Writer`]) takes finished sessions from a bounded queue and
//! writes what Cassandra writes for each (`makeStartSessionMutation`, `makeEventMutation`,
//! `makeStopSessionMutation`): the session row (as an INSERT: a row marker, the columns, the
//! `parameters` map overwritten) and its events, then `duration` in a second write, every cell
//! with the TTL `trace_type_query_ttl` — so a reader that sees `duration` finds every event of
//! the coordinator's. A replica's part of a session (no request) is its events only; they may
//! arrive after the coordinator's `duration` (Cassandra's replicas race it too).
//!
//! The writer builds the mutations itself (the two tables are fixed; going through CQL
//! statements cost two thirds of its time) and writes every session waiting in the queue, up
//! to [`SESSIONS_PER_WRITE`], in one call to the storage proxy at consistency ONE (one
//! commitlog record on a node alone), then their durations in a second: under load it keeps
//! up with several times more sessions than one write per session did.

use super::tables::{EVENTS_ID, SESSIONS_ID};
use super::{TraceEvent, TraceRequest};
use crate::error::{Error, Result};
use crate::exec::Executor;
use crate::values::collections::comparable_encode;
use bytes::Bytes;
use cairn_cluster::consistency::Consistency;
use cairn_engine::model::types::CqlType;
use cairn_engine::model::{
    Cell, ClusteringKey, ColumnData, ColumnId, ComplexColumn, DecoratedKey, DeletionTime,
    LivenessInfo, Mutation, Partition, Row,
};
use cairn_engine::schema::TableSchema;
use cairn_engine::Wait;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

/// Sessions the queue holds before new ones are dropped.
pub const QUEUE_SESSIONS: usize = 4096;

/// Sessions written in one call to the storage proxy at most.
pub const SESSIONS_PER_WRITE: usize = 128;

/// A session as the writer stores it.
#[derive(Debug)]
pub struct Finished {
    pub(super) id: [u8; 16],
    pub(super) started_micros: i64,
    pub(super) duration_micros: i32,
    /// The request, on its coordinator; `None`: a replica's events only.
    pub(super) request: Option<TraceRequest>,
    pub(super) events: Vec<TraceEvent>,
}

/// The queue's sending end, kept by the request path.
#[derive(Clone)]
pub(super) struct Writer {
    queue: SyncSender<Finished>,
    dropped: Arc<AtomicU64>,
}

impl Writer {
    /// Starts the writer thread.
    pub(super) fn start(executor: Arc<Executor>, node: SocketAddr, ttl: Duration) -> Result<Self> {
        let (queue, sessions) = std::sync::mpsc::sync_channel(QUEUE_SESSIONS);
        let dropped = Arc::new(AtomicU64::new(0));
        let mut store = Store {
            executor,
            node,
            ttl: u32::try_from(ttl.as_secs()).unwrap_or(u32::MAX),
            dropped: Arc::clone(&dropped),
        };
        std::thread::Builder::new()
            .name("trace-writer".into())
            .spawn(move || store.run(sessions))
            .map_err(|e| Error::Server(format!("cannot start the trace writer: {e}")))?;
        Ok(Writer { queue, dropped })
    }

    /// Queues a session; a full queue drops it (counted).
    pub(super) fn push(&self, f: Finished) {
        match self.queue.try_send(f) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub(super) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The writer thread's state.
struct Store {
    executor: Arc<Executor>,
    node: SocketAddr,
    /// Seconds; 0: the rows do not expire.
    ttl: u32,
    dropped: Arc<AtomicU64>,
}

impl Store {
    fn run(&mut self, sessions: Receiver<Finished>) {
        while let Ok(first) = sessions.recv() {
            let mut group = vec![first];
            while group.len() < SESSIONS_PER_WRITE {
                match sessions.try_recv() {
                    Ok(f) => group.push(f),
                    Err(_) => break,
                }
            }
            if let Err(e) = self.write(&group) {
                self.dropped
                    .fetch_add(group.len() as u64, Ordering::Relaxed);
                tracing::warn!("tracing: {} sessions not stored: {e}", group.len());
            }
        }
    }

    /// Writes the sessions' rows and events, then the coordinators' durations.
    fn write(&self, group: &[Finished]) -> Result<()> {
        let db = self.executor.proxy().db();
        let schema = |id: u128| {
            db.table_by_id(id)
                .map(|t| t.schema())
                .ok_or_else(|| Error::Server("the system_traces tables are missing".into()))
        };
        let (sessions, events) = (schema(SESSIONS_ID)?, schema(EVENTS_ID)?);
        let (mut first, mut durations) = (Vec::new(), Vec::new());
        let w = Writes::new(self.ttl);
        for f in group {
            if let Some(request) = &f.request {
                first.push(w.session(&sessions, f, request, self.node)?);
                durations.push(Writes::duration(&sessions, f)?);
            }
            if !f.events.is_empty() {
                first.push(w.events(&events, f, self.node)?);
            }
        }
        let proxy = self.executor.proxy();
        if !first.is_empty() {
            proxy.mutate(first, Consistency::One, Wait::Allowed)?;
        }
        // `duration` last: drivers read the events once they see it.
        if !durations.is_empty() {
            let w = Writes::new(self.ttl);
            let durations = durations.into_iter().map(|d| d(&w)).collect();
            proxy.mutate(durations, Consistency::One, Wait::Allowed)?;
        }
        Ok(())
    }
}

/// Builds the rows of one write: its timestamp and expiry.
struct Writes {
    micros: i64,
    now: u32,
    ttl: u32,
}

impl Writes {
    fn new(ttl: u32) -> Writes {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Writes {
            micros: i64::try_from(since.as_micros()).unwrap_or(i64::MAX),
            now: u32::try_from(since.as_secs()).unwrap_or(u32::MAX - 1),
            ttl,
        }
    }

    fn cell(&self, value: Bytes) -> Cell {
        if self.ttl == 0 {
            Cell::live(self.micros, value)
        } else {
            Cell::expiring(self.micros, self.ttl, self.now, value)
        }
    }

    /// An INSERT's row marker.
    fn marker(&self) -> LivenessInfo {
        if self.ttl == 0 {
            LivenessInfo::live(self.micros)
        } else {
            LivenessInfo::expiring(self.micros, self.ttl, self.now)
        }
    }

    /// The session's row, as `INSERT INTO sessions (session_id, client, command,
    /// coordinator, coordinator_port, parameters, request, started_at)` writes it.
    fn session(
        &self,
        t: &TableSchema,
        f: &Finished,
        request: &TraceRequest,
        node: SocketAddr,
    ) -> Result<Mutation> {
        let mut params: Vec<(Bytes, Cell)> = Vec::with_capacity(request.parameters.len());
        for (k, v) in &request.parameters {
            let path = comparable_encode(&CqlType::Text, k.as_bytes())
                .map_err(|e| Error::Server(format!("trace parameter {k:?}: {e}")))?;
            params.push((Bytes::from(path), self.cell(text(v))));
        }
        // Later entries of one key win, as in a map literal.
        params.reverse();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        params.dedup_by(|a, b| a.0 == b.0);
        let parameters = ColumnData::Complex(ComplexColumn {
            deletion: Some(DeletionTime {
                marked_at: self.micros - 1,
                local_deletion_time: self.now,
            }),
            cells: params,
        });
        let started_ms = f.started_micros.div_euclid(1000);
        let row = row(
            t,
            Some(self.marker()),
            vec![
                ("client", self.simple(inet(request.client.ip()))),
                ("command", self.simple(text("QUERY"))),
                ("coordinator", self.simple(inet(node.ip()))),
                ("coordinator_port", self.simple(int(i32::from(node.port())))),
                ("parameters", parameters),
                ("request", self.simple(text(request.request))),
                (
                    "started_at",
                    self.simple(Bytes::copy_from_slice(&started_ms.to_be_bytes())),
                ),
            ],
        )?;
        Ok(one_row(t, f, ClusteringKey::empty(), row))
    }

    /// The session's `duration`, as `UPDATE sessions SET duration = ?` writes it — built
    /// now, timed when the second write is built (after the first is applied).
    fn duration(t: &TableSchema, f: &Finished) -> Result<impl FnOnce(&Writes) -> Mutation> {
        let id = column_id(t, "duration")?;
        let (table, key, micros) = (t.id, session_key(f), f.duration_micros);
        Ok(move |w: &Writes| {
            let row = Row {
                columns: vec![(id, w.simple(int(micros)))],
                ..Row::default()
            };
            let mut update = Partition::default();
            update.rows.insert(ClusteringKey::empty(), row);
            Mutation { table, key, update }
        })
    }

    /// The session's events on this node, one row each.
    fn events(&self, t: &TableSchema, f: &Finished, node: SocketAddr) -> Result<Mutation> {
        let layout = t.clustering_layout();
        let mut update = Partition::default();
        for e in &f.events {
            let ck = layout
                .encode_key(&[&e.id[..]])
                .map_err(|err| Error::Server(format!("trace event id: {err}")))?;
            let row = row(
                t,
                Some(self.marker()),
                vec![
                    ("activity", self.simple(text(&e.activity))),
                    ("source", self.simple(inet(node.ip()))),
                    ("source_elapsed", self.simple(int(e.elapsed_micros))),
                    ("source_port", self.simple(int(i32::from(node.port())))),
                    ("thread", self.simple(text(&e.thread))),
                ],
            )?;
            update.rows.insert(ck, row);
        }
        Ok(Mutation {
            table: t.id,
            key: session_key(f),
            update,
        })
    }

    fn simple(&self, value: Bytes) -> ColumnData {
        ColumnData::Simple(self.cell(value))
    }
}

/// A row of `t` with `marker` and the named columns (sorted by id, as rows keep them).
fn row(
    t: &TableSchema,
    marker: Option<LivenessInfo>,
    named: Vec<(&str, ColumnData)>,
) -> Result<Row> {
    let mut columns = Vec::with_capacity(named.len());
    for (name, data) in named {
        columns.push((column_id(t, name)?, data));
    }
    columns.sort_by_key(|(id, _)| *id);
    Ok(Row {
        marker,
        columns,
        ..Row::default()
    })
}

fn column_id(t: &TableSchema, name: &str) -> Result<ColumnId> {
    t.column(name)
        .map(|c| c.id)
        .ok_or_else(|| Error::Server(format!("system_traces.{} has no column {name}", t.name)))
}

fn session_key(f: &Finished) -> DecoratedKey {
    DecoratedKey::new(Bytes::copy_from_slice(&f.id))
}

fn one_row(t: &TableSchema, f: &Finished, ck: ClusteringKey, row: Row) -> Mutation {
    let mut update = Partition::default();
    update.rows.insert(ck, row);
    Mutation {
        table: t.id,
        key: session_key(f),
        update,
    }
}

fn text(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn int(v: i32) -> Bytes {
    Bytes::copy_from_slice(&v.to_be_bytes())
}

fn inet(ip: IpAddr) -> Bytes {
    Bytes::from(match ip {
        IpAddr::V4(v) => v.octets().to_vec(),
        IpAddr::V6(v) => v.octets().to_vec(),
    })
}
