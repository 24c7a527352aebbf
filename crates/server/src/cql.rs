//! The CQL front door: protocol requests handed to the executor, results encoded back.
//!
//! The executor and the engine are synchronous. A statement first runs inline on the
//! connection's reactor thread with `Wait::Never` ([`Handler::handle_inline`]; see
//! `cairn_engine::io::Wait`): reads served from memory or the page cache and writes that
//! find memtable space finish there, with no hand-off between threads. A statement that
//! would wait (a read missing the page cache, full memtables, a commitlog sync in batch
//! mode, a taken partition lock, a schema change, authentication) stops before changing
//! anything and goes to [`Handler::handle`], on its own task. There a QUERY, EXECUTE or BATCH that
//! writes to other replicas runs again with `Wait::Never` and the proxy's `Acks`: this node's
//! share is applied, the others are sent theirs, and the task awaits the consistency level —
//! no thread waits. A single-partition read that waits only for other replicas is started
//! the same way: the task awaits the replicas' answers, then runs the statement again, which
//! finds its read answered (a read repair, a failed replica or this node's disk go on below). Whatever still would wait runs again on tokio's blocking pool
//! (`spawn_blocking`) with `Wait::Allowed`.
//! On a node that coordinates other replicas ([`Handler::starts_inline`]), the inline attempt
//! of a QUERY, EXECUTE or BATCH already runs with the `Acks` ([`Handler::start_inline`]): the
//! write is applied here and sent, the read sent, and only the wait for the other replicas
//! (then, for a read, the statement's run with its answer) goes on in the statement's task —
//! a request is not planned once more to get there.
//! Schema changes are also published as SCHEMA_CHANGE events to registered connections.
//!
//! Tracing (`cairn_cql::trace`): a request the client asked to trace (the frame's tracing
//! flag), or that the node picks with `settraceprobability`'s probability, runs with a
//! trace session; its answer carries the session id when the client asked (as Cassandra, a
//! request traced by probability answers without it), and the session is handed to the
//! trace writer when the answer is ready. The decision is taken once per request: a traced
//! request (or, while the probability is above zero, any request) that cannot finish inline
//! leaves its decision and session in [`CqlHandler::handed_over`] for [`Handler::handle`].
//! Every statement that ends (not one refused to wait) is checked against
//! `slow_query_log_timeout` from the request's start.

use crate::audit::Pending;
use crate::protocol::{
    self, BatchQuery, ColumnType, CqlError, ErrorKind, EventBus, Handler, Inline, PreparedMetadata,
    Reply, Request, RequestContext, Response, ResultBody, ResultMetadata, RowsBuilder,
    SchemaChangeTarget, SchemaChangeType, TableSpec, Value,
};
use bytes::Bytes;
use cairn_cluster::consistency::Consistency;
use cairn_cluster::proxy::{Acks, Deferred};
use cairn_cql::audit::{Auditor, Reserved};
use cairn_cql::exec::{
    BatchItem, BatchOptions, BoundValue, ChangeKind, ColumnSpec, Executor, Levels, Outcome,
    QueryParams, ResultSet, SchemaChange, Session,
};
use cairn_cql::trace::{TraceRequest, TraceSession, Tracing};
use cairn_engine::model::types::CqlType;
use cairn_engine::Wait;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// How many times a request may go around for a read answered on its task before it runs
/// where it may block.
const DEFERRED_READS: usize = 16;

/// Serves CQL statements from an [`Executor`].
pub struct CqlHandler {
    executor: Arc<Executor>,
    events: EventBus,
    /// The node's audit log, if `audit` is on.
    audit: Option<Arc<Auditor>>,
    /// The node's tracing and slow-query log, if started (a bare handler has none).
    tracing: Option<Arc<Tracing>>,
    /// Requests that did not finish inline, by connection and stream: whether they are
    /// traced (and their session so far) and when they started. Written only for traced
    /// requests, or for any while the trace probability is above zero.
    handed_over: Mutex<HashMap<(u64, i16), Handover>>,
    /// How many calls `handed_over` holds: a request that did not finish inline looks there
    /// (takes the lock) only when it may hold one — never while nothing is traced.
    handed_over_len: AtomicUsize,
}

