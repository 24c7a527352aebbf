//! The coordinator's write: mutations sent to every replica that is up, acknowledged at the
//! request's consistency level.
//!
//! Each mutation has its replicas (placed by its keyspace's strategy) and is acknowledged
//! when enough of them applied it for the level — counted exactly as availability counts
//! replicas up ([`super::availability::check`] over the replicas that answered; ANY waits
//! for one). Every target gets all of the request's mutations it is a replica of in one
//! message, applied there in one commitlog record. [`start`] applies the local replica's
//! share on the calling thread first — waiting as the caller's mode allows: under
//! `Wait::Never` a write that would wait is refused before anything is sent — then sends the
//! others theirs and returns the wait for the level as a future: at most the write timeout,
//! then the protocol's WriteTimeout with the acknowledgements received, or WriteFailure as
//! soon as failures leave too few replicas to reach the level. Replicas that have not
//! answered keep receiving the write after the caller has its answer, as in Cassandra.
//!
//! The requests are handed to the replicas' connections before [`start`] returns
//! (`Messaging::try_send`), and their answers are awaited by the returned future itself; a
//! request that cannot be handed over at once (its connection is being opened, a test's link
//! filter) is sent from a task of its own, so that it leaves even if no one awaits the future.
//!
//! The future is awaited where the caller can: on the request's own task (the server's
//! async path — no thread hand-off), or blocked on from the server's blocking pool.
//!
//! A Paxos round's commit is the same write with another message ([`start_commit`]): every
//! replica applies the chosen update and records it in its Paxos state (`PAXOS_COMMIT`),
//! counted at the request's commit level.

use super::availability::{self, Replica};
use super::paxos::state::{PaxosState, Proposal};
use super::paxos::wire;
use super::RemoteReplicas;
use crate::consistency::{Consistency, WriteFailure, WriteTimeout, WriteType};
use crate::error::{Error, Result};
use crate::messaging::{self, Verb};
use crate::placement::ReplicationStrategy;
use crate::ring::TokenRing;
use crate::topology::Topology;
use bytes::Bytes;
use cairn_engine::model::mutation::encode_batch;
use cairn_engine::model::{DecoratedKey, Mutation};
use cairn_engine::Wait;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use tokio::sync::mpsc;

/// One mutation's part in a write: its replicas (indexes into the ring's endpoints) and how
/// they are counted.
pub(super) struct Planned {
    /// The mutation's keyspace's strategy.
    pub strategy: Arc<ReplicationStrategy>,
    /// Its replicas that are up (the targets), as ring endpoint indexes.
    pub targets: Vec<usize>,
}

/// How this node applies its share of a write (`StorageProxy::apply_local`: with the view
/// updates of tables that have views).
pub(crate) type LocalApply<'a> =
    dyn Fn(Vec<Mutation>, Wait, Option<&cairn_engine::Trace>) -> cairn_engine::Result<()> + 'a;

/// A replica's answer: its endpoint index, and the error text of a refusal.
type Answer = (usize, std::result::Result<(), String>);

/// Applies this node's share of `mutations` (each planned in `plans`, same order) as `wait`
/// allows, sends the other targets theirs, and returns the wait for `cl` (see the module doc).
#[allow(clippy::too_many_arguments)] // one write's whole description, all used together
pub(super) fn start(
    apply: &LocalApply<'_>,
    topology: Arc<Topology>,
    mutations: Vec<Mutation>,
    plans: Vec<Planned>,
    cl: Consistency,
    write_type: WriteType,
    remote: &RemoteReplicas,
    wait: Wait,
    trace: Option<&cairn_engine::Trace>,
) -> Result<impl Future<Output = Result<()>> + Send + 'static> {
    let ring = topology.ring();
    let endpoints = ring.endpoints();
    let local = ring.position(topology.local_id());
    // Each target's share of the mutations.
    let mut shares: Vec<Vec<Mutation>> = vec![Vec::new(); endpoints.len()];
    for (m, plan) in mutations.iter().zip(&plans) {
        for &t in &plan.targets {
            if let Some(share) = shares.get_mut(t) {
                share.push(m.clone());
            }
        }
    }
    let mut acked = vec![false; endpoints.len()];
    if let Some(l) = local {
        if let Some(share) = shares.get_mut(l).filter(|s| !s.is_empty()) {
            apply(std::mem::take(share), wait, trace)?;
            acked[l] = true;
        }
    }
    let mut sends = Vec::new();
    for (t, share) in shares.iter_mut().enumerate() {
        if share.is_empty() || Some(t) == local {
            continue;
        }
        let mut body = Vec::new();
        encode_batch(share, &mut body);
        sends.push((t, Bytes::from(body)));
    }
    Ok(send_and_count(
        topology,
        plans,
        cl,
        write_type,
        remote,
        acked,
        Verb::Mutation,
        sends,
        trace,
    ))
}

