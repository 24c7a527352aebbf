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
//! Schema changes are also published as SCHEMA_CHANGE events to registered connections.

use crate::audit::Pending;
use crate::protocol::{
    self, BatchQuery, ColumnType, CqlError, ErrorKind, EventBus, Handler, PreparedMetadata, Reply,
    Request, RequestContext, Response, ResultBody, ResultMetadata, RowsBuilder, SchemaChangeTarget,
    SchemaChangeType, TableSpec, Value,
};
use bytes::Bytes;
use cairn_cluster::consistency::Consistency;
use cairn_cluster::proxy::{Acks, Deferred};
use cairn_cql::audit::Auditor;
use cairn_cql::exec::{
    BatchItem, BatchOptions, BoundValue, ChangeKind, ColumnSpec, Executor, Levels, Outcome,
    QueryParams, ResultSet, SchemaChange, Session,
};
use cairn_engine::model::types::CqlType;
use cairn_engine::Wait;
use std::sync::Arc;

/// How many times a request may go around for a read answered on its task before it runs
/// where it may block.
const DEFERRED_READS: usize = 16;

/// Serves CQL statements from an [`Executor`].
pub struct CqlHandler {
    executor: Arc<Executor>,
    events: EventBus,
    /// The node's audit log, if `audit` is on.
    audit: Option<Arc<Auditor>>,
}

impl CqlHandler {
    /// A handler publishing schema changes on `events`.
    pub fn new(executor: Arc<Executor>, events: EventBus) -> Self {
        CqlHandler {
            executor,
            events,
            audit: None,
        }
    }

    /// Records statements and logins in `audit` (see `crate::audit`).
    pub fn with_audit(mut self, audit: Option<Arc<Auditor>>) -> Self {
        self.audit = audit;
        self
    }

    /// The audit records `request` will make, if it is audited.
    fn audit_begin(&self, request: &Request, ctx: &RequestContext<Session>) -> Option<Pending> {
        let auditor = self.audit.as_deref()?;
        crate::audit::begin(auditor, &self.executor, request, ctx)
    }

    /// Stores a request's audit records with its answer.
    fn audit_finish(&self, pending: Option<Pending>, reply: &Reply) {
        if let (Some(auditor), Some(p)) = (self.audit.as_deref(), pending) {
            crate::audit::finish(auditor, p, reply);
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

fn params(p: protocol::QueryParams, acks: Option<&Arc<Acks>>) -> QueryParams {
    QueryParams {
        acks: acks.cloned(),
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
    ) -> Result<Reply, Failed> {
        let ex = &self.executor;
        match request {
            Request::Query(q) => {
                let skip = q.params.skip_metadata;
                let out = ex.query(session, &q.query, &params(q.params, acks), wait)?;
                Ok(self.outcome(out, skip)?)
            }
            Request::Prepare(p) => {
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
                let out = ex.execute(session, &e.id, &params(e.params, acks), wait)?;
                Ok(self.outcome(out, skip)?)
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
                let options = BatchOptions {
                    timestamp: b.default_timestamp,
                    levels: levels(b.consistency, b.serial_consistency),
                    acks: acks.map(|a| &**a),
                };
                let out = ex.batch(session, kind, &items, options, wait)?;
                Ok(self.outcome(out, false)?)
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
        let audit = self.audit_begin(&request, &ctx);
        let reply = match self.run(request, &ctx.session, Wait::Never, None) {
            Ok(reply) => reply,
            Err(Failed::Error(e)) => e.into(),
            Err(Failed::WouldBlock) => return None,
        };
        self.audit_finish(audit, &reply);
        Some(reply)
    }

    fn handle(
        &self,
        request: Request,
        ctx: RequestContext<Session>,
    ) -> impl std::future::Future<Output = Reply> + Send {
        let me = Arc::clone(self);
        let audit = self.audit_begin(&request, &ctx);
        async move {
            let reply = Arc::clone(&me).respond(request, ctx).await;
            me.audit_finish(audit, &reply);
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
            let mut first = if deferrable {
                me.run(request.clone(), &session, Wait::Never, Some(&acks))
            } else {
                Err(Failed::WouldBlock)
            };
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
                        first = me.run(request.clone(), &session, Wait::Never, Some(&acks));
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
            let r =
                tokio::task::spawn_blocking(move || me.run(request, &session, Wait::Allowed, None))
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
}
