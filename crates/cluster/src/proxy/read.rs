//! The coordinator's single-partition read: data from one replica, digests from the others
//! the level needs, and on a mismatch the replicas' data reconciled by timestamp, the newest
//! answered and written back to the replicas that lacked it (blocking read repair, Cassandra
//! 4's `read_repair = 'BLOCKING'`).
//!
//! Replicas answer with their partition *as data* — merged from their sources, tombstones
//! included, restricted to the read's slice (`Table::read_data`) — so answers reconcile by
//! timestamp (`Partition::merge`), and the coordinator keeps what is live with its own
//! schema (`Table::live`). A digest is a hash of that data in a canonical encoding; two
//! replicas holding the same data give the same digest.
//!
//! The replica asked for data is the local node when it is one (no message), else the first
//! replica up in placement order. A replica that does not answer in `read_timeout` makes the
//! read fail with the protocol's ReadTimeout (received, block-for, whether the data replica
//! answered); a replica answering with an error is a failure — the proxy then asks replicas
//! up that were not contacted instead of the failed ones, while there are enough of them
//! (`StorageProxy::read`), and fails the read with ReadFailure only when none is left.
//!
//! Wire format of a read request (`READ_DATA` / `READ_DIGEST`): table id (16 bytes LE), key
//! (length-prefixed), now (u32 LE), flags (1 reversed, 2 static row, 4 bypass the cache),
//! the slice's ranges (count, then each range's start and end positions length-prefixed).
//! `READ_DATA` answers the partition as one mutation (the commitlog's encoding, none when the
//! replica holds nothing); `READ_DIGEST` answers 16 bytes.

use super::link::Link;
use crate::consistency::Consistency;
use crate::error::{Error, Result};
use crate::messaging::Verb;
use bytes::Bytes;
use cairn_engine::model::codec::{put_bytes, put_uvarint, DecodeResult, Decoder};
use cairn_engine::model::mutation::{decode_batch, encode_batch};
use cairn_engine::model::{ClusteringRange, DecoratedKey, Mutation, Partition, Slice};
use cairn_engine::{ReadCommand, Wait};
use std::net::IpAddr;

const REVERSED: u8 = 1;
const STATIC: u8 = 2;
const BYPASS_CACHE: u8 = 4;

/// A read request's body.
pub(super) fn encode_request(table: u128, key: &DecoratedKey, cmd: &ReadCommand) -> Bytes {
    let mut out = Vec::with_capacity(64 + key.key.len());
    out.extend_from_slice(&table.to_le_bytes());
    put_bytes(&mut out, &key.key);
    put_command(&mut out, cmd);
    Bytes::from(out)
}

/// A read command on the wire: now, flags, the slice's ranges.
pub(super) fn put_command(out: &mut Vec<u8>, cmd: &ReadCommand) {
    out.extend_from_slice(&cmd.now.to_le_bytes());
    let mut flags = 0;
    if cmd.reversed {
        flags |= REVERSED;
    }
    if cmd.include_static {
        flags |= STATIC;
    }
    if cmd.bypass_cache {
        flags |= BYPASS_CACHE;
    }
    out.push(flags);
    let ranges = cmd.slice.ranges();
    put_uvarint(out, ranges.len() as u64);
    for r in ranges {
        put_bytes(out, &r.start);
        put_bytes(out, &r.end);
    }
}

/// A read request from its body: the table id, the key and the command (which may wait,
/// running on a replica's blocking thread).
pub(super) fn decode_request(
    body: &Bytes,
) -> std::result::Result<(u128, DecoratedKey, ReadCommand), String> {
    let bad = |e| format!("undecodable read request: {e:?}");
    let mut d = Decoder::from_bytes(body);
    let id = table_id(&mut d).map_err(bad)?;
    let key = DecoratedKey::new(bytes(&mut d).map_err(bad)?);
    let cmd = command(&mut d).map_err(bad)?;
    Ok((id, key, cmd))
}

/// A table id on the wire (16 bytes, little-endian).
pub(super) fn table_id(d: &mut Decoder<'_>) -> DecodeResult<u128> {
    let mut id = [0u8; 16];
    id.copy_from_slice(d.raw(16)?);
    Ok(u128::from_le_bytes(id))
}