/// What the inline attempt of a request hands over to [`Handler::handle`].
struct Handover {
    started: Instant,
    trace: Option<Arc<TraceSession>>,
}

/// One request's call: when it started and its trace session, if traced.
struct Call {
    started: Instant,
    trace: Option<Arc<TraceSession>>,
}

impl CqlHandler {
    /// A handler publishing schema changes on `events`.
    pub fn new(executor: Arc<Executor>, events: EventBus) -> Self {
        CqlHandler {
            executor,
            events,
            audit: None,
            tracing: None,
            handed_over: Mutex::new(HashMap::new()),
            handed_over_len: AtomicUsize::new(0),
        }
    }

    /// Traces requests and logs slow ones with `tracing` (see the module doc).
    pub fn with_tracing(mut self, tracing: Arc<Tracing>) -> Self {
        self.tracing = Some(tracing);
        self
    }

    /// A new call of `request`: traced if the client asked or the dice say so.
    fn call(&self, request: &Request, ctx: &RequestContext<Session>) -> Call {
        let trace = match &self.tracing {
            Some(t) if t.should_trace(ctx.tracing) => {
                self.trace_request(request, ctx).map(|r| t.begin(r))
            }
            _ => None,
        };
        Call {
            started: Instant::now(),
            trace,
        }
    }

    /// Whether a request that does not finish inline must leave its call for
    /// [`Handler::handle`]: a traced one, or any while requests may be picked by chance.
    fn hands_over(&self, call: &Call) -> bool {
        call.trace.is_some() || self.tracing.as_ref().is_some_and(|t| t.probability() > 0.0)
    }

    /// Leaves the call of a request that did not finish inline for [`Handler::handle`],
    /// when it must (see [`CqlHandler::hands_over`]).
    fn hand_over(&self, ctx: &RequestContext<Session>, call: Call) {
        if self.hands_over(&call) {
            let h = Handover {
                started: call.started,
                trace: call.trace,
            };
            let replaced = self
                .handed_over
                .lock()
                .insert((ctx.connection.id, ctx.stream), h);
            if replaced.is_none() {
                self.handed_over_len.fetch_add(1, Ordering::AcqRel);
            }
        }
    }

    /// The call of a request reaching [`Handler::handle`]: the one its inline attempt left,
    /// or a new one.
    fn resumed_call(&self, request: &Request, ctx: &RequestContext<Session>) -> Call {
        if self.tracing.is_some() && self.handed_over_len.load(Ordering::Acquire) > 0 {
            let left = self
                .handed_over
                .lock()
                .remove(&(ctx.connection.id, ctx.stream));
            if let Some(h) = left {
                self.handed_over_len.fetch_sub(1, Ordering::AcqRel);
                return Call {
                    started: h.started,
                    trace: h.trace,
                };
            }
        }
        self.call(request, ctx)
    }

    /// Ends a call: its trace session goes to the writer, and the answer carries its id
    /// when the client asked for tracing.
    fn end_call(&self, call: &Call, asked: bool, reply: &mut Reply) {
        if let (Some(t), Some(session)) = (&self.tracing, &call.trace) {
            t.finish(session);
            if asked {
                reply.tracing_id = Some(session.id());
            }
        }
    }

