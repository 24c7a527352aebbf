//! The replica side of the proxy: what a node does with the requests coordinators send it.
//!
//! `MUTATION`: a batch of mutations (the commitlog's encoding, `model::mutation`) applied
//! together with one `Database::apply` — one commitlog record, as on the coordinator — and
//! acknowledged with an empty answer once applied (durable as the node's `commitlog_sync`
//! says). A body that does not decode, or a table this node does not have, is answered with
//! the error's text; the coordinator counts it as a failed replica. Applying is tried on the
//! messaging task with `Wait::Never` and, when it would wait (memtable space, a commitlog
//! sync), runs again on the blocking pool — never waiting on a reactor thread.
//!
//! `COUNTER_MUTATION`: a coordinator's counter deltas for this node to lead (read its
//! shards, write the results to every replica at the level; `counter.rs`), on the blocking
//! pool; acknowledged once the level is reached, else answered with the error's text.
//!
//! `READ_DATA` / `READ_DIGEST`: the partition a read request names, as data (tombstones
//! included, `Table::read_data`) or as its digest (see `read.rs`), read the same way (here
//! unless the disk must be waited for). `RANGE_DATA`: up to a page of a token range's partitions as data, and whether
//! more remain (see `scan.rs`).
//!
//! `PAXOS_PREPARE` / `PAXOS_PROPOSE` / `PAXOS_COMMIT`: a phase of a coordinator's Paxos
//! round on this node's state (`paxos/state.rs`, wire format in `paxos/wire.rs`): each reads
//! and writes the partition's state, and a commit applies the update — here unless that
//! would wait, else on the blocking pool.
//!
//! Tracing: a request of a traced client request carries the coordinator's session id
//! (`messaging`); this node then records its own events under that session, as Cassandra's
//! replicas do — "`VERB` message received from /coordinator", what the engine did (the
//! commitlog and memtables of a write, each source of a read), "Enqueuing response to
//! /coordinator" — with its own address as their `source` and their elapsed time counted from
//! the message's arrival. The events are stored by the node's [`ReplicaTracing`] (the `cql`
//! crate's trace writer) once the request is done. Anything this node sends for the request
//! (a counter leader's writes, a Paxos commit's view updates) carries the session on.

use super::paxos::wire;
use super::read::{decode_request, digest, encode_data};
use super::scan;
use super::StorageProxy;
use crate::messaging::{Messaging, SessionId, Verb};
use bytes::Bytes;
use cairn_engine::model::mutation::decode_batch;
use cairn_engine::{Trace, Wait};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How a node records its own events of coordinators' traced requests (the `cql` crate's
/// tracing implements it, with its trace writer).
pub trait ReplicaTracing: Send + Sync {
    /// A trace for this node's part of the coordinator's session `session`: its events
    /// are stored under that session with this node as their source, their elapsed time
    /// counted from now, once the trace's last clone is dropped.
    fn replica_trace(&self, session: SessionId) -> Trace;
}

/// A traced request's trace on this node, its arrival recorded; `None` for an untraced one
/// (or a node that does not trace).
fn received(
    proxy: &StorageProxy,
    verb: Verb,
    from: IpAddr,
    session: Option<SessionId>,
) -> Option<Trace> {
    let trace = proxy.replica_trace(session?)?;
    // Replicas serve only with messaging (`serve`), so `remote` is always there.
    if let Some(remote) = &proxy.remote {
        trace.event(remote.messaging.received_event(verb, from));
    }
    Some(trace)
}

/// Records the answer to `verb` leaving for the coordinator `from`, on a traced request, as
/// Cassandra 5.0 records it: "Enqueuing response to /10.0.0.1:7000", then "Sending
/// MUTATION_RSP message to /10.0.0.1:7000 message size 39 bytes" (`answer` is its body).
fn respond(proxy: &StorageProxy, trace: Option<&Trace>, verb: Verb, from: IpAddr, answer: &Bytes) {
    let (Some(trace), Some(remote)) = (trace, &proxy.remote) else {
        return;
    };
    let port = remote.messaging.peer_port();
    trace.event(format!(
        "Enqueuing response to /{}",
        SocketAddr::new(from, port)
    ));
    trace.event(
        remote
            .messaging
            .response_sending_event(verb, from, answer.len()),
    );
}

