//! Conditional writes and serial reads: a Paxos round per request across the partition's
//! replicas, Cassandra's protocol (its "Paxos v1": prepare and promise, finishing what an
//! earlier round left accepted, a read at the serial level's quorum, propose and accept,
//! commit).
//!
//! [`StorageProxy::cas`] runs one request. The caller's `decide` sees a [`CasRound`] — the
//! round's timestamp and its reads — and answers [`CasDecision::Refuse`] (a condition does
//! not hold: nothing is proposed) or [`CasDecision::Apply`] with the mutations to commit,
//! stamped with [`CasRound::timestamp`]. A round that loses to a concurrent one (its ballot
//! rejected at prepare or at propose) starts over with a higher ballot and asks `decide`
//! again — the condition is re-evaluated on what the winner committed — until
//! `cas_contention_timeout`, then WriteTimeout (write type CAS) at the serial level.
//!
//! The steps of a round, on the live replicas of the serial level (all of the partition's
//! replicas for SERIAL, the local data center's for LOCAL_SERIAL), each waiting for a quorum
//! of them ([`Consistency::block_for`] of the serial level):
//! 1. *prepare*: each replica promises to ignore lower ballots and answers what it last
//!    accepted and last saw committed ([`state`]). A proposal accepted after the most recent
//!    commit is an earlier round's that may have been chosen: it is proposed again with this
//!    ballot and committed, and the round starts over. Replicas that miss the most recent
//!    commit are sent it first, and the round starts over: the quorum read of step 2 must see
//!    every committed round.
//! 2. *read*: the caller reads through [`CasRound::read`], at QUORUM (LOCAL_QUORUM for
//!    LOCAL_SERIAL), with the coordinator's read repair.
//! 3. *propose*: the update with this ballot; a quorum must accept. Refused by all, the round
//!    starts over; accepted by some but not a quorum, the outcome is unknown — a later round
//!    may find and commit it — so the request fails with WriteTimeout (CAS) instead of
//!    starting over and perhaps applying twice (Cassandra's `CasWriteUnknownResultException`,
//!    a WriteTimeout in protocol v4).
//! 4. *commit*: sent to every live replica, applied with the state in one commitlog record,
//!    and waited for at the request's consistency level.
//!
//! One node alone (or one without other nodes to reach) runs the same request with one
//! replica: the round is its partition lock, its reads and commit are local, and no state is
//! kept — nothing else can propose. Rounds coordinated by this node on one partition take the
//! coordinator's partition lock, so they queue here instead of contending at the replicas;
//! rounds from other coordinators contend through the ballots.

pub mod ballot;
pub mod state;
pub(super) mod wire;

use super::link::Link;
use super::read::Contact;
use super::{write, Operation, StorageProxy};
use crate::consistency::{Consistency, ReadTimeout, WriteTimeout, WriteType};
use crate::error::{Error, Result};
use crate::messaging::Verb;
use ballot::Ballot;
use bytes::Bytes;
use cairn_engine::model::{DecoratedKey, Mutation};
use cairn_engine::table::Table;
use cairn_engine::{PartitionResult, ReadCommand, Trace, Wait};
use state::{PrepareAnswer, Proposal};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// What a conditional request decides once it has read the current values.
pub enum CasDecision<T> {
    /// A condition does not hold: nothing is written; `T` is the answer.
    Refuse(T),
    /// The conditions hold: commit these mutations (one partition's, stamped with the
    /// round's timestamp); `T` is the answer once they are.
    Apply(Vec<Mutation>, T),
}

/// A round that holds a quorum's promises: what the request's decision may read.
pub struct CasRound<'a> {
    proxy: &'a StorageProxy,
    ballot: Ballot,
    read_level: Consistency,
}

impl CasRound<'_> {
    /// The round's time: the timestamp of what it commits.
    pub fn timestamp(&self) -> i64 {
        self.ballot.micros
    }

    /// The level reads inside the round use: the serial level's quorum in a cluster (a read
    /// at SERIAL there would start a round of its own).
    pub fn read_level(&self) -> Consistency {
        self.read_level
    }

    /// Reads a partition for the round's decision.
    pub fn read(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cmd: &ReadCommand,
    ) -> Result<Option<PartitionResult>> {
        self.proxy
            .read_as(table, key, cmd, self.read_level, Operation::Cas)
    }
}