    /// A traced request's `system_traces.sessions` description (Cassandra's `request` and
    /// `parameters` for each message); `None` for a message that is not traced.
    fn trace_request(
        &self,
        request: &Request,
        ctx: &RequestContext<Session>,
    ) -> Option<TraceRequest> {
        let level_params = |cl: protocol::Consistency, serial: Option<protocol::Consistency>| {
            let l = levels(cl, serial);
            vec![
                (
                    "consistency_level".to_string(),
                    l.consistency.name().to_string(),
                ),
                (
                    "serial_consistency_level".to_string(),
                    l.serial.name().to_string(),
                ),
            ]
        };
        let page_size = |p: &protocol::QueryParams| {
            p.page_size
                .filter(|n| *n > 0)
                .map(|n| ("page_size".to_string(), n.to_string()))
        };
        let (request, parameters) = match request {
            Request::Query(q) => {
                let mut p = level_params(q.params.consistency, q.params.serial_consistency);
                p.extend(page_size(&q.params));
                p.push(("query".into(), q.query.clone()));
                ("Execute CQL3 query", p)
            }
            Request::Execute(e) => {
                let mut p = level_params(e.params.consistency, e.params.serial_consistency);
                p.extend(page_size(&e.params));
                if let Ok(prepared) = self.executor.prepared(&e.id) {
                    p.push(("query".into(), prepared.text.clone()));
                }
                ("Execute CQL3 prepared query", p)
            }
            Request::Batch(b) => (
                "Execute batch of CQL3 queries",
                level_params(b.consistency, b.serial_consistency),
            ),
            Request::Prepare(p) => (
                "Preparing CQL3 query",
                vec![("query".to_string(), p.query.clone())],
            ),
            _ => return None,
        };
        Some(TraceRequest {
            request,
            client: ctx.connection.peer,
            parameters,
        })
    }

    /// Logs a statement that ran past `slow_query_log_timeout` (`describe` names it),
    /// unless it stopped to run again where it may wait: the run that ends it is checked.
    fn check_slow_unless_blocked<T>(
        &self,
        call: &Call,
        out: &cairn_cql::Result<T>,
        describe: impl FnOnce() -> String,
    ) {
        if let (Some(t), false) = (
            &self.tracing,
            matches!(out, Err(cairn_cql::Error::WouldBlock)),
        ) {
            t.check_slow(call.started.elapsed(), describe);
        }
    }

    /// Records statements and logins in `audit` (see `crate::audit`).
    pub fn with_audit(mut self, audit: Option<Arc<Auditor>>) -> Self {
        self.audit = audit;
        self
    }

    /// The audit records `request` will make, if it is audited, and the audit log.
    fn audit_begin(
        &self,
        request: &Request,
        ctx: &RequestContext<Session>,
    ) -> Option<(&Auditor, Pending)> {
        let auditor = self.audit.as_deref()?;
        crate::audit::begin(auditor, &self.executor, request, ctx).map(|p| (auditor, p))
    }

    /// Queues a request's audit records with its answer (in the room taken before it ran).
    fn audit_finish(&self, reserved: Option<Reserved>, reply: &Reply) {
        if let (Some(auditor), Some(r)) = (self.audit.as_deref(), reserved) {
            crate::audit::finish(auditor, r, reply);
        }
    }
}

