//! Query tracing and slow-query logging, as Cassandra has them.
//!
//! A request is traced when its client asks (the frame's tracing flag: cqlsh's `TRACING ON`,
//! a driver's `trace=True`) or when the node picks it with the probability `nodetool
//! settraceprobability` set ([`Tracing::should_trace`]). A traced request gets a
//! [`TraceSession`]: a time UUID (the session id the response carries) and a list of events,
//! each with its activity text and the microseconds since the request started
//! (`source_elapsed`). The executor adds the statement's own events ("Parsing …",
//! "Preparing statement"), the storage proxy the replicas it contacts, the engine what it
//! reads and writes (through the engine's seam, `cairn_engine::trace`).
//!
//! In a ring the coordinator's messages carry the session id, and each replica records its
//! own events under it ([`Tracing`] is the storage proxy's
//! `cairn_cluster::proxy::replica::ReplicaTracing`): a replica's part of a session is a
//! [`TraceSession`] without a request, its `source_elapsed` counted from the message's
//! arrival, handed to this node's trace writer when the replica is done with it (its last
//! handle dropped) — events only: the `sessions` row is the coordinator's.
//!
//! When the request ends, the session goes to the node's trace writer ([`store`]), a thread
//! that writes it to `system_traces.sessions` and `system_traces.events` — Cassandra 5.0's
//! tables, with its table ids, written with `trace_type_query_ttl` (one day) — through the
//! storage proxy at consistency ONE, the session's row and events first and its `duration`
//! last: drivers poll `sessions` until `duration` is set, then read `events`.
//!
//! Slow-query logging (`slow_query_log_timeout`, 500 ms by default; 0 turns it off): a
//! request that took longer is logged at WARN with its statement, and counted
//! ([`Tracing::slow_queries`]).
//!
//! Invariants: there is one [`Tracing`] per node, no process-wide state; an untraced
//! request costs one probability check and nothing else (no session, no allocation); a
//! request never waits for the trace writer (a bounded queue between them: a full queue
//! drops the session and counts it in [`Tracing::dropped_sessions`]).

pub mod store;
pub mod tables;

use crate::audit::record::EventClock;
use crate::error::Result;
use crate::exec::Executor;
use cairn_cluster::messaging::SessionId;
use cairn_cluster::proxy::replica::ReplicaTracing;
use cairn_engine::{Trace, TraceSink};
use parking_lot::Mutex;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Cassandra's `trace_type_query_ttl` default: one day.
pub const DEFAULT_TTL: Duration = Duration::from_secs(86_400);

/// Cassandra's `slow_query_log_timeout` default.
pub const DEFAULT_SLOW_QUERY_TIMEOUT: Duration = Duration::from_millis(500);

/// The tracing settings of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceConfig {
    /// `trace_type_query_ttl` (`tracetype_query_ttl` in seconds): how long trace rows live.
    pub ttl: Duration,
    /// `slow_query_log_timeout`: statements slower than this are logged; zero: never.
    pub slow_query_timeout: Duration,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            ttl: DEFAULT_TTL,
            slow_query_timeout: DEFAULT_SLOW_QUERY_TIMEOUT,
        }
    }
}

/// What a traced request is, for its `system_traces.sessions` row.
#[derive(Debug, Clone)]
pub struct TraceRequest {
    /// `request`: Cassandra's description ("Execute CQL3 query", …).
    pub request: &'static str,
    /// The client's address (`client`).
    pub client: SocketAddr,
    /// `parameters` (`query`, `consistency_level`, `page_size`, …).
    pub parameters: Vec<(String, String)>,
}

/// A node's tracing: the probability, the trace writer, the slow-query threshold, counters.
pub struct Tracing {
    config: TraceConfig,
    /// `settraceprobability`, as `f64` bits.
    probability: AtomicU64,
    /// Decides probabilistic tracing.
    dice: Dice,
    clock: Arc<EventClock>,
    writer: store::Writer,
    /// This node's address and storage port (`coordinator`, `source`, and their ports:
    /// Cassandra 5.0 writes its broadcast address and port, the internode one).
    node: SocketAddr,
    sessions: AtomicU64,
    slow_queries: AtomicU64,
}

