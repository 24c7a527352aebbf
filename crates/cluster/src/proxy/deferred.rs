//! Reads that wait for other replicas on the request's task instead of a thread.
//!
//! A single-partition read coordinated across replicas waits for their answers. Under
//! `Wait::Never` with the request's [`Acks`], [`StorageProxy::read_or_defer`] reads this node's
//! share in place (when it need not wait for the disk), sends the other contacts their
//! requests, and leaves the wait in `acks` as a [`PendingRead`]: the server awaits it on the
//! request's task, hands the answer back ([`Acks::prefetched`]) and runs the statement again,
//! which now finds its read answered. Statement execution stays synchronous; only the wait
//! moved.
//!
//! Only the common case is answered this way: every contact answers in time and the digests
//! agree. A disagreement (read repair), a replica's failure (another replica must be asked) or
//! this node's disk makes the request run again where it may block
//! ([`Deferred::Fallback`]), through the full read path (`read.rs`). A replica that does not
//! answer in time fails the read with ReadTimeout, as the blocking path would.

use super::read::{self, Answer, Contact, Progress};
use super::{Acks, StorageProxy};
use crate::consistency::{Consistency, ReadTimeout};
use crate::error::{Error, Result};
use crate::messaging::{Messaging, Verb};
use bytes::Bytes;
use cairn_engine::model::DecoratedKey;
use cairn_engine::table::Table;
use cairn_engine::{PartitionResult, ReadCommand, Wait};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

/// What a deferred read ends with.
pub enum Deferred {
    /// The read's answer, for the statement's next run.
    Answer(Prefetched),
    /// The read needs the full path: run the request again where it may block.
    Fallback,
}

/// A read's answer and what it answers (the table, key, level and command, `now` aside).
pub struct Prefetched {
    request: Bytes,
    answer: Option<PartitionResult>,
}

/// A read's wait for its replicas, to be awaited on the request's task.
pub type PendingRead = Pin<Box<dyn Future<Output = Result<Deferred>> + Send>>;

/// What identifies a read for its rerun: its wire request with `now` zeroed (the rerun's clock
/// may have moved), and the level.
fn identity(table: u128, key: &DecoratedKey, cmd: &ReadCommand, cl: Consistency) -> Bytes {
    let timeless = ReadCommand {
        now: 0,
        ..cmd.clone()
    };
    let mut out = read::encode_request(table, key, &timeless).to_vec();
    out.push(cl.code() as u8);
    Bytes::from(out)
}

impl Acks {
    /// The read a request left waiting, if any.
    pub fn take_read(&self) -> Option<PendingRead> {
        self.read.lock().take()
    }

    /// Keeps a read's answer for the request's next run.
    pub fn prefetched(&self, p: Prefetched) {
        self.answers.lock().push(p);
    }

    fn put_read(&self, r: PendingRead) {
        *self.read.lock() = Some(r);
    }

    fn answer_for(&self, request: &Bytes) -> Option<Option<PartitionResult>> {
        let mut answers = self.answers.lock();
        let i = answers.iter().position(|p| p.request == *request)?;
        Some(answers.swap_remove(i).answer)
    }
}

impl StorageProxy {
    /// [`StorageProxy::read`], except that under `Wait::Never` a read that must wait for
    /// other replicas is not refused when the caller gives `acks`: it is started and its wait
    /// left in `acks` (then `WouldBlock`); the request's next run finds its answer there.
    pub fn read_or_defer(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cmd: &ReadCommand,
        cl: Consistency,
        acks: Option<&Acks>,
    ) -> Result<Option<PartitionResult>> {
        let Some(acks) = acks.filter(|_| matches!(cmd.wait, Wait::Never) && !cl.is_serial()) else {
            return self.read(table, key, cmd, cl);
        };
        let id = identity(table.schema().id, key, cmd, cl);
        if let Some(answer) = acks.answer_for(&id) {
            return Ok(answer);
        }
        match self.read(table, key, cmd, cl) {
            Err(Error::Engine(cairn_engine::Error::WouldBlock)) => {}
            other => return other,
        }
        // It would wait: for this node's disk (the blocking pool's job), or for other
        // replicas — started here, if this node's share can be read without waiting.
        let Some((contacts, remote)) = self.deferrable(table, key, cl) else {
            return Err(would_block());
        };
        let local = match contacts.iter().position(|c| c.local) {
            Some(i) => match table.read_data(key, cmd) {
                Ok(data) if i == 0 => Some((i, Answer::Data(data))),
                Ok(data) => {
                    let d = read::digest(table.schema().id, key, data.as_ref());
                    Some((i, Answer::Digest(d)))
                }
                // The disk, or a fault this node's copy has: the full path.
                Err(_) => return Err(would_block()),
            },
            None => None,
        };
        let table = match self.db.table_by_id(table.schema().id) {
            Some(t) => t,
            None => return Err(would_block()),
        };
        let wait = Wait::Allowed; // the replicas' own reads may wait for their disks
        let remote_cmd = ReadCommand {
            wait,
            ..cmd.clone()
        };
        let pending = coordinate(
            table,
            key.clone(),
            remote_cmd,
            cl,
            contacts,
            local,
            remote,
            Arc::clone(&self.metrics),
            id,
        );
        acks.put_read(Box::pin(pending));
        Err(would_block())
    }

