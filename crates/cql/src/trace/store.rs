//! Where trace sessions are kept: Cassandra 5.0's `system_traces.sessions` and
//! `system_traces.events` (`TraceKeyspace`), and the thread that writes them.
//!
//! The tables ([`super::tables`]) are replicated as Cassandra's are (SimpleStrategy, two
//! replicas) and the rows are written through the storage proxy, so a session is read back
//! from any node at ONE as long as one of its replicas is up.
//!
//! One writer thread per node ([`Writer`]) takes finished sessions from a bounded queue and
//! writes each as Cassandra does (`makeStartSessionMutation`, `makeEventMutation`,
//! `makeStopSessionMutation`): the session row and its events in one unlogged BATCH, then
//! `duration` in a second write, all with the TTL `trace_type_query_ttl` — so a reader that
//! sees `duration` finds every event of the coordinator's. A replica's part of a session
//! (no request) is its events only, written the same way; they may arrive after the
//! coordinator's `duration` (Cassandra's replicas race it too). The writes go through the executor as prepared
//! statements of an internal session (the only writer the system keyspace admits).

use super::{TraceEvent, TraceRequest};
use crate::ast::BatchKind;
use crate::error::{Error, Result};
use crate::exec::{BatchItem, BatchOptions, BoundValue, Executor, Levels, QueryParams, Session};
use bytes::Bytes;
use cairn_cluster::consistency::Consistency;
use cairn_engine::Wait;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

/// Sessions the queue holds before new ones are dropped.
pub const QUEUE_SESSIONS: usize = 4096;

const INSERT_SESSION: &str = "INSERT INTO system_traces.sessions (session_id, client, command, \
     coordinator, coordinator_port, parameters, request, started_at) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?";
const INSERT_EVENT: &str = "INSERT INTO system_traces.events (session_id, event_id, activity, \
     source, source_elapsed, source_port, thread) VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ?";
const SET_DURATION: &str =
    "UPDATE system_traces.sessions USING TTL ? SET duration = ? WHERE session_id = ?";

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
            session: Session::internal(),
            node,
            ttl: i32::try_from(ttl.as_secs()).unwrap_or(i32::MAX),
            prepared: None,
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

/// The prepared statements' ids.
#[derive(Clone, Copy)]
struct Prepared {
    session: [u8; 16],
    event: [u8; 16],
    duration: [u8; 16],
}

/// The writer thread's state.
struct Store {
    executor: Arc<Executor>,
    session: Session,
    node: SocketAddr,
    ttl: i32,
    prepared: Option<Prepared>,
    dropped: Arc<AtomicU64>,
}

impl Store {
    fn run(&mut self, sessions: Receiver<Finished>) {
        while let Ok(f) = sessions.recv() {
            if let Err(e) = self.write(&f) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    "tracing: session {} not stored: {e}",
                    crate::values::temporal::format_uuid(&f.id)
                );
            }
        }
    }

    fn prepare(&mut self) -> Result<Prepared> {
        if let Some(p) = self.prepared {
            return Ok(p);
        }
        let ex = &self.executor;
        let p = Prepared {
            session: ex.prepare(&self.session, INSERT_SESSION)?.id,
            event: ex.prepare(&self.session, INSERT_EVENT)?.id,
            duration: ex.prepare(&self.session, SET_DURATION)?.id,
        };
        self.prepared = Some(p);
        Ok(p)
    }

    /// Writes a session: its row and events, then its duration. A schema change forgets
    /// prepared statements: prepared again once.
    fn write(&mut self, f: &Finished) -> Result<()> {
        for _ in 0..2 {
            match self.write_once(f) {
                Err(Error::Unprepared(_)) => self.prepared = None,
                other => return other,
            }
        }
        Err(Error::Server(
            "the trace statements cannot be prepared".into(),
        ))
    }

    fn write_once(&mut self, f: &Finished) -> Result<()> {
        if f.request.is_none() && f.events.is_empty() {
            return Ok(());
        }
        let p = self.prepare()?;
        let id = BoundValue::Value(Bytes::copy_from_slice(&f.id));
        let ttl = int(self.ttl);
        let node_ip = inet(self.node.ip());
        let port = int(i32::from(self.node.port()));
        let mut items = Vec::with_capacity(f.events.len() + 1);
        if let Some(request) = &f.request {
            items.push((
                BatchItem::Prepared(p.session.to_vec()),
                values(vec![
                    id.clone(),
                    inet(request.client.ip()),
                    text("QUERY"),
                    node_ip.clone(),
                    port.clone(),
                    BoundValue::Value(crate::exec::catalog::encode_text_map(&request.parameters)),
                    text(request.request),
                    BoundValue::Value(Bytes::copy_from_slice(
                        &f.started_micros.div_euclid(1000).to_be_bytes(),
                    )),
                    ttl.clone(),
                ]),
            ));
        }
        for e in &f.events {
            items.push((
                BatchItem::Prepared(p.event.to_vec()),
                values(vec![
                    id.clone(),
                    BoundValue::Value(Bytes::copy_from_slice(&e.id)),
                    text(&e.activity),
                    node_ip.clone(),
                    int(e.elapsed_micros),
                    port.clone(),
                    text(&e.thread),
                    ttl.clone(),
                ]),
            ));
        }
        let options = BatchOptions {
            levels: Levels {
                consistency: Consistency::One,
                ..Levels::default()
            },
            ..BatchOptions::default()
        };
        self.executor.batch(
            &self.session,
            BatchKind::Unlogged,
            &items,
            options,
            Wait::Allowed,
        )?;
        if f.request.is_none() {
            // A replica's events: the session's row is its coordinator's.
            return Ok(());
        }
        // `duration` last: drivers read the events once they see it.
        let params = QueryParams {
            levels: options.levels,
            ..values(vec![ttl, int(f.duration_micros), id])
        };
        self.executor
            .execute(&self.session, &p.duration, &params, Wait::Allowed)?;
        Ok(())
    }
}

fn values(values: Vec<BoundValue>) -> QueryParams {
    QueryParams {
        values,
        ..QueryParams::default()
    }
}

fn text(s: &str) -> BoundValue {
    BoundValue::Value(Bytes::copy_from_slice(s.as_bytes()))
}

fn int(v: i32) -> BoundValue {
    BoundValue::Value(Bytes::copy_from_slice(&v.to_be_bytes()))
}

fn inet(ip: IpAddr) -> BoundValue {
    BoundValue::Value(Bytes::from(match ip {
        IpAddr::V4(v) => v.octets().to_vec(),
        IpAddr::V6(v) => v.octets().to_vec(),
    }))
}
