//! Where audit records go: ScyllaDB's `audit.audit_log` table or the local syslog socket.
//!
//! Both are written by one thread of the node's ([`Writer`]), fed by a queue of bounded
//! room: a request takes room for its records before it runs ([`Writer::try_room`] on the
//! reactor, which never waits; [`Writer::room`] on the request's task, which awaits room
//! without holding a thread) and queues them once answered, so its answer leaves only once
//! its records are queued and **no record is ever dropped for want of room** — under overload
//! clients slow down to what the audit log can store, as in ScyllaDB, whose requests wait for
//! their audit write. Room comes back when the writer has written the records (or logged
//! them as failed), so the room bounds the records queued and being written together.
//!
//! The table is written as any client write is (an unlogged BATCH of a prepared INSERT at
//! consistency ONE through the storage proxy, its commitlog and memtable; the records of a
//! few milliseconds together), so a record written survives a crash as any write does with
//! the node's `commitlog_sync`; records still in the queue when the process dies are lost
//! (at most the room, `audit_queue_records`). A record that cannot be written is logged to
//! the node's log at ERROR instead, as ScyllaDB falls back to its regular log, and counted
//! ([`AuditStats`]).

use super::record::AuditRecord;
use crate::ast::BatchKind;
use crate::error::{Error, Result};
use crate::exec::{BatchItem, BatchOptions, BoundValue, Executor, Levels, QueryParams, Session};
use bytes::Bytes;
use cairn_cluster::consistency::Consistency;
use cairn_engine::Wait;
use std::net::IpAddr;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Records the queue has room for unless `audit_queue_records` says otherwise.
pub const QUEUE_RECORDS: usize = 65_536;

/// The most `audit_queue_records` may be (tokio's semaphore counts permits in a `u32`
/// shifted by 3 bits; far more than a node's memory should hold in records anyway).
pub const MAX_QUEUE_RECORDS: usize = 1 << 24;

/// The local syslog socket (`_PATH_LOG`), unless `audit_unix_socket_path` names another.
pub const DEFAULT_SYSLOG_SOCKET: &str = "/dev/log";

/// The syslog tag: ScyllaDB's, so existing rsyslog rules (`$programname contains
/// 'scylla-audit'`) route Cairn's records too.
const SYSLOG_TAG: &str = "scylla-audit";

/// A syslog datagram's statement text is cut at this many bytes (a larger datagram would be
/// refused by the socket; syslog daemons cut far shorter lines anyway).
const SYSLOG_MAX_QUERY: usize = 32 * 1024;

/// How long the writer waits before trying again to create the audit table (a cluster
/// whose majority is not up yet cannot change its schema).
const SCHEMA_RETRY: Duration = Duration::from_secs(2);

/// The audit keyspace and table, as ScyllaDB creates them.
const KEYSPACE: &str = "audit";
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS audit.audit_log (\
     date timestamp, node inet, event_time timeuuid, category text, consistency text, \
     table_name text, keyspace_name text, operation text, source inet, username text, \
     error boolean, PRIMARY KEY ((date, node), event_time))";
const INSERT: &str = "INSERT INTO audit.audit_log (date, node, event_time, category, \
     consistency, table_name, keyspace_name, operation, source, username, error) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// Where the records go.
pub(super) enum Sink {
    /// `audit.audit_log`, through the executor.
    Table(TableSink),
    /// The syslog socket at this path.
    Syslog(SyslogSink),
}

/// What the audit log did, for the node's metrics (`{prefix}_audit_*`, `docs/metrics.md`).
#[derive(Debug, Default)]
pub struct AuditStats {
    written: AtomicU64,
    failed: AtomicU64,
    waits: AtomicU64,
    wait_micros: AtomicU64,
}

impl AuditStats {
    /// Records stored in the table or sent to syslog.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Records that could not be written and went to the node's log instead.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Requests that found no room for their records and waited for it.
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }

    /// Microseconds those requests waited, in all.
    pub fn wait_micros(&self) -> u64 {
        self.wait_micros.load(Ordering::Relaxed)
    }
}

/// Room in the queue for one request's records, taken before the request runs; given back
/// when the writer is done with them (or when the request goes without queueing them).
#[derive(Debug)]
pub struct Room {
    /// Held, not read: dropping it gives the room back.
    _permit: OwnedSemaphorePermit,
}

/// Records on their way to the writer, with the room they hold.
struct Queued {
    records: Vec<AuditRecord>,
    room: Option<Room>,
}