/// Where a round stands after its prepare.
enum Prepared {
    /// A quorum promised, and every earlier round is finished: the participants to propose to.
    Ready(Vec<Contact>),
    /// An earlier round was finished, or a competing ballot won: start over, above this.
    Again(Ballot),
}

impl StorageProxy {
    /// Runs a conditional request on partition `key` of `table` (see the module doc) at
    /// `levels`: the serial level for the round, then the level of its commit; `wait` as the
    /// executor's convention (a round across nodes is refused under `Wait::Never`). A traced
    /// request's `trace` hears of the messages of its rounds (and their replicas record their
    /// own events under its session).
    pub fn cas<T, E: From<Error>>(
        &self,
        table: &Table,
        key: &DecoratedKey,
        levels: (Consistency, Consistency),
        wait: Wait,
        trace: Option<&Trace>,
        decide: impl FnMut(&CasRound<'_>) -> std::result::Result<CasDecision<T>, E>,
    ) -> std::result::Result<T, E> {
        self.run_cas(Operation::Cas, table, key, levels, wait, trace, decide)
    }

    /// [`StorageProxy::cas`], counted in `op`'s metrics.
    #[allow(clippy::too_many_arguments)] // one request's whole description
    fn run_cas<T, E: From<Error>>(
        &self,
        op: Operation,
        table: &Table,
        key: &DecoratedKey,
        levels: (Consistency, Consistency),
        wait: Wait,
        trace: Option<&Trace>,
        mut decide: impl FnMut(&CasRound<'_>) -> std::result::Result<CasDecision<T>, E>,
    ) -> std::result::Result<T, E> {
        let m = &self.metrics;
        let timed_out = std::cell::Cell::new(false);
        let counted = |round: &CasRound<'_>| {
            let decision = decide(round)?;
            if op == Operation::Cas && matches!(decision, CasDecision::Refuse(_)) {
                m.cas_write_condition_not_met.fetch_add(1, Relaxed);
            }
            Ok(decision)
        };
        let r = self.round_trip(op, table, key, levels, wait, trace, counted, &timed_out);
        if timed_out.get() {
            match op {
                Operation::CasRead => &m.cas_read_timeouts,
                _ => &m.cas_write_timeouts,
            }
            .fetch_add(1, Relaxed);
        }
        r
    }

    /// Runs the rounds of one request until one decides; sets `timed_out` when it failed
    /// with a timeout.
    #[allow(clippy::too_many_arguments)] // one request's whole description
    fn round_trip<T, E: From<Error>>(
        &self,
        op: Operation,
        table: &Table,
        key: &DecoratedKey,
        (serial, commit): (Consistency, Consistency),
        wait: Wait,
        trace: Option<&Trace>,
        mut decide: impl FnMut(&CasRound<'_>) -> std::result::Result<CasDecision<T>, E>,
        timed_out: &std::cell::Cell<bool>,
    ) -> std::result::Result<T, E> {
        let timeout = |e: Error| {
            if matches!(e, Error::WriteTimeout(_) | Error::ReadTimeout(_)) {
                timed_out.set(true);
            }
            e
        };
        let id = table.schema().id;
        let would_block = || Error::Engine(cairn_engine::Error::WouldBlock);
        let _queue = self.cas_locks.lock(id, key, wait).ok_or_else(would_block)?;
        let topology = self.topology.get();
        if !self.in_cluster(&topology) {
            let round = CasRound {
                proxy: self,
                ballot: self.ballots.next(Ballot::NONE),
                read_level: serial,
            };
            return match decide(&round)? {
                CasDecision::Refuse(answer) => Ok(answer),
                CasDecision::Apply(mutations, answer) => {
                    self.mutate_as(mutations, commit, Operation::Cas, wait, None, trace)?;
                    Ok(answer)
                }
            };
        }
        if matches!(wait, Wait::Never) {
            // A round waits for other nodes: refuse before anything is sent.
            return Err(would_block().into());
        }
        let deadline = Instant::now() + self.cas_timeout();
        let mut above = Ballot::NONE;
        loop {
            if Instant::now() >= deadline {
                let (_, required) = self.participants(op, table, key, serial)?;
                return Err(timeout(Error::WriteTimeout(WriteTimeout {
                    consistency: serial,
                    received: 0,
                    block_for: required,
                    write_type: WriteType::Cas,
                }))
                .into());
            }
            let ballot = self.ballots.next(above);
            let prepared = self.prepare(op, table, key, serial, ballot, deadline, trace);
            let participants = match prepared.map_err(timeout)? {
                Prepared::Ready(p) => p,
                Prepared::Again(seen) => {
                    above = above.max(seen);
                    continue;
                }
            };
            let round = CasRound {
                proxy: self,
                ballot,
                read_level: quorum_of(serial),
            };
            match decide(&round)? {
                CasDecision::Refuse(answer) => return Ok(answer),
                CasDecision::Apply(mutations, answer) => {
                    let proposal = Proposal::of(ballot, &mutations);
                    let proposed = self.propose(
                        table,
                        key,
                        serial,
                        &participants,
                        &proposal,
                        Partial::Unknown,
                        deadline,
                        trace,
                    );
                    if proposed.map_err(timeout)? {
                        let simple = WriteType::Simple;
                        let committed =
                            self.commit_proposal(table, key, &proposal, commit, simple, trace);
                        committed.map_err(timeout)?;
                        return Ok(answer);
                    }
                    self.count_contention(op);
                    above = ballot;
                    backoff(ballot, deadline);
                }
            }
        }
    }

    /// A read at SERIAL or LOCAL_SERIAL in a cluster: a round that finishes what earlier
    /// rounds left, then reads at the level's quorum. Its timeouts are ReadTimeouts.
    pub(super) fn serial_read(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cmd: &ReadCommand,
        serial: Consistency,
    ) -> Result<Option<PartitionResult>> {
        let read = |round: &CasRound<'_>| -> Result<CasDecision<Option<PartitionResult>>> {
            Ok(CasDecision::Refuse(round.read(table, key, cmd)?))
        };
        let levels = (serial, serial);
        let trace = cmd.trace.as_ref();
        match self.run_cas(
            Operation::CasRead,
            table,
            key,
            levels,
            cmd.wait,
            trace,
            read,
        ) {
            Err(Error::WriteTimeout(t)) => Err(Error::ReadTimeout(ReadTimeout {
                consistency: serial,
                received: t.received,
                block_for: t.block_for,
                data_present: false,
            })),
            other => other,
        }
    }

    fn count_contention(&self, op: Operation) {
        match op {
            Operation::CasRead => &self.metrics.cas_read_contention,
            _ => &self.metrics.cas_write_contention,
        }
        .fetch_add(1, Relaxed);
    }

    /// How long a conditional request may keep losing to others.
    fn cas_timeout(&self) -> Duration {
        self.remote
            .as_ref()
            .map_or(Duration::from_secs(1), |r| r.cas_contention_timeout)
    }

    /// Step 1 (see the module doc): the participants that promised `ballot`, or why the
    /// round must start over.
    #[allow(clippy::too_many_arguments)] // one phase's whole description
    fn prepare(
        &self,
        op: Operation,
        table: &Table,
        key: &DecoratedKey,
        serial: Consistency,
        ballot: Ballot,
        deadline: Instant,
        trace: Option<&Trace>,
    ) -> Result<Prepared> {
        let id = table.schema().id;
        let (participants, required) = self.participants(op, table, key, serial)?;
        let body = wire::encode_request(id, key, ballot, None);
        let polled = self.poll(
            &participants,
            Verb::PaxosPrepare,
            &body,
            || self.paxos.prepare(id, key, ballot, Wait::Allowed),
            wire::decode_prepare_answer,
            |a| matches!(a, PrepareAnswer::Promise { .. }),
            (required, Await::Quorum),
            (deadline, trace),
        )?;
        let cas_timeout = |received| {
            Error::WriteTimeout(WriteTimeout {
                consistency: serial,
                received,
                block_for: required,
                write_type: WriteType::Cas,
            })
        };
        let mut promised = Vec::new();
        let mut highest = Ballot::NONE;
        let mut accepted: Option<Proposal> = None;
        let mut committed: Option<Proposal> = None;
        for (contact, answer) in polled.answers {
            match answer {
                PrepareAnswer::Rejected { promised } => highest = highest.max(promised),
                PrepareAnswer::Promise {
                    accepted: a,
                    committed: c,
                } => {
                    let seen = c.as_ref().map_or(Ballot::NONE, |c| c.ballot);
                    if let Some(a) =
                        a.filter(|a| accepted.as_ref().is_none_or(|x| a.ballot > x.ballot))
                    {
                        accepted = Some(a);
                    }
                    if let Some(c) =
                        c.filter(|c| committed.as_ref().is_none_or(|x| c.ballot > x.ballot))
                    {
                        committed = Some(c);
                    }
                    promised.push((contact, seen));
                }
            }
        }
        if promised.len() < required {
            if Instant::now() >= deadline || polled.timed_out && highest == Ballot::NONE {
                return Err(cas_timeout(promised.len()));
            }
            // Outvoted by a higher ballot: start over above it, after a pause that lets the
            // winner finish.
            self.count_contention(op);
            backoff(ballot, deadline);
            return Ok(Prepared::Again(highest.max(ballot)));
        }
        let newest = committed.as_ref().map_or(Ballot::NONE, |c| c.ballot);
        if newest.micros >= ballot.micros {
            // What this round commits must be newer than what was committed.
            return Ok(Prepared::Again(newest));
        }
        if let Some(earlier) = accepted.filter(|a| a.ballot > newest) {
            // An earlier round's proposal may have been chosen: finish it under this ballot.
            match op {
                Operation::CasRead => &self.metrics.cas_read_unfinished_commit,
                _ => &self.metrics.cas_write_unfinished_commit,
            }
            .fetch_add(1, Relaxed);
            let again = Proposal {
                ballot,
                update: earlier.update,
            };
            let contacts: Vec<Contact> = promised.iter().map(|(c, _)| c.clone()).collect();
            let partial = Partial::Retry;
            if self.propose(
                table, key, serial, &contacts, &again, partial, deadline, trace,
            )? {
                let level = quorum_of(serial);
                self.commit_proposal(table, key, &again, level, WriteType::Cas, trace)?;
            } else {
                backoff(ballot, deadline);
            }
            return Ok(Prepared::Again(ballot));
        }
        if let Some(c) = &committed {
            let missing: Vec<Contact> = promised
                .iter()
                .filter(|(_, seen)| *seen < c.ballot)
                .map(|(contact, _)| contact.clone())
                .collect();
            if !missing.is_empty() {
                // Those replicas may not hold the last commit: a quorum read could miss it.
                let body = wire::encode_request(id, key, c.ballot, Some(&c.update));
                let all = missing.len();
                let sent = self.poll(
                    &missing,
                    Verb::PaxosCommit,
                    &body,
                    || {
                        let apply =
                            |m, w, t: Option<&cairn_engine::Trace>| self.apply_local(m, w, t);
                        self.paxos.commit(id, key, c, Wait::Allowed, &apply)
                    },
                    |_| Ok(()),
                    |_| true,
                    (all, Await::Quorum),
                    (deadline, trace),
                )?;
                if sent.answers.len() < all {
                    return Err(cas_timeout(promised.len() - all + sent.answers.len()));
                }
                return Ok(Prepared::Again(ballot));
            }
        }
        // The proposal goes to every live participant, as Cassandra's does: one that did not
        // answer the prepare in time may still accept.
        Ok(Prepared::Ready(participants))
    }

    /// Step 3: whether a quorum of `participants` accepted `proposal`. A WriteTimeout (CAS)
    /// when too few answered in time and none refused, or — for the request's own proposal
    /// (`Partial::Unknown`) — when some accepted it but not a quorum.
    #[allow(clippy::too_many_arguments)] // one phase's whole description
    fn propose(
        &self,
        table: &Table,
        key: &DecoratedKey,
        serial: Consistency,
        participants: &[Contact],
        proposal: &Proposal,
        partial: Partial,
        deadline: Instant,
        trace: Option<&Trace>,
    ) -> Result<bool> {
        let id = table.schema().id;
        let (_, required) = self.participants(Operation::Cas, table, key, serial)?;
        let body = wire::encode_request(id, key, proposal.ballot, Some(&proposal.update));
        let polled = self.poll(
            participants,
            Verb::PaxosPropose,
            &body,
            || self.paxos.propose(id, key, proposal, Wait::Allowed),
            |b| Ok(b.first() == Some(&1)),
            |accepted| *accepted,
            // The request's own proposal: a refusal decides only once every participant
            // answered — one that accepts after a quorum became impossible still makes the
            // proposal one a later round may find and commit.
            (
                required,
                match partial {
                    Partial::Unknown => Await::Every,
                    Partial::Retry => Await::Quorum,
                },
            ),
            (deadline, trace),
        )?;
        let accepts = polled.answers.iter().filter(|(_, a)| *a).count();
        if accepts >= required {
            return Ok(true);
        }
        let refused = polled.answers.iter().any(|(_, a)| !*a);
        // Accepted by some: a later round may find it and commit it, so the request must not
        // start over (it could apply twice) nor say it was not applied — its outcome is
        // unknown, which protocol v4 reports as a timeout (Cassandra's
        // CasWriteUnknownResultException).
        // A participant that never answered may have accepted too (Cassandra's
        // ProposeCallback.isFullyRefused).
        let unanswered = polled.answers.len() < participants.len();
        let unknown = partial == Partial::Unknown && (accepts > 0 || unanswered);
        if unknown || polled.timed_out && !refused {
            return Err(Error::WriteTimeout(WriteTimeout {
                consistency: serial,
                received: accepts,
                block_for: required,
                write_type: WriteType::Cas,
            }));
        }
        Ok(false)
    }

    /// Step 4: the proposal committed on every live replica, waited for at `cl`.
    fn commit_proposal(
        &self,
        table: &Table,
        key: &DecoratedKey,
        proposal: &Proposal,
        cl: Consistency,
        write_type: WriteType,
        trace: Option<&Trace>,
    ) -> Result<()> {
        let id = table.schema().id;
        let topology = self.topology.get();
        let strategy = self.replication(&table.schema().keyspace);
        let op = Operation::Cas;
        let targets = self.cluster_targets(&topology, &strategy, key.token, cl, op)?;
        let Some(remote) = &self.remote else {
            let apply = |m, w, t: Option<&cairn_engine::Trace>| self.apply_local(m, w, t);
            return self.paxos.commit(id, key, proposal, Wait::Allowed, &apply);
        };
        let commit = write::PaxosCommit {
            state: &self.paxos,
            table: id,
            key,
            proposal,
        };
        let plans = vec![write::Planned { strategy, targets }];
        let apply = |m, w, t: Option<&cairn_engine::Trace>| self.apply_local(m, w, t);
        let pending = write::start_commit(
            &topology, commit, plans, cl, write_type, remote, &apply, trace,
        )?;
        remote.runtime.block_on(pending)
    }

    /// The live replicas a round on `key` asks at `serial` (this node first), and how many
    /// must answer. Unavailable when fewer are up.
    fn participants(
        &self,
        op: Operation,
        table: &Table,
        key: &DecoratedKey,
        serial: Consistency,
    ) -> Result<(Vec<Contact>, usize)> {
        let topology = self.topology.get();
        let strategy = self.replication(&table.schema().keyspace);
        let targets = self.cluster_targets(&topology, &strategy, key.token, serial, op)?;
        let local_dc = topology
            .local()
            .map_or("", |m| m.endpoint.datacenter.as_str());
        let required = serial.block_for(&strategy, local_dc).max(1);
        let ring = topology.ring();
        let local = ring.position(topology.local_id());
        let mut contacts: Vec<Contact> = targets
            .iter()
            .filter_map(|&t| ring.endpoints().get(t).map(|e| (t, e)))
            .filter(|(_, e)| !serial.is_datacenter_local() || e.datacenter == local_dc)
            .map(|(t, e)| Contact {
                address: e.address,
                local: Some(t) == local,
            })
            .collect();
        contacts.sort_by_key(|c| !c.local);
        Ok((contacts, required))
    }

    /// Sends `verb` with `body` to every remote participant, answers the local one in place,
    /// and collects answers until `required` of them are `ok`, until too few are left to get
    /// there (or, with [`Await::Every`], until every participant answered), or until
    /// `deadline`; the messages traced to the request's `trace`.
    #[allow(clippy::too_many_arguments)] // one phase's whole description
    fn poll<T: Send + 'static>(
        &self,
        participants: &[Contact],
        verb: Verb,
        body: &Bytes,
        local: impl FnOnce() -> Result<T>,
        decode: fn(&Bytes) -> std::result::Result<T, String>,
        ok: impl Fn(&T) -> bool,
        (required, wait): (usize, Await),
        (deadline, trace): (Instant, Option<&Trace>),
    ) -> Result<Polled<T>> {
        let mut out = Polled {
            answers: Vec::new(),
            timed_out: false,
        };
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Option<T>)>();
        let mut outstanding = 0usize;
        if let Some(remote) = &self.remote {
            let link = Link {
                messaging: &remote.messaging,
                runtime: &remote.runtime,
                timeout: deadline.saturating_duration_since(Instant::now()),
                trace,
            };
            for (i, contact) in participants.iter().enumerate().filter(|(_, c)| !c.local) {
                let peer = contact.address;
                link.send(peer, verb, body.clone(), &tx, move |r| {
                    // An error answer or none at all: this participant gives nothing.
                    Some((i, r.ok().and_then(|b| decode(&b).ok())))
                });
                outstanding += 1;
            }
        }
        drop(tx);
        let mut oks = 0usize;
        if let Some(i) = participants.iter().position(|c| c.local) {
            // This node's replica fails like a remote one would: it just does not count.
            match (local(), participants.get(i)) {
                (Ok(a), Some(c)) => {
                    oks += usize::from(ok(&a));
                    out.answers.push((c.clone(), a));
                }
                (Err(e), _) => tracing::warn!("Paxos {} on this node failed: {e}", verb.name()),
                (Ok(_), None) => {}
            }
        }
        let hopeless = |oks: usize, outstanding: usize| match wait {
            Await::Quorum => oks + outstanding < required,
            Await::Every => outstanding == 0,
        };
        while oks < required && !hopeless(oks, outstanding) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((i, answer)) => {
                    outstanding -= 1;
                    if let (Some(a), Some(c)) = (answer, participants.get(i)) {
                        oks += usize::from(ok(&a));
                        out.answers.push((c.clone(), a));
                    }
                }
                Err(_) => {
                    out.timed_out = true;
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Whether requests may involve other nodes: the proxy reaches them and the ring has
    /// more than this node.
    pub(super) fn in_cluster(&self, topology: &crate::topology::Topology) -> bool {
        self.remote.is_some() && topology.ring().endpoints().len() > 1
    }
}

/// What a proposal accepted by some replicas but not a quorum means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Partial {
    /// The request's own: its outcome is unknown (a WriteTimeout).
    Unknown,
    /// An earlier round's being finished: the round starts over.
    Retry,
}

/// How long a phase waits for answers once a quorum of `ok` ones cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Await {
    /// Not at all: the phase has failed.
    Quorum,
    /// Until every participant answered or the deadline: whether none accepted matters.
    Every,
}

/// What a phase collected.
struct Polled<T> {
    /// Each participant that answered, with its answer.
    answers: Vec<(Contact, T)>,
    /// Whether the deadline passed first.
    timed_out: bool,
}

/// The quorum level a round's reads and repairs use.
fn quorum_of(serial: Consistency) -> Consistency {
    match serial {
        Consistency::LocalSerial => Consistency::LocalQuorum,
        _ => Consistency::Quorum,
    }
}

/// A short pause after losing to a competing round (1–20 ms, spread by the ballot), never
/// past the deadline.
fn backoff(ballot: Ballot, deadline: Instant) {
    let spread = (ballot.micros as u64 ^ ballot.node).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59;
    let pause = Duration::from_millis(1 + spread % 20);
    std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
}
