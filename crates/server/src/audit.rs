//! What the CQL front door tells the audit log (`cairn_cql::audit`): the records a request
//! will make, taken before it runs ([`begin`]: the statement's text, the session's keyspace
//! and user as they were), and its outcome once its answer is known ([`finish`]). Between
//! the two the caller takes room for the records in the audit log's queue before running the
//! request (`Auditor::try_reserve` inline, `Auditor::reserve` awaited on the request's task),
//! so the answer leaves only once its records are queued.
//!
//! Only requests that run statements or log in are audited: QUERY, EXECUTE (the prepared
//! statement's text), each statement of a BATCH, and AUTH_RESPONSE (the user name tried).
//! PREPARE runs nothing; a statement that does not parse, or an EXECUTE of an unknown id,
//! names no category and is not recorded, as in ScyllaDB; DESCRIBE is not a statement of
//! the language and is not recorded either.

use crate::protocol::{BatchQuery, Reply, Request, RequestContext, Response};
use cairn_cluster::consistency::Consistency;
use cairn_cql::audit::{AuditRecord, Auditor, Reserved};
use cairn_cql::exec::{Executor, Session};

/// The records of one request, waiting for room in the queue.
pub(crate) struct Pending(pub(crate) Vec<AuditRecord>);

/// The records `request` will make (none when nothing of it is audited).
pub(crate) fn begin(
    auditor: &Auditor,
    executor: &Executor,
    request: &Request,
    ctx: &RequestContext<Session>,
) -> Option<Pending> {
    let session = &ctx.session;
    let source = ctx.connection.peer;
    let level =
        |c: crate::protocol::Consistency| Consistency::from_code(c.code()).unwrap_or_default();
    let records = match request {
        Request::Query(q) => {
            if cairn_cql::exec::describe::is_describe(&q.query) {
                return None;
            }
            let parsed = cairn_cql::parse_statement(&q.query).ok()?;
            auditor.statement(
                &parsed.statement,
                &q.query,
                session,
                source,
                level(q.params.consistency),
            )
        }
        Request::Execute(e) => {
            let p = executor.prepared(&e.id).ok()?;
            auditor.statement(
                &p.parsed.statement,
                &p.text,
                session,
                source,
                level(e.params.consistency),
            )
        }
        Request::Batch(b) => {
            let mut out = Vec::new();
            for s in &b.statements {
                let records = match &s.query {
                    BatchQuery::Query(text) => match cairn_cql::parse_statement(text) {
                        Ok(parsed) => auditor.statement(
                            &parsed.statement,
                            text,
                            session,
                            source,
                            level(b.consistency),
                        ),
                        Err(_) => continue,
                    },
                    BatchQuery::Prepared(id) => match executor.prepared(id) {
                        Ok(p) => auditor.statement(
                            &p.parsed.statement,
                            &p.text,
                            session,
                            source,
                            level(b.consistency),
                        ),
                        Err(_) => continue,
                    },
                };
                out.extend(records);
            }
            out
        }
        Request::AuthResponse(token) => {
            vec![auditor.login(token.as_deref().unwrap_or_default(), source)?]
        }
        _ => return None,
    };
    (!records.is_empty()).then_some(Pending(records))
}

/// Hands a request's records to the audit log with its outcome.
pub(crate) fn finish(auditor: &Auditor, reserved: Reserved, reply: &Reply) {
    let failed = matches!(reply.response, Response::Error(_));
    auditor.log(reserved, failed);
}