impl Tracing {
    /// The node's tracing: starts the trace writer, which writes to the `system_traces`
    /// tables (the catalog made them) through `executor`. `node` is this node's address and
    /// storage port (`storage_port`), as Cassandra 5.0 writes them.
    pub fn start(
        executor: &Arc<Executor>,
        node: SocketAddr,
        config: TraceConfig,
    ) -> Result<Arc<Tracing>> {
        let writer = store::Writer::start(Arc::clone(executor), node, config.ttl)?;
        Ok(Arc::new(Tracing {
            config,
            probability: AtomicU64::new(0f64.to_bits()),
            dice: Dice(AtomicU64::new(rand::random())),
            clock: Arc::new(EventClock::default()),
            writer,
            node,
            sessions: AtomicU64::new(0),
            slow_queries: AtomicU64::new(0),
        }))
    }

    /// The settings.
    pub fn config(&self) -> TraceConfig {
        self.config
    }

    /// The probability that a request the client did not ask to trace is traced.
    pub fn probability(&self) -> f64 {
        f64::from_bits(self.probability.load(Ordering::Relaxed))
    }

    /// Sets [`Tracing::probability`]; refused outside 0..=1 with Cassandra's text.
    pub fn set_probability(&self, p: f64) -> std::result::Result<(), String> {
        if !(0.0..=1.0).contains(&p) {
            return Err("Trace probability must be between 0 and 1".into());
        }
        self.probability.store(p.to_bits(), Ordering::Relaxed);
        Ok(())
    }

    /// Whether a request is traced: the client asked, or the dice say so.
    pub fn should_trace(&self, asked: bool) -> bool {
        if asked {
            return true;
        }
        let p = self.probability();
        p > 0.0 && self.dice.roll(p)
    }

    /// Starts a traced request's session.
    pub fn begin(&self, request: TraceRequest) -> Arc<TraceSession> {
        self.sessions.fetch_add(1, Ordering::Relaxed);
        let started_micros = crate::exec::catalog::now_micros();
        let id = self.clock.next(started_micros);
        Arc::new(self.session(id, started_micros, Some(request), None))
    }

    /// A session `id` starting now (`started_micros`): a request's, or this node's part of
    /// a coordinator's, stored by `on_drop` when it is dropped.
    fn session(
        &self,
        id: SessionId,
        started_micros: i64,
        request: Option<TraceRequest>,
        on_drop: Option<store::Writer>,
    ) -> TraceSession {
        TraceSession {
            id,
            started: Instant::now(),
            started_micros,
            request,
            clock: Arc::clone(&self.clock),
            events: Mutex::new(Vec::new()),
            thread: std::thread::current()
                .name()
                .unwrap_or("request")
                .to_string(),
            on_drop,
        }
    }

    /// Ends a session: it goes to the trace writer with its duration. Never waits.
    pub fn finish(&self, session: &TraceSession) {
        self.writer.push(session.finished());
    }

    /// Logs and counts a statement that took `elapsed`, if that is over the slow-query
    /// threshold; `describe` names it (called only then).
    pub fn check_slow(&self, elapsed: Duration, describe: impl FnOnce() -> String) {
        let limit = self.config.slow_query_timeout;
        if limit.is_zero() || elapsed <= limit {
            return;
        }
        self.slow_queries.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            "slow query: <{}>, time {} msec - slow timeout {} msec",
            describe(),
            elapsed.as_millis(),
            limit.as_millis()
        );
    }

    /// Requests traced since the node started.
    pub fn sessions(&self) -> u64 {
        self.sessions.load(Ordering::Relaxed)
    }

    /// Statements logged as slow since the node started.
    pub fn slow_queries(&self) -> u64 {
        self.slow_queries.load(Ordering::Relaxed)
    }

    /// Sessions the writer could not store (a full queue, or a failed write).
    pub fn dropped_sessions(&self) -> u64 {
        self.writer.dropped()
    }

    /// This node's address and storage port.
    pub fn node(&self) -> SocketAddr {
        self.node
    }
}