/// A Paxos round's commit: the proposal, and this node's Paxos state to record it in.
pub(super) struct PaxosCommit<'a> {
    /// This node's state.
    pub state: &'a PaxosState,
    /// The round's table.
    pub table: u128,
    /// The round's partition.
    pub key: &'a DecoratedKey,
    /// What was chosen.
    pub proposal: &'a Proposal,
}

/// [`start`] for a Paxos commit (`plans` holds the partition's one plan): every target
/// applies the proposal and records it as committed (`PAXOS_COMMIT`); this node's share on
/// the calling thread, which may wait.
#[allow(clippy::too_many_arguments)] // one commit's whole description, all used together
pub(super) fn start_commit(
    topology: &Arc<Topology>,
    commit: PaxosCommit<'_>,
    plans: Vec<Planned>,
    cl: Consistency,
    write_type: WriteType,
    remote: &RemoteReplicas,
    apply: &LocalApply<'_>,
    trace: Option<&cairn_engine::Trace>,
) -> Result<impl Future<Output = Result<()>> + Send + 'static> {
    let ring = topology.ring();
    let local = ring.position(topology.local_id());
    let mut acked = vec![false; ring.endpoints().len()];
    let (ballot, update) = (commit.proposal.ballot, &commit.proposal.update);
    let body = wire::encode_request(commit.table, commit.key, ballot, Some(update));
    let mut sends = Vec::new();
    for &t in plans.iter().flat_map(|p| &p.targets) {
        if Some(t) == local {
            commit.state.commit(
                commit.table,
                commit.key,
                commit.proposal,
                Wait::Allowed,
                apply,
            )?;
            if let Some(a) = acked.get_mut(t) {
                *a = true;
            }
        } else {
            sends.push((t, body.clone()));
        }
    }
    let topology = Arc::clone(topology);
    Ok(send_and_count(
        topology,
        plans,
        cl,
        write_type,
        remote,
        acked,
        Verb::PaxosCommit,
        sends,
        trace,
    ))
}