/// Length-prefixed bytes on the wire.
pub(super) fn bytes(d: &mut Decoder<'_>) -> DecodeResult<Bytes> {
    let n = d.len()?;
    Ok(Bytes::copy_from_slice(d.raw(n)?))
}

/// A read command from the wire ([`put_command`]); it may wait (it runs on a replica's
/// blocking thread).
pub(super) fn command(d: &mut Decoder<'_>) -> DecodeResult<ReadCommand> {
    let now = d.u32_le()?;
    let flags = d.u8()?;
    let count = d.len()?;
    let mut ranges = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let start = bytes(d)?;
        let end = bytes(d)?;
        ranges.push(ClusteringRange { start, end });
    }
    let mut cmd = ReadCommand::all(now, Wait::Allowed);
    cmd.slice = Slice::new(ranges);
    cmd.reversed = flags & REVERSED != 0;
    cmd.include_static = flags & STATIC != 0;
    cmd.bypass_cache = flags & BYPASS_CACHE != 0;
    Ok(cmd)
}

/// A replica's data answer.
pub(super) fn encode_data(table: u128, key: &DecoratedKey, data: Option<Partition>) -> Bytes {
    let mut out = Vec::new();
    if let Some(update) = data {
        encode_batch(
            &[Mutation {
                table,
                key: key.clone(),
                update,
            }],
            &mut out,
        );
    }
    Bytes::from(out)
}

/// A data answer's partition (`None`: the replica holds nothing of it).
pub(super) fn decode_data(body: &Bytes) -> std::result::Result<Option<Partition>, String> {
    if body.is_empty() {
        return Ok(None);
    }
    let mut muts = decode_batch(body).map_err(|e| format!("undecodable read answer: {e:?}"))?;
    Ok(muts.pop().map(|m| m.update))
}

/// The digest of a replica's data: a hash of its canonical encoding (range tombstones in a
/// fixed order, whatever order the replica's sources gave them in).
pub(super) fn digest(table: u128, key: &DecoratedKey, data: Option<&Partition>) -> [u8; 16] {
    let Some(p) = data else {
        return [0; 16];
    };
    let mut canonical = p.clone();
    canonical.range_tombstones.sort_by(|a, b| {
        (&a.range.start, &a.range.end, a.deletion.marked_at).cmp(&(
            &b.range.start,
            &b.range.end,
            b.deletion.marked_at,
        ))
    });
    let body = encode_data(table, key, Some(canonical));
    let (h1, h2) = cairn_engine::model::token::murmur3_x64_128(&body, 0);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&h1.to_le_bytes());
    out[8..].copy_from_slice(&h2.to_le_bytes());
    out
}

/// What one contacted replica answered.
pub(super) enum Answer {
    /// Its data.
    Data(Option<Partition>),
    /// Its digest.
    Digest([u8; 16]),
}

/// A replica's answer to a read request, decoded.
pub(super) fn answer(peer: IpAddr, verb: Verb, answer: Result<Bytes>) -> Result<Answer> {
    let answer = answer?;
    let remote = |message: String| Error::Remote {
        peer,
        verb: verb.name(),
        message,
    };
    match verb {
        Verb::ReadDigest => {
            let d: [u8; 16] = answer
                .as_ref()
                .try_into()
                .map_err(|_| remote(format!("a digest of {} bytes", answer.len())))?;
            Ok(Answer::Digest(d))
        }
        _ => Ok(Answer::Data(decode_data(&answer).map_err(remote)?)),
    }
}

/// The protocol's ReadTimeout fields, for an error.
#[derive(Debug, Clone, Copy)]
pub(super) struct Progress {
    /// The level.
    pub consistency: Consistency,
    /// Answers received.
    pub received: usize,
    /// Answers needed.
    pub block_for: usize,
    /// Whether the replica asked for data answered.
    pub data_present: bool,
}

/// One replica a read contacts.
#[derive(Debug, Clone)]
pub(super) struct Contact {
    /// Its address.
    pub address: IpAddr,
    /// Whether it is this node.
    pub local: bool,
}