/// The protocol type of a CQL type.
pub fn column_type(t: &CqlType) -> ColumnType {
    match t {
        CqlType::Ascii => ColumnType::Ascii,
        CqlType::Bigint => ColumnType::Bigint,
        CqlType::Blob => ColumnType::Blob,
        CqlType::Boolean => ColumnType::Boolean,
        CqlType::Counter => ColumnType::Counter,
        CqlType::Date => ColumnType::Date,
        CqlType::Decimal => ColumnType::Decimal,
        CqlType::Double => ColumnType::Double,
        CqlType::Duration => ColumnType::Duration,
        CqlType::Float => ColumnType::Float,
        CqlType::Inet => ColumnType::Inet,
        CqlType::Int => ColumnType::Int,
        CqlType::Smallint => ColumnType::Smallint,
        CqlType::Text => ColumnType::Varchar,
        CqlType::Time => ColumnType::Time,
        CqlType::Timestamp => ColumnType::Timestamp,
        CqlType::Timeuuid => ColumnType::Timeuuid,
        CqlType::Tinyint => ColumnType::Tinyint,
        CqlType::Uuid => ColumnType::Uuid,
        CqlType::Varint => ColumnType::Varint,
        CqlType::List(e) => ColumnType::List(Box::new(column_type(e))),
        CqlType::Set(e) => ColumnType::Set(Box::new(column_type(e))),
        CqlType::Map(k, v) => ColumnType::Map(Box::new(column_type(k)), Box::new(column_type(v))),
        CqlType::Tuple(ts) => ColumnType::Tuple(ts.iter().map(column_type).collect()),
        CqlType::Frozen(t) => column_type(t),
        CqlType::Udt(u) => ColumnType::Udt {
            keyspace: u.keyspace.clone(),
            name: u.name.clone(),
            fields: u
                .fields()
                .map(|(f, t)| (f.clone(), column_type(t)))
                .collect(),
        },
    }
}

fn metadata(columns: &[ColumnSpec]) -> ResultMetadata {
    let global = columns.first().and_then(|f| {
        columns
            .iter()
            .all(|c| c.keyspace == f.keyspace && c.table == f.table)
            .then(|| TableSpec::new(f.keyspace.clone(), f.table.clone()))
    });
    ResultMetadata {
        columns: columns
            .iter()
            .map(|c| {
                protocol::ColumnSpec::new(
                    TableSpec::new(c.keyspace.clone(), c.table.clone()),
                    c.name.clone(),
                    column_type(&c.ty),
                )
            })
            .collect(),
        global_table_spec: global,
    }
}

/// Maps an executor error to the protocol's error (code from the kind).
pub fn cql_error(e: cairn_cql::Error) -> CqlError {
    use cairn_cql::Error as E;
    let message = e.to_string();
    let kind = match e {
        E::Syntax(_) => ErrorKind::SyntaxError,
        E::Invalid(_) => ErrorKind::Invalid,
        E::Configuration(_) => ErrorKind::ConfigError,
        E::AlreadyExists {
            keyspace, table, ..
        } => ErrorKind::AlreadyExists { keyspace, table },
        E::Unauthorized(_) => ErrorKind::Unauthorized,
        E::BadCredentials(_) => ErrorKind::BadCredentials,
        E::Overloaded(_) => ErrorKind::Overloaded,
        E::Unprepared(id) => ErrorKind::Unprepared {
            id: Bytes::from(id),
        },
        E::Unavailable(u) => ErrorKind::Unavailable {
            consistency: protocol_consistency(u.consistency),
            required: count(u.required),
            alive: count(u.alive),
        },
        E::WriteTimeout(t) => ErrorKind::WriteTimeout {
            consistency: protocol_consistency(t.consistency),
            received: count(t.received),
            block_for: count(t.block_for),
            write_type: write_type(t.write_type),
        },
        E::WriteFailure(f) => ErrorKind::WriteFailure {
            consistency: protocol_consistency(f.consistency),
            received: count(f.received),
            block_for: count(f.block_for),
            num_failures: count(f.failures.len()),
            write_type: write_type(f.write_type),
        },
        E::ReadTimeout(t) => ErrorKind::ReadTimeout {
            consistency: protocol_consistency(t.consistency),
            received: count(t.received),
            block_for: count(t.block_for),
            data_present: t.data_present,
        },
        E::ReadFailure(f) => ErrorKind::ReadFailure {
            consistency: protocol_consistency(f.consistency),
            received: count(f.received),
            block_for: count(f.block_for),
            num_failures: count(f.failures.len()),
            data_present: f.data_present,
        },
        E::FunctionFailure(f) => ErrorKind::FunctionFailure {
            keyspace: f.keyspace,
            function: f.function,
            arg_types: f.arg_types,
        },
        _ => ErrorKind::Server,
    };
    CqlError { kind, message }
}