    /// The contacts of a read at `cl` that waits only for other replicas (none failed, no
    /// spares needed), and how to reach them.
    fn deferrable(
        &self,
        table: &Table,
        key: &DecoratedKey,
        cl: Consistency,
    ) -> Option<(Vec<Contact>, Reach)> {
        let remote = self.remote.as_ref()?;
        let topology = self.topology.get();
        if !self.in_cluster(&topology) {
            return None;
        }
        let strategy = self.replication(&table.schema().keyspace);
        let op = super::Operation::Read;
        let targets = self
            .cluster_targets(&topology, &strategy, key.token, cl, op)
            .ok()?;
        let (contacts, _) = super::contacts(&topology, targets, cl, &strategy);
        if contacts.iter().all(|c| c.local) {
            // Only this node's disk to wait for: the blocking pool's job.
            return None;
        }
        let reach = (Arc::clone(&remote.messaging), remote.read_timeout);
        Some((contacts, reach))
    }
}

/// The messaging a deferred read's requests go through, and how long they may take.
type Reach = (Arc<Messaging>, Duration);

/// A remote contact's answer, still to come.
type Asked = Pin<Box<dyn Future<Output = Result<Bytes>> + Send>>;

/// The read's ReadTimeout, counted.
fn timed_out(metrics: &super::ProxyMetrics, progress: &Progress) -> Error {
    metrics
        .read_timeouts
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Error::ReadTimeout(ReadTimeout {
        consistency: progress.consistency,
        received: progress.received,
        block_for: progress.block_for,
        data_present: progress.data_present,
    })
}

fn would_block() -> Error {
    Error::Engine(cairn_engine::Error::WouldBlock)
}

/// The read's wait: every remote contact's answer (the first contact gives data, the others
/// digests), compared; see the module doc for what falls back.
#[allow(clippy::too_many_arguments)] // one read's whole description, moved into its future
async fn coordinate(
    table: Arc<Table>,
    key: DecoratedKey,
    cmd: ReadCommand,
    cl: Consistency,
    contacts: Vec<Contact>,
    local: Option<(usize, Answer)>,
    (messaging, timeout): Reach,
    metrics: Arc<super::ProxyMetrics>,
    request: Bytes,
) -> Result<Deferred> {
    let id = table.schema().id;
    let body = read::encode_request(id, &key, &cmd);
    let mut answers: Vec<Option<Answer>> = contacts.iter().map(|_| None).collect();
    let mut progress = Progress {
        consistency: cl,
        received: 0,
        block_for: contacts.len(),
        data_present: false,
    };
    if let Some((i, a)) = local {
        if let Some(slot) = answers.get_mut(i) {
            *slot = Some(a);
            read::note(&mut progress, i);
        }
    }
    let mut waits: Vec<(usize, Asked)> = Vec::new();
    for (i, c) in contacts.iter().enumerate().filter(|(_, c)| !c.local) {
        let verb = if i == 0 {
            Verb::ReadData
        } else {
            Verb::ReadDigest
        };
        // Handed to the connection at once when it is open (no task, no timer of its own:
        // the read's deadline covers it), else through `request`.
        let trace = cmd.trace.clone();
        let ask: Asked = match messaging.try_send_traced(c.address, verb, body.clone(), trace) {
            Ok(answer) => Box::pin(answer),
            Err(body) => {
                let (messaging, peer) = (Arc::clone(&messaging), c.address);
                let trace = cmd.trace.clone();
                Box::pin(async move {
                    let asked = messaging.request_traced(peer, verb, body, timeout, trace);
                    asked.await
                })
            }
        };
        waits.push((i, ask));
    }
    let deadline = tokio::time::Instant::now() + timeout;
    while !waits.is_empty() {
        let next = std::future::poll_fn(|cx| {
            for (n, (_, w)) in waits.iter_mut().enumerate() {
                if let Poll::Ready(r) = w.as_mut().poll(cx) {
                    return Poll::Ready((n, r));
                }
            }
            Poll::Pending
        });
        let Ok((n, outcome)) = tokio::time::timeout_at(deadline, next).await else {
            return Err(timed_out(&metrics, &progress));
        };
        let (i, _) = waits.swap_remove(n);
        let verb = if i == 0 {
            Verb::ReadData
        } else {
            Verb::ReadDigest
        };
        let peer = contacts.get(i).map(|c| c.address);
        match (outcome, peer) {
            (Ok(b), Some(peer)) => match read::answer(peer, verb, Ok(b)) {
                Ok(a) => {
                    if let Some(slot) = answers.get_mut(i) {
                        *slot = Some(a);
                        read::note(&mut progress, i);
                    }
                }
                // An answer that does not decode: the full path reports it.
                Err(_) => return Ok(Deferred::Fallback),
            },
            // A replica's failure: the full path asks another one instead.
            (Err(Error::Remote { .. }), _) | (_, None) => return Ok(Deferred::Fallback),
            // Lost or unreachable: no answer, as the deadline.
            (Err(_), _) => return Err(timed_out(&metrics, &progress)),
        }
    }
    let mut answers = answers.into_iter().flatten();
    let data = match answers.next() {
        Some(Answer::Data(d)) => d,
        _ => return Ok(Deferred::Fallback),
    };
    let expected = read::digest(id, &key, data.as_ref());
    let agree = answers.all(|a| match a {
        Answer::Digest(d) => d == expected,
        Answer::Data(other) => read::digest(id, &key, other.as_ref()) == expected,
    });
    if !agree {
        // Read repair: the full path reconciles and writes back.
        return Ok(Deferred::Fallback);
    }
    let answer = match data {
        Some(d) => table.live(&key, d, &cmd)?,
        None => None,
    };
    let on_task = &metrics.reads_on_request_task;
    on_task.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Deferred::Answer(Prefetched { request, answer }))
}
