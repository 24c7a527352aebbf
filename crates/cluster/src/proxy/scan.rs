//! The coordinator's range read: a token range scanned across the ring, piece by piece.
//!
//! The scan's range is cut at the ring's tokens into pieces, in token order; each piece's
//! replicas are its end token's, and the level is checked for each before anything is read.
//! A piece whose only contact is this node is scanned locally and lazily (a node alone always
//! scans this way). Otherwise the piece is read in pages: every contact (this node first, then
//! its data center) answers up to [`PAGE`] partitions as data from where the last page
//! stopped (`RANGE_DATA`), and a page is complete up to the smallest last key among the
//! contacts that have more — past it a contact may still hold partitions the others lack.
//! Up to that key, each partition is reconciled across the contacts, written back to the
//! contacts whose copy differed (blocking read repair), and its live rows answered; the next
//! page starts just after it. No digests: every contact sends data, as Cassandra's range
//! reads do.
//!
//! Wire format of `RANGE_DATA`: table id (16 bytes LE), start position (0 + token i64 LE, 1 +
//! key after which, 2 + key from which), end token (i64 LE), page size (u32 LE), the read
//! command as a single-partition read has it. The answer: 1 if partitions remain past the
//! last one, else 0, then the partitions as mutations (the commitlog's encoding).

use super::link::Link;
use super::read::{self, Contact, Coordination, Progress};
use crate::consistency::Consistency;
use crate::error::{Error, Result};
use crate::messaging::Messaging;
use crate::messaging::Verb;
use bytes::Bytes;
use cairn_engine::model::codec::{put_bytes, DecodeResult, Decoder};
use cairn_engine::model::mutation::{decode_batch, encode_batch};
use cairn_engine::model::{DecoratedKey, Mutation, Partition, PartitionPos, Token};
use cairn_engine::read::ScanIter;
use cairn_engine::table::Table;
use cairn_engine::{PartitionResult, ReadCommand};
use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Partitions a contact answers per page.
pub(super) const PAGE: usize = 128;

/// One piece of a scan: a range of tokens whose replicas are the same.
pub(super) struct Piece {
    /// Where it starts.
    pub start: PartitionPos,
    /// Its last token (inclusive).
    pub end: Token,
    /// The replicas it reads from (this node first); `local_only` when that is only this
    /// node.
    pub contacts: Vec<Contact>,
}

impl Piece {
    fn local_only(&self) -> bool {
        matches!(self.contacts.as_slice(), [only] if only.local)
    }
}

/// The pieces `(start, end]` of a ring given by its sorted tokens, clipped to a scan from
/// `start` to `end` (inclusive), in token order: each `(first token, last token)` of a piece
/// and the token whose replicas hold it.
pub(super) fn cut(
    ring_tokens: &[Token],
    start: &PartitionPos,
    end: Token,
) -> Vec<(PartitionPos, Token, Token)> {
    let Some(&first) = ring_tokens.first() else {
        return Vec::new();
    };
    // (exclusive start, inclusive end, owner token): the wrapping range split at the
    // minimum token.
    let mut ranges: Vec<(Option<Token>, Token, Token)> = Vec::with_capacity(ring_tokens.len() + 1);
    ranges.push((None, first, first));
    for w in ring_tokens.windows(2) {
        ranges.push((Some(w[0]), w[1], w[1]));
    }
    if let Some(&last) = ring_tokens.last() {
        if last < Token(i64::MAX) {
            ranges.push((Some(last), Token(i64::MAX), first));
        }
    }
    let start_token = match start {
        PartitionPos::TokenStart(t) => *t,
        PartitionPos::After(k) | PartitionPos::At(k) => k.token,
    };
    let mut out = Vec::new();
    for (after, last, owner) in ranges {
        if last < start_token || after.is_some_and(|a| a >= end) {
            continue;
        }
        let piece_start = match after {
            Some(a) if a >= start_token => PartitionPos::TokenStart(Token(a.0 + 1)),
            _ => start.clone(),
        };
        out.push((piece_start, last.min(end), owner));
    }
    out
}

/// A range request's body.
fn encode_request(
    table: u128,
    from: &PartitionPos,
    end: Token,
    cmd: &ReadCommand,
    max: usize,
) -> Bytes {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&table.to_le_bytes());
    match from {
        PartitionPos::TokenStart(t) => {
            out.push(0);
            out.extend_from_slice(&t.0.to_le_bytes());
        }
        PartitionPos::After(k) => {
            out.push(1);
            put_bytes(&mut out, &k.key);
        }
        PartitionPos::At(k) => {
            out.push(2);
            put_bytes(&mut out, &k.key);
        }
    }
    out.extend_from_slice(&end.0.to_le_bytes());
    out.extend_from_slice(&u32::try_from(max).unwrap_or(u32::MAX).to_le_bytes());
    read::put_command(&mut out, cmd);
    Bytes::from(out)
}