fn params(p: protocol::QueryParams, acks: Option<&Arc<Acks>>, call: &Call) -> QueryParams {
    QueryParams {
        acks: acks.cloned(),
        trace: call.trace.as_ref().map(TraceSession::trace),
        levels: levels(p.consistency, p.serial_consistency),
        values: p.values.into_iter().map(bound).collect(),
        names: p.names,
        page_size: p.page_size,
        paging_state: p.paging_state,
        timestamp: p.default_timestamp,
    }
}

/// A replica count as the protocol's `[int]`.
fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The protocol's write type for the cluster's.
fn write_type(t: cairn_cluster::consistency::WriteType) -> protocol::WriteType {
    use cairn_cluster::consistency::WriteType as W;
    match t {
        W::Simple => protocol::WriteType::Simple,
        W::Batch => protocol::WriteType::Batch,
        W::UnloggedBatch => protocol::WriteType::UnloggedBatch,
        W::Cas => protocol::WriteType::Cas,
        W::Counter => protocol::WriteType::Counter,
    }
}

/// The cluster's level for the protocol's (the same codes).
fn consistency(c: protocol::Consistency) -> Consistency {
    Consistency::from_code(c.code()).unwrap_or_default()
}

/// The protocol's level for the cluster's.
fn protocol_consistency(c: Consistency) -> protocol::Consistency {
    protocol::Consistency::from_code(c.code()).unwrap_or(protocol::Consistency::One)
}

/// A request's levels; SERIAL when it names no serial level.
fn levels(cl: protocol::Consistency, serial: Option<protocol::Consistency>) -> Levels {
    Levels {
        consistency: consistency(cl),
        serial: serial.map_or(Consistency::Serial, consistency),
    }
}

fn bound(v: Value) -> BoundValue {
    match v {
        Value::Null => BoundValue::Null,
        Value::Unset => BoundValue::Unset,
        Value::Bytes(b) => BoundValue::Value(b),
    }
}

pub(crate) fn schema_change(c: &SchemaChange) -> protocol::SchemaChange {
    protocol::SchemaChange {
        change: match c.change {
            ChangeKind::Created => SchemaChangeType::Created,
            ChangeKind::Updated => SchemaChangeType::Updated,
            ChangeKind::Dropped => SchemaChangeType::Dropped,
        },
        target: match &c.table {
            Some(t) if c.is_type => SchemaChangeTarget::Type {
                keyspace: c.keyspace.clone(),
                name: t.clone(),
            },
            Some(t) => SchemaChangeTarget::Table {
                keyspace: c.keyspace.clone(),
                table: t.clone(),
            },
            None => SchemaChangeTarget::Keyspace {
                keyspace: c.keyspace.clone(),
            },
        },
    }
}

fn rows(rs: ResultSet, skip_metadata: bool) -> Result<ResultBody, CqlError> {
    let mut b = RowsBuilder::new(rs.columns.len());
    for row in &rs.rows {
        b.push_row(row.iter().map(|c| c.as_deref()));
    }
    let mut r = if skip_metadata {
        b.finish_without_metadata()?
    } else {
        b.finish(Arc::new(metadata(&rs.columns)))?
    };
    r.paging_state = rs.paging_state;
    Ok(ResultBody::Rows(r))
}

impl CqlHandler {
    fn outcome(&self, out: Outcome, skip_metadata: bool) -> Result<Reply, CqlError> {
        let (out, warnings) = out.into_parts();
        let response = Response::Result(match out {
            Outcome::Void => ResultBody::Void,
            Outcome::Rows(rs) => rows(rs, skip_metadata)?,
            Outcome::SetKeyspace(ks) => ResultBody::SetKeyspace(ks),
            Outcome::SchemaChange(c) => {
                let sc = schema_change(&c);
                self.events
                    .publish(protocol::Event::SchemaChange(sc.clone()));
                ResultBody::SchemaChange(sc)
            }
            // `into_parts` took the warnings off.
            Outcome::Warned(..) => ResultBody::Void,
        });
        Ok(Reply {
            response,
            warnings,
            tracing_id: None,
        })
    }