/// The queue's sending end, kept by the request path.
pub(super) struct Writer {
    queue: Sender<Queued>,
    room: Arc<Semaphore>,
    capacity: usize,
    stats: Arc<AuditStats>,
}

impl Writer {
    /// Starts the writer thread for `sink`, with room for `capacity` records (at least 1,
    /// at most [`MAX_QUEUE_RECORDS`]).
    pub(super) fn start(sink: Sink, node: IpAddr, capacity: usize) -> Result<Writer> {
        let capacity = capacity.clamp(1, MAX_QUEUE_RECORDS);
        let (queue, records) = std::sync::mpsc::channel();
        let stats = Arc::new(AuditStats::default());
        let thread_stats = Arc::clone(&stats);
        std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || write_all(sink, node, records, &thread_stats))
            .map_err(|e| Error::AuditSink {
                sink: "writer thread",
                reason: e.to_string(),
            })?;
        Ok(Writer {
            queue,
            room: Arc::new(Semaphore::new(capacity)),
            capacity,
            stats,
        })
    }

    /// The room `records` records take: one each, but never more than the whole queue (a
    /// BATCH of more statements than that takes it all, and passes alone).
    fn permits(&self, records: usize) -> u32 {
        u32::try_from(records.clamp(1, self.capacity)).unwrap_or(u32::MAX)
    }

    /// Room for `records` records if there is some now.
    pub(super) fn try_room(&self, records: usize) -> Option<Room> {
        Arc::clone(&self.room)
            .try_acquire_many_owned(self.permits(records))
            .ok()
            .map(|p| Room { _permit: p })
    }

    /// Room for `records` records, awaited (first come, first served) without holding a
    /// thread; the time waited is counted. `None` only if the queue was closed, which the
    /// node never does.
    pub(super) async fn room(&self, records: usize) -> Option<Room> {
        if let Some(room) = self.try_room(records) {
            return Some(room);
        }
        let since = Instant::now();
        let room = Arc::clone(&self.room)
            .acquire_many_owned(self.permits(records))
            .await
            .ok()
            .map(|p| Room { _permit: p });
        let waited = u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.stats.waits.fetch_add(1, Ordering::Relaxed);
        self.stats.wait_micros.fetch_add(waited, Ordering::Relaxed);
        room
    }

    /// Queues records in the room taken for them (`None`: the room could not be taken,
    /// which only a closed queue does). Never waits. Only a writer thread that is gone (it
    /// panicked) loses them — to the node's log, counted as failed.
    pub(super) fn push(&self, records: Vec<AuditRecord>, room: Option<Room>) {
        if let Err(e) = self.queue.send(Queued { records, room }) {
            let lost = e.0.records;
            self.stats
                .failed
                .fetch_add(lost.len() as u64, Ordering::Relaxed);
            for r in &lost {
                tracing::error!(
                    "audit: the audit writer is gone; a record was: {}",
                    r.fields_text(None)
                );
            }
        }
    }

    /// Records queued or being written (room taken by requests that ran and by requests
    /// about to).
    pub(super) fn queued(&self) -> usize {
        self.capacity.saturating_sub(self.room.available_permits())
    }

    /// The queue's room, `audit_queue_records`.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(super) fn stats(&self) -> &AuditStats {
        &self.stats
    }
}

/// The writer thread: every record in the queue to the sink, until the queue's sending end
/// goes (the node stops). It takes what the queue holds (up to [`MAX_BATCH`] records) and
/// writes it together; when that is only a few records, it first lets more gather for
/// [`GATHER`], so a steady trickle of requests wakes it once per batch rather than once per
/// record. The room of what it took comes back once it is written.
fn write_all(mut sink: Sink, node: IpAddr, queue: Receiver<Queued>, stats: &AuditStats) {
    let drain = |taken: &mut Vec<Queued>, count: &mut usize| {
        while *count < MAX_BATCH {
            match queue.try_recv() {
                Ok(q) => {
                    *count += q.records.len();
                    taken.push(q);
                }
                Err(_) => break,
            }
        }
    };
    while let Ok(first) = queue.recv() {
        let mut count = first.records.len();
        let mut taken = vec![first];
        drain(&mut taken, &mut count);
        if count < GATHER_BELOW {
            std::thread::sleep(GATHER);
            drain(&mut taken, &mut count);
        }
        let mut records = Vec::with_capacity(count);
        let mut rooms = Vec::with_capacity(taken.len());
        for q in taken {
            records.extend(q.records);
            rooms.push(q.room);
        }
        let failed = sink.write(&records, node);
        stats.failed.fetch_add(failed, Ordering::Relaxed);
        stats
            .written
            .fetch_add(records.len() as u64 - failed, Ordering::Relaxed);
        // Only now: the room bounds what is queued and what is being written.
        drop(rooms);
    }
}