/// A range request from its body: table, start, end token, page size, command.
pub(super) fn decode_request(
    body: &Bytes,
) -> std::result::Result<(u128, PartitionPos, Token, usize, ReadCommand), String> {
    let parse = || -> DecodeResult<_> {
        let mut d = Decoder::from_bytes(body);
        let table = read::table_id(&mut d)?;
        let from = match d.u8()? {
            0 => PartitionPos::TokenStart(Token(d.u64_le()? as i64)),
            1 => PartitionPos::After(DecoratedKey::new(read::bytes(&mut d)?)),
            _ => PartitionPos::At(DecoratedKey::new(read::bytes(&mut d)?)),
        };
        let end = Token(d.u64_le()? as i64);
        let max = d.u32_le()? as usize;
        let cmd = read::command(&mut d)?;
        Ok((table, from, end, max, cmd))
    };
    parse().map_err(|e| format!("undecodable range request: {e:?}"))
}

/// A replica's answer: its partitions and whether more remain.
pub(super) fn encode_answer(
    table: u128,
    parts: Vec<(DecoratedKey, Partition)>,
    more: bool,
) -> Bytes {
    let mutations: Vec<Mutation> = parts
        .into_iter()
        .map(|(key, update)| Mutation { table, key, update })
        .collect();
    let mut out = vec![u8::from(more)];
    encode_batch(&mutations, &mut out);
    Bytes::from(out)
}

/// A page from one contact: its partitions by key, and whether it has more.
type Page = (BTreeMap<DecoratedKey, Partition>, bool);

fn decode_answer(peer: IpAddr, verb: Verb, answer: Result<Bytes>) -> Result<Page> {
    let answer = answer?;
    let remote = |message: String| Error::Remote {
        peer,
        verb: verb.name(),
        message,
    };
    let (&more, rest) = answer
        .split_first()
        .ok_or_else(|| remote("an empty range answer".into()))?;
    let muts = decode_batch(&answer.slice(1..1 + rest.len()))
        .map_err(|e| remote(format!("undecodable range answer: {e:?}")))?;
    Ok((
        muts.into_iter().map(|m| (m.key, m.update)).collect(),
        more != 0,
    ))
}

/// What a coordinated scan reads with.
pub(super) struct Reach<'a> {
    /// The table scanned.
    pub table: Arc<Table>,
    /// The proxy (repairs of the local replica, see `read::Coordination::proxy`).
    pub proxy: &'a super::StorageProxy,
    /// Internode messaging.
    pub messaging: &'a Arc<Messaging>,
    /// The runtime messages are sent from.
    pub runtime: &'a tokio::runtime::Handle,
    /// `range_request_timeout`.
    pub timeout: std::time::Duration,
    /// Counts the partitions repaired.
    pub repairs: &'a AtomicU64,
}

impl Reach<'_> {
    /// How a piece is read: its messages traced to `trace` when the scan is traced.
    fn coordination<'b>(&'b self, trace: Option<&'b cairn_engine::Trace>) -> Coordination<'b> {
        Coordination {
            table: &self.table,
            proxy: self.proxy,
            link: Link {
                messaging: self.messaging,
                runtime: self.runtime,
                timeout: self.timeout,
                trace,
            },
        }
    }
}

/// A coordinated scan's partitions, in token order (see the module doc).
pub struct RingScan<'a> {
    reach: Reach<'a>,
    cmd: ReadCommand,
    cl: Consistency,
    pieces: VecDeque<Piece>,
    /// The piece being read: scanned locally, or paged from `from`.
    local: Option<ScanIter>,
    from: Option<PartitionPos>,
    ready: VecDeque<PartitionResult>,
    done: bool,
}