    /// Runs one request; `wait` says whether it may wait (see the module doc), `acks` where a
    /// write may leave its wait for other replicas (QUERY, EXECUTE and BATCH).
    fn run(
        &self,
        request: Request,
        session: &Session,
        wait: Wait,
        acks: Option<&Arc<Acks>>,
        call: &Call,
    ) -> Result<Reply, Failed> {
        let ex = &self.executor;
        match request {
            Request::Query(q) => {
                let skip = q.params.skip_metadata;
                let out = ex.query(session, &q.query, &params(q.params, acks, call), wait);
                self.check_slow_unless_blocked(call, &out, || q.query.clone());
                Ok(self.outcome(out?, skip)?)
            }
            Request::Prepare(p) => {
                if let Some(t) = &call.trace {
                    t.trace().event(format!("Preparing {}", p.query));
                }
                let prepared = ex.prepare(session, &p.query)?;
                let bind = metadata(&prepared.bind_specs);
                Ok(Response::Result(ResultBody::Prepared(protocol::Prepared {
                    id: Bytes::copy_from_slice(&prepared.id),
                    metadata: PreparedMetadata {
                        global_table_spec: bind.global_table_spec,
                        pk_indexes: prepared.pk_indexes.clone(),
                        columns: bind.columns,
                    },
                    result_metadata: Arc::new(metadata(&prepared.result)),
                }))
                .into())
            }
            Request::Execute(e) => {
                let skip = e.params.skip_metadata;
                let out = ex.execute(session, &e.id, &params(e.params, acks, call), wait);
                self.check_slow_unless_blocked(call, &out, || {
                    ex.prepared(&e.id).map_or_else(
                        |_| "EXECUTE of an unknown statement".into(),
                        |p| p.text.clone(),
                    )
                });
                Ok(self.outcome(out?, skip)?)
            }
            Request::Batch(b) => {
                let items: Vec<(BatchItem, QueryParams)> = b
                    .statements
                    .into_iter()
                    .map(|s| {
                        let item = match s.query {
                            BatchQuery::Query(q) => BatchItem::Query(q),
                            BatchQuery::Prepared(id) => BatchItem::Prepared(id.to_vec()),
                        };
                        (
                            item,
                            QueryParams {
                                values: s.values.into_iter().map(bound).collect(),
                                names: s.names,
                                ..QueryParams::default()
                            },
                        )
                    })
                    .collect();
                let kind = match b.batch_type {
                    protocol::BatchType::Logged => cairn_cql::ast::BatchKind::Logged,
                    protocol::BatchType::Unlogged => cairn_cql::ast::BatchKind::Unlogged,
                    protocol::BatchType::Counter => cairn_cql::ast::BatchKind::Counter,
                };
                let trace = call.trace.as_ref().map(TraceSession::trace);
                let options = BatchOptions {
                    timestamp: b.default_timestamp,
                    levels: levels(b.consistency, b.serial_consistency),
                    acks: acks.map(|a| &**a),
                    trace: trace.as_ref(),
                };
                let out = ex.batch(session, kind, &items, options, wait);
                self.check_slow_unless_blocked(call, &out, || {
                    format!("BATCH of {} statements", items.len())
                });
                Ok(self.outcome(out?, false)?)
            }
            Request::AuthResponse(token) => {
                ex.authenticate(session, token.as_deref().unwrap_or(&[]))?;
                Ok(Response::AuthSuccess(None).into())
            }
            _ => Err(CqlError::protocol("unexpected request").into()),
        }
    }
}

/// Why a request produced no response.
enum Failed {
    /// An error for the client.
    Error(CqlError),
    /// Run with `Wait::Never`, it would have waited; nothing changed.
    WouldBlock,
}