/// How long the writer lets records gather when few are waiting.
const GATHER: Duration = Duration::from_millis(2);

/// Fewer records than this waiting: gather more first.
const GATHER_BELOW: usize = 64;

/// Records written together at most.
const MAX_BATCH: usize = 4096;

impl Sink {
    /// Writes `records`; those that cannot be written go to the node's log. Returns how
    /// many could not be written.
    fn write(&mut self, records: &[AuditRecord], node: IpAddr) -> u64 {
        let mut count = 0;
        let mut failed = |r: &AuditRecord, e: &Error| {
            count += 1;
            tracing::error!(
                "audit: cannot write a record ({e}); it was: {}",
                r.fields_text(Some(node))
            );
        };
        match self {
            Sink::Table(t) => {
                // One BATCH per day, so that each is one partition (no batch-size limit).
                for day in records.chunk_by(|a, b| day_millis(a) == day_millis(b)) {
                    if let Err(e) = t.write(day, node) {
                        day.iter().for_each(|r| failed(r, &e));
                    }
                }
            }
            Sink::Syslog(s) => {
                for r in records {
                    if let Err(e) = s.write(r, node) {
                        failed(r, &e);
                    }
                }
            }
        }
        count
    }
}

/// `audit_log.date` of a record: its day's midnight (UTC), in milliseconds.
fn day_millis(r: &AuditRecord) -> i64 {
    let millis = r.time_micros.div_euclid(1000);
    millis - millis.rem_euclid(crate::values::temporal::MILLIS_PER_DAY)
}

/// The `audit.audit_log` sink.
pub(super) struct TableSink {
    executor: Arc<Executor>,
    /// The writer's own session: the node's internal one (an internal write is not a
    /// client's: no user, and no permission check when the authorizer is on).
    session: Session,
    /// The prepared INSERT; prepared again when a schema change dropped it.
    insert: Option<[u8; 16]>,
    /// The keyspace and table exist.
    ready: bool,
}

impl TableSink {
    /// The sink; creates ScyllaDB's audit keyspace (`NetworkTopologyStrategy`, three
    /// replicas in the node's data center) and table if they do not exist — at once on a
    /// node alone, so the table is there when clients come. In a cluster, whose schema
    /// cannot change while a majority of it is not up (nodes starting together), the
    /// writer creates them before its first record, trying until it can.
    pub(super) fn open(executor: Arc<Executor>) -> TableSink {
        let mut sink = TableSink {
            executor,
            session: Session::internal(),
            insert: None,
            ready: false,
        };
        if !sink.executor.proxy().coordinates() {
            if let Err(e) = sink.create_schema() {
                tracing::warn!("audit: the audit table cannot be created yet ({e}); retrying");
            }
        }
        sink
    }

    fn create_schema(&mut self) -> Result<()> {
        let dc = self.executor.node().data_center.replace('\'', "''");
        let keyspace = format!(
            "CREATE KEYSPACE IF NOT EXISTS {KEYSPACE} WITH replication = \
             {{'class': 'NetworkTopologyStrategy', '{dc}': 3}}"
        );
        for text in [keyspace.as_str(), CREATE_TABLE] {
            self.executor
                .query(&self.session, text, &QueryParams::default(), Wait::Allowed)?;
        }
        self.ready = true;
        Ok(())
    }

    /// Writes records of one day as one unlogged BATCH of the prepared INSERT (one
    /// partition: one mutation, one commitlog entry).
    fn write(&mut self, records: &[AuditRecord], node: IpAddr) -> Result<()> {
        while !self.ready {
            if let Err(e) = self.create_schema() {
                tracing::warn!("audit: the audit table cannot be created yet ({e}); retrying");
                std::thread::sleep(SCHEMA_RETRY);
            }
        }
        let rows: Vec<QueryParams> = records
            .iter()
            .map(|r| QueryParams {
                values: row(r, node),
                ..QueryParams::default()
            })
            .collect();
        let options = BatchOptions {
            levels: Levels {
                consistency: Consistency::One,
                ..Levels::default()
            },
            ..BatchOptions::default()
        };
        // A schema change forgets prepared statements: prepare again once.
        for _ in 0..2 {
            let id = match self.insert {
                Some(id) => id,
                None => {
                    let id = self.executor.prepare(&self.session, INSERT)?.id;
                    self.insert = Some(id);
                    id
                }
            };
            let items: Vec<(BatchItem, QueryParams)> = rows
                .iter()
                .map(|p| (BatchItem::Prepared(id.to_vec()), p.clone()))
                .collect();
            match self.executor.batch(
                &self.session,
                BatchKind::Unlogged,
                &items,
                options,
                Wait::Allowed,
            ) {
                Err(Error::Unprepared(_)) => self.insert = None,
                other => return other.map(drop),
            }
        }
        Err(Error::AuditSink {
            sink: "table",
            reason: "the audit INSERT cannot be prepared".into(),
        })
    }
}