/// What a coordinated read works with.
pub(super) struct Coordination<'a> {
    /// The table read (its data on this node, its schema for what is live).
    pub table: &'a cairn_engine::table::Table,
    /// The proxy, which applies repairs of the local replica as any write of this node's
    /// share (with the views of the table: `StorageProxy::apply_local`), so a repaired
    /// replica's views follow its base rows, as Cassandra's read-repair mutations do.
    pub proxy: &'a super::StorageProxy,
    /// The other replicas, within `read_request_timeout`.
    pub link: Link<'a>,
}

/// What a coordinated read did, for the metrics.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ReadOutcome {
    /// Whether the replicas disagreed and were repaired.
    pub repaired: bool,
}

/// Reads `key` from `contacts` (the first gives data, the others digests) at `cl`, which
/// waits for `contacts.len()` answers; reconciles and repairs on a mismatch.
pub(super) fn coordinate(
    c: &Coordination<'_>,
    key: &DecoratedKey,
    cmd: &ReadCommand,
    cl: Consistency,
    contacts: &[Contact],
) -> Result<(Option<cairn_engine::PartitionResult>, ReadOutcome)> {
    let table_id = c.table.schema().id;
    let block_for = contacts.len();
    let mut progress = Progress {
        consistency: cl,
        received: 0,
        block_for,
        data_present: false,
    };
    let answers = gather(c, table_id, key, cmd, contacts, true, &mut progress)?;
    let mut answers = answers.into_iter();
    let data = match answers.next() {
        Some(Answer::Data(d)) => d,
        _ => None,
    };
    let expected = digest(table_id, key, data.as_ref());
    let agree = answers.all(|a| match a {
        Answer::Digest(d) => d == expected,
        Answer::Data(other) => digest(table_id, key, other.as_ref()) == expected,
    });
    if let Some(t) = &cmd.trace {
        t.event(format!(
            "{} replica answers received{}",
            contacts.len(),
            if agree {
                ""
            } else {
                "; digest mismatch: reading and repairing"
            }
        ));
    }
    if agree {
        let live = match data {
            Some(d) => c.table.live(key, d, cmd)?,
            None => None,
        };
        return Ok((live, ReadOutcome::default()));
    }
    // The replicas disagree: everyone's data, reconciled, written back where it differs.
    progress.received = 0;
    progress.data_present = false;
    let all = gather(c, table_id, key, cmd, contacts, false, &mut progress)?;
    let datas: Vec<Option<Partition>> = all
        .into_iter()
        .map(|a| match a {
            Answer::Data(d) => d,
            Answer::Digest(_) => None,
        })
        .collect();
    let mut merged: Option<Partition> = None;
    for d in datas.iter().flatten() {
        match merged.as_mut() {
            Some(m) => m.merge(d.clone()),
            None => merged = Some(d.clone()),
        }
    }
    let newest = digest(table_id, key, merged.as_ref());
    if let Some(m) = &merged {
        let stale: Vec<&Contact> = contacts
            .iter()
            .zip(&datas)
            .filter(|(_, d)| digest(table_id, key, d.as_ref()) != newest)
            .map(|(contact, _)| contact)
            .collect();
        repair(c, table_id, key, m, &stale, &mut progress)?;
    }
    let live = match merged {
        Some(m) => c.table.live(key, m, cmd)?,
        None => None,
    };
    Ok((live, ReadOutcome { repaired: true }))
}

/// Asks every contact (the first for data, the others for data too unless `digests`) and
/// waits for all of them; answers in contact order.
fn gather(
    c: &Coordination<'_>,
    table_id: u128,
    key: &DecoratedKey,
    cmd: &ReadCommand,
    contacts: &[Contact],
    digests: bool,
    progress: &mut Progress,
) -> Result<Vec<Answer>> {
    let body = encode_request(table_id, key, cmd);
    let verb = |i: usize| {
        if digests && i > 0 {
            Verb::ReadDigest
        } else {
            Verb::ReadData
        }
    };
    gather_with(
        c,
        contacts,
        progress,
        |i| (verb(i), body.clone()),
        |i| {
            let data = c.table.read_data(key, cmd)?;
            Ok(if verb(i) == Verb::ReadDigest {
                Answer::Digest(digest(table_id, key, data.as_ref()))
            } else {
                Answer::Data(data)
            })
        },
        answer,
    )
}