impl From<cairn_cql::Error> for Failed {
    fn from(e: cairn_cql::Error) -> Self {
        match e {
            cairn_cql::Error::WouldBlock => Failed::WouldBlock,
            e => Failed::Error(cql_error(e)),
        }
    }
}

impl From<CqlError> for Failed {
    fn from(e: CqlError) -> Self {
        Failed::Error(e)
    }
}

impl Handler for Arc<CqlHandler> {
    type Session = Session;

    fn new_session(&self, _info: &protocol::ConnectionInfo) -> Session {
        Session::default()
    }

    fn authenticator(&self) -> Option<String> {
        self.executor.authenticator().map(str::to_string)
    }

    fn handle_inline(&self, request: Request, ctx: RequestContext<Session>) -> Option<Reply> {
        if matches!(request, Request::AuthResponse(_)) {
            return None; // password hashing is slow by design
        }
        // An audited request runs here only if the audit log's queue has room for its
        // records now; else it goes to its own task, which waits for room.
        let audit = match self.audit_begin(&request, &ctx) {
            Some((auditor, pending)) => Some(auditor.try_reserve(pending.0).ok()?),
            None => None,
        };
        let call = self.call(&request, &ctx);
        let mut reply = match self.run(request, &ctx.session, Wait::Never, None, &call) {
            Ok(reply) => reply,
            Err(Failed::Error(e)) => e.into(),
            Err(Failed::WouldBlock) => {
                self.hand_over(&ctx, call);
                return None;
            }
        };
        self.end_call(&call, ctx.tracing, &mut reply);
        self.audit_finish(audit, &reply);
        Some(reply)
    }

    fn starts_inline(&self) -> bool {
        self.executor.proxy().coordinates()
    }

    fn start_inline(&self, request: Request, ctx: RequestContext<Session>) -> Inline {
        if !matches!(
            request,
            Request::Query(_) | Request::Execute(_) | Request::Batch(_)
        ) {
            return match self.handle_inline(request, ctx) {
                Some(reply) => Inline::Done(reply),
                None => Inline::Declined,
            };
        }
        let audit = match self.audit_begin(&request, &ctx) {
            Some((auditor, pending)) => match auditor.try_reserve(pending.0) {
                Ok(r) => Some(r),
                Err(_) => return Inline::Declined,
            },
            None => None,
        };
        let call = self.call(&request, &ctx);
        // Run with the request's `Acks`: a write applies this node's share and sends the
        // others theirs, a read that waits only for other replicas is sent; what is left is
        // their answers, awaited on the statement's task — the statement is not run again
        // from the start there, as a declined one would be.
        let acks = Arc::new(Acks::default());
        let first = self.run(
            request.clone(),
            &ctx.session,
            Wait::Never,
            Some(&acks),
            &call,
        );
        if acks.is_empty() {
            let mut reply = match first {
                Ok(reply) => reply,
                Err(Failed::Error(e)) => e.into(),
                Err(Failed::WouldBlock) => {
                    self.hand_over(&ctx, call);
                    return Inline::Declined;
                }
            };
            self.end_call(&call, ctx.tracing, &mut reply);
            self.audit_finish(audit, &reply);
            return Inline::Done(reply);
        }
        let me = Arc::clone(self);
        let asked = ctx.tracing;
        let session = Arc::clone(&ctx.session);
        Inline::Started(Box::pin(async move {
            let call = Arc::new(call);
            let mut reply = Arc::clone(&me)
                .resume(request, session, Arc::clone(&call), acks, first)
                .await;
            me.end_call(&call, asked, &mut reply);
            me.audit_finish(audit, &reply);
            reply
        }))
    }