/// A record as the INSERT's bound values, in the INSERT's column order.
fn row(r: &AuditRecord, node: IpAddr) -> Vec<BoundValue> {
    let text = |s: &str| BoundValue::Value(Bytes::copy_from_slice(s.as_bytes()));
    let inet = |ip: IpAddr| {
        BoundValue::Value(Bytes::from(match ip {
            IpAddr::V4(v) => v.octets().to_vec(),
            IpAddr::V6(v) => v.octets().to_vec(),
        }))
    };
    vec![
        BoundValue::Value(Bytes::copy_from_slice(&day_millis(r).to_be_bytes())),
        inet(node),
        BoundValue::Value(Bytes::copy_from_slice(&r.event_time)),
        text(r.category.name()),
        text(r.consistency.map_or("", Consistency::name)),
        text(&r.table),
        text(&r.keyspace),
        text(&r.operation),
        inet(r.source.ip()),
        text(&r.username),
        BoundValue::Value(Bytes::from_static(if r.error { &[1] } else { &[0] })),
    ]
}

/// The syslog sink: one datagram per record to a unix socket (made by
/// [`super::Auditor::open_syslog`]).
pub struct SyslogSink {
    socket: UnixDatagram,
    path: PathBuf,
}

impl SyslogSink {
    /// The sink, after one datagram announcing it reached `path` (so a missing or closed
    /// socket stops the node at start instead of losing every record).
    pub(super) fn open(path: Option<&Path>) -> Result<SyslogSink> {
        let path = path.map_or_else(|| PathBuf::from(DEFAULT_SYSLOG_SOCKET), Path::to_path_buf);
        let socket = UnixDatagram::unbound().map_err(|e| syslog_error(&path, &e))?;
        let sink = SyslogSink { socket, path };
        let hello = syslog_line(now_micros(), "audit log started");
        sink.send(&hello)?;
        Ok(sink)
    }

    fn send(&self, line: &str) -> Result<()> {
        self.socket
            .send_to(line.as_bytes(), &self.path)
            .map(drop)
            .map_err(|e| syslog_error(&self.path, &e))
    }

    fn write(&mut self, record: &AuditRecord, node: IpAddr) -> Result<()> {
        let line = syslog_line(
            record.time_micros,
            &record.syslog_fields(node, SYSLOG_MAX_QUERY),
        );
        self.send(&line)
    }
}

fn syslog_error(path: &Path, e: &std::io::Error) -> Error {
    Error::AuditSink {
        sink: "syslog",
        reason: format!("sending to {} failed: {e}", path.display()),
    }
}

/// One syslog datagram (RFC 3164, as `/dev/log` takes it): facility user, severity notice,
/// the time (UTC), the tag and process id, and the message.
pub(super) fn syslog_line(micros: i64, message: &str) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = micros.div_euclid(1_000_000);
    let (_, month, day) = crate::values::temporal::civil_from_days(secs.div_euclid(86_400));
    let in_day = secs.rem_euclid(86_400);
    let month = MONTHS[(month as usize).clamp(1, 12) - 1];
    // <13>: facility user (1) × 8 + severity notice (5).
    format!(
        "<13>{month} {day:>2} {:02}:{:02}:{:02} {SYSLOG_TAG}[{}]: {message}",
        in_day / 3600,
        in_day % 3600 / 60,
        in_day % 60,
        std::process::id()
    )
}

/// Microseconds since the epoch, now.
pub(super) fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn syslog_lines_are_rfc3164() {
        // 2018-03-18 09:53:52 UTC.
        let micros = 1_521_366_832_000_000;
        let line = syslog_line(micros, "x=\"1\"");
        let pid = std::process::id();
        assert_eq!(
            line,
            format!("<13>Mar 18 09:53:52 scylla-audit[{pid}]: x=\"1\"")
        );
        assert!(syslog_line(micros - 17 * 86_400_000_000, "m").starts_with("<13>Mar  1 "));
    }
}