impl<'a> RingScan<'a> {
    pub(super) fn new(
        reach: Reach<'a>,
        cmd: ReadCommand,
        cl: Consistency,
        pieces: Vec<Piece>,
    ) -> RingScan<'a> {
        RingScan {
            reach,
            cmd,
            cl,
            pieces: pieces.into(),
            local: None,
            from: None,
            ready: VecDeque::new(),
            done: false,
        }
    }

    fn step(&mut self) -> Result<Option<PartitionResult>> {
        loop {
            if let Some(p) = self.ready.pop_front() {
                return Ok(Some(p));
            }
            if let Some(scan) = self.local.as_mut() {
                match scan.next() {
                    Some(p) => return Ok(Some(p?)),
                    None => self.local = None,
                }
            }
            let next = self
                .pieces
                .front()
                .map(|p| (p.local_only(), p.start.clone(), p.end));
            match next {
                Some((local_only, start, end)) if self.from.is_none() => {
                    if local_only {
                        let t = &self.reach.table;
                        self.local = Some(Table::scan(t, start, Some(end), self.cmd.clone()));
                        self.pieces.pop_front();
                        continue;
                    }
                    self.from = Some(start);
                }
                Some(_) => {}
                None => return Ok(None),
            }
            if self.from.is_some() {
                self.page()?;
            }
        }
    }

    /// Reads one page of the current piece from its contacts, reconciles, repairs, and
    /// queues its live partitions.
    fn page(&mut self) -> Result<()> {
        let (Some(piece), Some(from)) = (self.pieces.front(), self.from.clone()) else {
            return Ok(());
        };
        let (end, contacts) = (piece.end, piece.contacts.clone());
        let trace = self.cmd.trace.clone();
        let c = &self.reach.coordination(trace.as_ref());
        let cmd = &self.cmd;
        let table_id = c.table.schema().id;
        let mut progress = Progress {
            consistency: self.cl,
            received: 0,
            block_for: contacts.len(),
            data_present: false,
        };
        let body = encode_request(table_id, &from, end, cmd, PAGE);
        let pages: Vec<Page> = read::gather_with(
            c,
            &contacts,
            &mut progress,
            |_| (Verb::RangeData, body.clone()),
            |_| {
                let (parts, more) = c.table.scan_data(&from, Some(end), cmd, PAGE)?;
                Ok((parts.into_iter().collect(), more))
            },
            decode_answer,
        )?;
        // Complete up to the smallest last key of the contacts that have more.
        let frontier = pages
            .iter()
            .filter(|(_, more)| *more)
            .filter_map(|(parts, _)| parts.keys().next_back().cloned())
            .min();
        let mut keys: Vec<&DecoratedKey> =
            pages.iter().flat_map(|(parts, _)| parts.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.retain(|k| frontier.as_ref().is_none_or(|f| *k <= f));
        let mut repaired = 0;
        let mut ready = Vec::new();
        for key in keys {
            let copies: Vec<Option<&Partition>> =
                pages.iter().map(|(parts, _)| parts.get(key)).collect();
            let mut merged: Option<Partition> = None;
            for p in copies.iter().flatten() {
                match merged.as_mut() {
                    Some(m) => m.merge((*p).clone()),
                    None => merged = Some((*p).clone()),
                }
            }
            let Some(merged) = merged else { continue };
            let newest = read::digest(table_id, key, Some(&merged));
            let stale: Vec<&Contact> = contacts
                .iter()
                .zip(&copies)
                .filter(|(_, copy)| read::digest(table_id, key, **copy) != newest)
                .map(|(contact, _)| contact)
                .collect();
            if !stale.is_empty() {
                read::repair(c, table_id, key, &merged, &stale, &mut progress)?;
                repaired += 1;
            }
            if let Some(live) = c.table.live(key, merged, cmd)? {
                ready.push(live);
            }
        }
        self.reach.repairs.fetch_add(repaired, Ordering::Relaxed);
        self.ready.extend(ready);
        match frontier {
            Some(f) => self.from = Some(PartitionPos::After(f)),
            None => {
                self.from = None;
                self.pieces.pop_front();
            }
        }
        Ok(())
    }
}

impl Iterator for RingScan<'_> {
    type Item = Result<PartitionResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(p)) => Some(Ok(p)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn t(v: i64) -> Token {
        Token(v)
    }

    #[test]
    fn a_scan_is_cut_at_the_ring_tokens_in_token_order() {
        let ring = [t(-100), t(0), t(100)];
        let all = cut(&ring, &PartitionPos::TokenStart(Token::MIN), t(i64::MAX));
        let shape: Vec<(i64, i64, i64)> = all
            .iter()
            .map(|(s, e, o)| {
                let PartitionPos::TokenStart(s) = s else {
                    panic!()
                };
                (s.0, e.0, o.0)
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (i64::MIN, -100, -100),
                (-99, 0, 0),
                (1, 100, 100),
                (101, i64::MAX, -100)
            ]
        );
        // Clipped: from token 50 to token 120.
        let some = cut(&ring, &PartitionPos::TokenStart(t(50)), t(120));
        let shape: Vec<(i64, i64)> = some
            .iter()
            .map(|(s, e, _)| {
                let PartitionPos::TokenStart(s) = s else {
                    panic!()
                };
                (s.0, e.0)
            })
            .collect();
        assert_eq!(shape, vec![(50, 100), (101, 120)]);
    }
}