/// Registers the replica's verbs on `messaging`, applying to `proxy`'s database.
pub fn serve(proxy: &Arc<StorageProxy>, messaging: &Messaging) {
    let applier = Arc::clone(proxy);
    messaging.register_traced(
        Verb::Mutation,
        Arc::new(move |from, body: Bytes, session| {
            let proxy = Arc::clone(&applier);
            Box::pin(async move {
                let trace = received(&proxy, Verb::Mutation, from, session);
                let decode = |body: &Bytes| {
                    decode_batch(body)
                        .map_err(|e| format!("undecodable mutation from {from}: {e:?}"))
                };
                let mutations = decode(&body)?;
                let count = mutations.len() as u64;
                // Applied here when nothing must wait (the common case: memtable space and
                // a periodic commitlog), else again on the blocking pool — the handoff costs
                // more CPU than the write. A base table's views are kept as this node
                // applies (`views.rs`).
                match proxy.apply_local(mutations, Wait::Never, trace.as_ref()) {
                    Err(cairn_engine::Error::WouldBlock) => {
                        let mutations = decode(&body)?;
                        let (p, t) = (Arc::clone(&proxy), trace.clone());
                        tokio::task::spawn_blocking(move || {
                            p.apply_local(mutations, Wait::Allowed, t.as_ref())
                        })
                        .await
                        .map_err(|e| format!("mutation task failed: {e}"))?
                        .map_err(|e| e.to_string())?;
                    }
                    other => other.map_err(|e| e.to_string())?,
                }
                proxy
                    .metrics()
                    .replica_received_mutations
                    .fetch_add(count, Ordering::Relaxed);
                let answer = Bytes::new();
                respond(&proxy, trace.as_ref(), Verb::Mutation, from, &answer);
                Ok(answer)
            })
        }),
    );
    let leader = Arc::clone(proxy);
    messaging.register_traced(
        Verb::CounterMutation,
        Arc::new(move |from, body: Bytes, session| {
            let trace = received(&leader, Verb::CounterMutation, from, session);
            let proxy = Arc::clone(&leader);
            Box::pin(async move {
                let answer =
                    super::counter::serve_leader(Arc::clone(&proxy), from, body, trace.clone())
                        .await?;
                respond(&proxy, trace.as_ref(), Verb::CounterMutation, from, &answer);
                Ok(answer)
            })
        }),
    );
    for verb in [Verb::ReadData, Verb::ReadDigest] {
        let reader = Arc::clone(proxy);
        messaging.register_traced(
            verb,
            Arc::new(move |from, body: Bytes, session| {
                let proxy = Arc::clone(&reader);
                Box::pin(async move {
                    let trace = received(&proxy, verb, from, session);
                    let (id, key, mut cmd) = decode_request(&body)?;
                    cmd.trace = trace.clone();
                    let table = proxy
                        .db()
                        .table_by_id(id)
                        .ok_or_else(|| format!("unknown table id {id:032x}"))?;
                    // Read here when nothing must wait for the disk (memtables, cached
                    // chunks), else again on the blocking pool.
                    let here = cairn_engine::ReadCommand {
                        wait: Wait::Never,
                        ..cmd.clone()
                    };
                    let data = match table.read_data(&key, &here) {
                        Err(cairn_engine::Error::WouldBlock) => {
                            let read_key = key.clone();
                            tokio::task::spawn_blocking(move || table.read_data(&read_key, &cmd))
                                .await
                                .map_err(|e| format!("read task failed: {e}"))?
                        }
                        other => other,
                    }
                    .map_err(|e| e.to_string())?;
                    let answer = match verb {
                        Verb::ReadDigest => {
                            Bytes::copy_from_slice(&digest(id, &key, data.as_ref()))
                        }
                        _ => encode_data(id, &key, data),
                    };
                    respond(&proxy, trace.as_ref(), verb, from, &answer);
                    Ok(answer)
                })
            }),
        );
    }
    let reader = Arc::clone(proxy);
    messaging.register_traced(
        Verb::RangeData,
        Arc::new(move |coordinator, body: Bytes, session| {
            let proxy = Arc::clone(&reader);
            Box::pin(async move {
                let trace = received(&proxy, Verb::RangeData, coordinator, session);
                let (id, from, end, max, mut cmd) = scan::decode_request(&body)?;
                cmd.trace = trace.clone();
                let table = proxy
                    .db()
                    .table_by_id(id)
                    .ok_or_else(|| format!("unknown table id {id:032x}"))?;
                let (parts, more) = tokio::task::spawn_blocking(move || {
                    table.scan_data(&from, Some(end), &cmd, max)
                })
                .await
                .map_err(|e| format!("range read task failed: {e}"))?
                .map_err(|e| e.to_string())?;
                cairn_engine::trace::event(trace.as_ref(), || {
                    format!(
                        "Read {} partitions{}",
                        parts.len(),
                        if more { ", more to come" } else { "" }
                    )
                });
                let answer = scan::encode_answer(id, parts, more);
                respond(
                    &proxy,
                    trace.as_ref(),
                    Verb::RangeData,
                    coordinator,
                    &answer,
                );
                Ok(answer)
            })
        }),
    );
    for verb in [Verb::PaxosPrepare, Verb::PaxosPropose, Verb::PaxosCommit] {
        let replica = Arc::clone(proxy);
        messaging.register_traced(
            verb,
            Arc::new(move |from, body: Bytes, session| {
                let proxy = Arc::clone(&replica);
                Box::pin(async move {
                    let trace = received(&proxy, verb, from, session);
                    let request = wire::decode_request(&body, verb != Verb::PaxosPrepare)?;
                    let t = trace.clone();
                    let phase = move |proxy: &StorageProxy, wait| {
                        let trace = t.as_ref();
                        let (id, key, state) = (request.table, &request.key, &proxy.paxos);
                        match verb {
                            Verb::PaxosPrepare => state
                                .prepare(id, key, request.ballot, wait)
                                .map(|a| wire::encode_prepare_answer(&a)),
                            Verb::PaxosPropose => state
                                .propose(id, key, &request.proposal(), wait)
                                .map(|accepted| Bytes::from(vec![u8::from(accepted)])),
                            _ => state
                                .commit(id, key, &request.proposal(), wait, &|m, w, _| {
                                    proxy.apply_local(m, w, trace)
                                })
                                .map(|()| Bytes::new()),
                        }
                    };
                    // Here when nothing must wait (the state in a memtable, the lock free),
                    // else again on the blocking pool.
                    let answer = match phase(&proxy, Wait::Never) {
                        Err(crate::Error::Engine(cairn_engine::Error::WouldBlock)) => {
                            let proxy = Arc::clone(&proxy);
                            tokio::task::spawn_blocking(move || phase(&proxy, Wait::Allowed))
                        }
                        .await
                        .map_err(|e| format!("Paxos task failed: {e}"))?
                        .map_err(|e| e.to_string()),
                        other => other.map_err(|e| e.to_string()),
                    }?;
                    respond(&proxy, trace.as_ref(), verb, from, &answer);
                    Ok(answer)
                })
            }),
        );
    }
}