    fn handle(
        &self,
        request: Request,
        ctx: RequestContext<Session>,
    ) -> impl std::future::Future<Output = Reply> + Send {
        let me = Arc::clone(self);
        let audit = self.audit_begin(&request, &ctx).map(|(_, p)| p);
        let call = Arc::new(self.resumed_call(&request, &ctx));
        let asked = ctx.tracing;
        async move {
            // Room for the records first (backpressure: an audit log that cannot keep up
            // slows requests down rather than drop records), awaited without a thread.
            let reserved = match (me.audit.as_deref(), audit) {
                (Some(auditor), Some(p)) => Some(auditor.reserve(p.0).await),
                _ => None,
            };
            let mut reply = Arc::clone(&me)
                .respond(request, ctx, Arc::clone(&call))
                .await;
            me.end_call(&call, asked, &mut reply);
            me.audit_finish(reserved, &reply);
            reply
        }
    }
}

impl CqlHandler {
    /// [`Handler::handle`]'s answer: the request run where it may wait (see the module doc).
    fn respond(
        self: Arc<Self>,
        request: Request,
        ctx: RequestContext<Session>,
        call: Arc<Call>,
    ) -> impl std::future::Future<Output = Reply> + Send {
        let me = self;
        async move {
            let session = Arc::clone(&ctx.session);
            // A write that waits only for other replicas waits here, on this task: started
            // under `Wait::Never`, its acknowledgements awaited. Anything else that would
            // wait runs again on the blocking pool.
            let acks = Arc::new(Acks::default());
            // A node alone never waits for other nodes: what reached here waits for its own
            // disk or locks, and goes to the blocking pool without being planned once more.
            let deferrable = me.executor.proxy().coordinates()
                && matches!(
                    request,
                    Request::Query(_) | Request::Execute(_) | Request::Batch(_)
                );
            let first = if deferrable {
                me.run(request.clone(), &session, Wait::Never, Some(&acks), &call)
            } else {
                Err(Failed::WouldBlock)
            };
            me.resume(request, session, call, acks, first).await
        }
    }

    /// The rest of a request whose run under `Wait::Never` with `acks` ended with `first`:
    /// the reads it left waiting in `acks` awaited (and the request run again with their
    /// answers), then the write's acknowledgements; what still would wait runs on the
    /// blocking pool.
    async fn resume(
        self: Arc<Self>,
        request: Request,
        session: Arc<Session>,
        call: Arc<Call>,
        acks: Arc<Acks>,
        mut first: Result<Reply, Failed>,
    ) -> Reply {
        let me = self;
        // A read that waits only for other replicas was started and left in `acks`: its
        // answer is awaited here and the request runs again, finding it (a statement
        // reading several partitions goes around once per partition, within bounds).
        for _ in 0..DEFERRED_READS {
            let Some(read) = acks.take_read() else {
                break;
            };
            match read.await {
                Ok(Deferred::Answer(answer)) => {
                    acks.prefetched(answer);
                    first = me.run(request.clone(), &session, Wait::Never, Some(&acks), &call);
                }
                Ok(Deferred::Fallback) => break,
                Err(e) => return cql_error(cairn_cql::Error::from(e)).into(),
            }
        }
        match first {
            Ok(reply) => {
                return match acks.take() {
                    None => reply,
                    Some(ack) => match ack.await {
                        Ok(()) => reply,
                        Err(e) => cql_error(cairn_cql::Error::from(e)).into(),
                    },
                }
            }
            Err(Failed::Error(e)) => return e.into(),
            Err(Failed::WouldBlock) => {}
        }
        let r = tokio::task::spawn_blocking(move || {
            me.run(request, &session, Wait::Allowed, None, &call)
        })
        .await;
        match r {
            Ok(Ok(reply)) => reply,
            Ok(Err(Failed::Error(e))) => e.into(),
            // Only `Wait::Never` refuses to wait, and this thread may block.
            Ok(Err(Failed::WouldBlock)) => CqlError::server("request refused to wait").into(),
            Err(e) => CqlError::server(format!("request failed: {e}")).into(),
        }
    }
}