/// Sends each remote contact its request (`request(i)`), answers the local one in place
/// (`local(i)`), and waits for every answer (`decode`d), in contact order — or fails the read
/// with the protocol's ReadTimeout (no answer in time) or ReadFailure (a replica's error).
pub(super) fn gather_with<T: Send + 'static>(
    c: &Coordination<'_>,
    contacts: &[Contact],
    progress: &mut Progress,
    request: impl Fn(usize) -> (Verb, Bytes),
    mut local: impl FnMut(usize) -> Result<T>,
    decode: fn(IpAddr, Verb, Result<Bytes>) -> Result<T>,
) -> Result<Vec<T>> {
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<T>)>();
    let mut answers: Vec<Option<T>> = contacts.iter().map(|_| None).collect();
    for (i, contact) in contacts.iter().enumerate() {
        if contact.local {
            continue;
        }
        let (verb, body) = request(i);
        let peer = contact.address;
        c.link.send(peer, verb, body, &tx, move |r| {
            Some((i, decode(peer, verb, r)))
        });
    }
    drop(tx);
    for (i, contact) in contacts.iter().enumerate() {
        if contact.local {
            answers[i] = Some(local(i)?);
            note(progress, i);
        }
    }
    let deadline = std::time::Instant::now() + c.link.timeout;
    while answers.iter().any(Option::is_none) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, Ok(a))) => {
                if let Some(slot) = answers.get_mut(i) {
                    *slot = Some(a);
                    note(progress, i);
                }
            }
            Ok((_, Err(Error::Remote { peer, message, .. }))) => {
                return Err(Error::ReadFailure(crate::consistency::ReadFailure {
                    consistency: progress.consistency,
                    received: progress.received,
                    block_for: progress.block_for,
                    failures: vec![(peer, message)],
                    data_present: progress.data_present,
                }));
            }
            // Lost, unreachable or too slow: no answer, as the deadline.
            Ok((_, Err(_))) | Err(_) => {
                return Err(Error::ReadTimeout(crate::consistency::ReadTimeout {
                    consistency: progress.consistency,
                    received: progress.received,
                    block_for: progress.block_for,
                    data_present: progress.data_present,
                }));
            }
        }
    }
    Ok(answers.into_iter().flatten().collect())
}

pub(super) fn note(progress: &mut Progress, contact: usize) {
    progress.received += 1;
    if contact == 0 {
        progress.data_present = true;
    }
}

/// Writes the reconciled `data` back to the `stale` contacts and waits for them (blocking
/// read repair): a read answers only once its replicas hold what it answers.
pub(super) fn repair(
    c: &Coordination<'_>,
    table_id: u128,
    key: &DecoratedKey,
    data: &Partition,
    stale: &[&Contact],
    progress: &mut Progress,
) -> Result<()> {
    let mutation = Mutation {
        table: table_id,
        key: key.clone(),
        update: data.clone(),
    };
    let mut body = Vec::new();
    encode_batch(std::slice::from_ref(&mutation), &mut body);
    let body = Bytes::from(body);
    let (tx, rx) = std::sync::mpsc::channel::<Result<Bytes>>();
    let mut waiting = 0usize;
    for contact in stale {
        if contact.local {
            c.proxy
                .apply_local(vec![mutation.clone()], Wait::Allowed, None)?;
            continue;
        }
        c.link
            .send(contact.address, Verb::Mutation, body.clone(), &tx, Some);
        waiting += 1;
    }
    drop(tx);
    let deadline = std::time::Instant::now() + c.link.timeout;
    for _ in 0..waiting {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(Ok(_)) => {}
            // A repair not acknowledged in time fails the read, as Cassandra's blocking
            // read repair does.
            _ => {
                return Err(Error::ReadTimeout(crate::consistency::ReadTimeout {
                    consistency: progress.consistency,
                    received: progress.received,
                    block_for: progress.block_for,
                    data_present: true,
                }))
            }
        }
    }
    Ok(())
}