/// Sends each `(target, body)` as `verb` and returns the wait for `cl` over `plans`, the
/// targets in `acked` counted as acknowledged already. A traced request's `trace` hears of
/// each message, which carries its session.
#[allow(clippy::too_many_arguments)] // one write's whole description, all used together
fn send_and_count(
    topology: Arc<Topology>,
    plans: Vec<Planned>,
    cl: Consistency,
    write_type: WriteType,
    remote: &RemoteReplicas,
    mut acked: Vec<bool>,
    verb: Verb,
    sends: Vec<(usize, Bytes)>,
    trace: Option<&cairn_engine::Trace>,
) -> impl Future<Output = Result<()>> + Send + 'static {
    let (tx, rx) = mpsc::unbounded_channel::<Answer>();
    let mut outstanding = 0usize;
    // Requests handed to their connection at once, awaited by the caller's future itself;
    // the others (no connection yet, a link filter in tests) go through a task of their own.
    let mut direct: Vec<(usize, messaging::Answer)> = Vec::new();
    for (t, body) in sends {
        let Some(peer) = topology.ring().endpoints().get(t).map(|e| e.address) else {
            continue;
        };
        outstanding += 1;
        let body = match remote
            .messaging
            .try_send_traced(peer, verb, body, trace.cloned())
        {
            Ok(answer) => {
                direct.push((t, answer));
                continue;
            }
            Err(body) => body,
        };
        let (tx, messaging, timeout) = (
            tx.clone(),
            Arc::clone(&remote.messaging),
            remote.write_timeout,
        );
        let trace = trace.cloned();
        remote.runtime.spawn(async move {
            let asked = messaging.request_traced(peer, verb, body, timeout, trace);
            if let Some(a) = answer_of(t, asked.await) {
                let _ = tx.send(a);
            }
        });
    }
    drop(tx);
    let deadline = tokio::time::Instant::now() + remote.write_timeout;
    async move {
        let ring = topology.ring();
        let local_dc = topology
            .local()
            .map_or("", |m| m.endpoint.datacenter.as_str());
        let mut rx = rx;
        let mut direct = direct;
        let mut failures: Vec<(IpAddr, String)> = Vec::new();
        loop {
            let tally = Tally::of(ring, local_dc, &plans, cl, &acked, &failures);
            let Some((received, block_for)) = tally.unmet else {
                return Ok(());
            };
            if tally.hopeless || outstanding == 0 {
                return Err(Error::WriteFailure(WriteFailure {
                    consistency: cl,
                    received,
                    block_for,
                    failures,
                    write_type,
                }));
            }
            // The next answer, direct or from a task; `None` when none will come (a
            // request lost, unreachable or the tasks' channel closed): as the deadline.
            let next = std::future::poll_fn(|cx| {
                let mut n = 0;
                while let Some((t, answer)) = direct.get_mut(n) {
                    let Poll::Ready(r) = Pin::new(answer).poll(cx) else {
                        n += 1;
                        continue;
                    };
                    let t = *t;
                    direct.swap_remove(n);
                    if let Some(a) = answer_of(t, r) {
                        return Poll::Ready(Ok(a));
                    }
                    // No answer from that one (its connection broke): wait for the others.
                }
                match rx.poll_recv(cx) {
                    Poll::Ready(Some(a)) => Poll::Ready(Ok(a)),
                    // The tasks are done: only direct answers may still come.
                    Poll::Ready(None) if !direct.is_empty() => Poll::Pending,
                    Poll::Ready(None) => Poll::Ready(Err(())),
                    Poll::Pending => Poll::Pending,
                }
            });
            match tokio::time::timeout_at(deadline, next).await {
                Ok(Ok((t, Ok(())))) => {
                    outstanding -= 1;
                    if let Some(a) = acked.get_mut(t) {
                        *a = true;
                    }
                }
                Ok(Ok((t, Err(why)))) => {
                    outstanding -= 1;
                    if let Some(e) = ring.endpoints().get(t) {
                        failures.push((e.address, why));
                    }
                }
                Ok(Err(())) | Err(_) => {
                    return Err(Error::WriteTimeout(WriteTimeout {
                        consistency: cl,
                        received,
                        block_for,
                        write_type,
                    }))
                }
            }
        }
    }
}

/// A request's outcome as a replica's answer: `None` when it brought none (lost,
/// unreachable, too slow — a timeout, not a failure).
fn answer_of(t: usize, outcome: Result<Bytes>) -> Option<Answer> {
    match outcome {
        Ok(_) => Some((t, Ok(()))),
        // The replica answered with an error: a failure.
        Err(Error::Remote { message, .. }) => Some((t, Err(message))),
        Err(_) => None,
    }
}

/// Where a write stands.
struct Tally {
    /// The first mutation short of its level: (acknowledgements that count, block-for).
    unmet: Option<(usize, usize)>,
    /// Whether some mutation can no longer reach its level (too many replicas failed).
    hopeless: bool,
}

impl Tally {
    fn of(
        ring: &TokenRing,
        local_dc: &str,
        plans: &[Planned],
        cl: Consistency,
        acked: &[bool],
        failures: &[(IpAddr, String)],
    ) -> Tally {
        // A write at ANY still waits for one replica (no hints yet).
        let counted = if cl == Consistency::Any {
            Consistency::One
        } else {
            cl
        };
        let endpoints = ring.endpoints();
        let failed = |i: usize| {
            endpoints
                .get(i)
                .is_some_and(|e| failures.iter().any(|(a, _)| *a == e.address))
        };
        let mut out = Tally {
            unmet: None,
            hopeless: false,
        };
        for plan in plans {
            let view = |up: &dyn Fn(usize) -> bool| -> Vec<Replica<'_>> {
                plan.targets
                    .iter()
                    .filter_map(|&i| {
                        endpoints.get(i).map(|e| Replica {
                            datacenter: e.datacenter.as_str(),
                            up: up(i),
                        })
                    })
                    .collect()
            };
            let acks = view(&|i| acked.get(i).copied().unwrap_or(false));
            if let Err(short) = availability::check(counted, &plan.strategy, local_dc, &acks) {
                out.unmet.get_or_insert((short.alive, short.required));
                // Could the replicas that have not failed still make it?
                let possible = view(&|i| !failed(i));
                if availability::check(counted, &plan.strategy, local_dc, &possible).is_err() {
                    out.hopeless = true;
                }
            }
        }
        out
    }
}