impl ReplicaTracing for Tracing {
    fn replica_trace(&self, session: SessionId) -> Trace {
        let now = crate::exec::catalog::now_micros();
        let part = self.session(session, now, None, Some(self.writer.clone()));
        Arc::new(part).trace()
    }
}

/// A shared random generator (splitmix64): one atomic add and a few multiplications a roll.
struct Dice(AtomicU64);

impl Dice {
    /// True with probability `p`.
    fn roll(&self, p: f64) -> bool {
        const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut z = self
            .0
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // The top 53 bits as a fraction of 1.
        ((z >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// One event of a session.
#[derive(Debug, Clone)]
pub struct TraceEvent {
    /// `event_id`: a time UUID.
    pub id: [u8; 16],
    /// `activity`.
    pub activity: String,
    /// `source_elapsed`: microseconds since the request started.
    pub elapsed_micros: i32,
    /// `thread`.
    pub thread: String,
}

/// One traced request, or this node's part of a coordinator's: its id and the events so far.
pub struct TraceSession {
    id: [u8; 16],
    started: Instant,
    started_micros: i64,
    /// The request, on its coordinator; `None` on a replica (events only).
    request: Option<TraceRequest>,
    clock: Arc<EventClock>,
    events: Mutex<Vec<TraceEvent>>,
    /// The thread that began it: the events' default `thread`.
    thread: String,
    /// A replica's part: the writer that stores it once dropped.
    on_drop: Option<store::Writer>,
}

impl TraceSession {
    /// The session id (a time UUID): what the response's tracing id carries.
    pub fn id(&self) -> [u8; 16] {
        self.id
    }

    /// The engine's handle on it (`cairn_engine::trace`).
    pub fn trace(self: &Arc<Self>) -> Trace {
        Trace::new(Arc::clone(self) as Arc<dyn TraceSink>)
    }

    /// Microseconds since the request started.
    fn elapsed_micros(&self) -> i32 {
        i32::try_from(self.started.elapsed().as_micros()).unwrap_or(i32::MAX)
    }

    /// The session as the writer stores it, `duration` now.
    fn finished(&self) -> store::Finished {
        store::Finished {
            id: self.id,
            started_micros: self.started_micros,
            duration_micros: self.elapsed_micros(),
            request: self.request.clone(),
            events: std::mem::take(&mut *self.events.lock()),
        }
    }

    /// The events recorded so far (tests, and the slow-query log).
    pub fn events(&self) -> Vec<TraceEvent> {
        self.events.lock().clone()
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        if let Some(writer) = &self.on_drop {
            writer.push(self.finished());
        }
    }
}

impl TraceSink for TraceSession {
    fn session(&self) -> Option<[u8; 16]> {
        Some(self.id)
    }

    fn event(&self, activity: String) {
        let elapsed_micros = self.elapsed_micros();
        let id = self
            .clock
            .next(self.started_micros + i64::from(elapsed_micros));
        let thread = std::thread::current()
            .name()
            .map_or_else(|| self.thread.clone(), str::to_string);
        self.events.lock().push(TraceEvent {
            id,
            activity,
            elapsed_micros,
            thread,
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_dice_pick_about_the_share_asked() {
        let dice = Dice(AtomicU64::new(12345));
        for p in [0.0, 0.01, 0.25, 0.5, 1.0] {
            let n = 100_000;
            let picked = (0..n).filter(|_| dice.roll(p)).count();
            let share = picked as f64 / n as f64;
            // 100 000 rolls: the spread is at most 0.0016; 0.01 is over six of it.
            assert!((share - p).abs() < 0.01, "p = {p}: {share}");
        }
    }
}
