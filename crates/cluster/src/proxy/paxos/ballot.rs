//! Paxos ballots: the proposal numbers of a conditional write's round.
//!
//! A ballot is a time in microseconds and the node that made it, ordered by time then node,
//! so two coordinators never make equal ballots and a later round outranks an earlier one.
//! The time doubles as the write timestamp of what the round commits (as Cassandra's
//! timeuuid ballots do), so [`Ballots::next`] never goes back in time on one node and always
//! lands above every ballot the round has seen: what a round commits is newer than what the
//! previous round on the same partition committed.

use std::sync::atomic::{AtomicI64, Ordering};

/// A Paxos ballot: `micros` first, then `node`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Ballot {
    /// When it was made (µs since the epoch); also the timestamp of what it commits.
    pub micros: i64,
    /// Who made it (the coordinator's host id, folded to 64 bits).
    pub node: u64,
}

/// Bytes of a ballot on the wire and on disk.
pub const BALLOT_BYTES: usize = 16;

impl Ballot {
    /// The ballot no round uses: below every real one.
    pub const NONE: Ballot = Ballot { micros: 0, node: 0 };

    /// Big-endian with the time's sign bit flipped, so that byte order is ballot order (the
    /// state table breaks timestamp ties by value).
    pub fn to_bytes(self) -> [u8; BALLOT_BYTES] {
        let mut out = [0u8; BALLOT_BYTES];
        out[..8].copy_from_slice(&((self.micros as u64) ^ (1 << 63)).to_be_bytes());
        out[8..].copy_from_slice(&self.node.to_be_bytes());
        out
    }

    /// A ballot from its first [`BALLOT_BYTES`] bytes (`None` if fewer).
    pub fn from_bytes(b: &[u8]) -> Option<Ballot> {
        let micros = u64::from_be_bytes(b.get(..8)?.try_into().ok()?) ^ (1 << 63);
        let node = u64::from_be_bytes(b.get(8..BALLOT_BYTES)?.try_into().ok()?);
        Some(Ballot {
            micros: micros as i64,
            node,
        })
    }
}

/// One node's ballot maker.
#[derive(Debug)]
pub struct Ballots {
    node: u64,
    last: AtomicI64,
}

impl Ballots {
    /// Ballots of the node whose host id is `host_id`.
    pub fn new(host_id: [u8; 16]) -> Ballots {
        let (hi, lo) = host_id.split_at(8);
        let fold = |b: &[u8]| b.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x));
        Ballots {
            node: fold(hi) ^ fold(lo),
            last: AtomicI64::new(0),
        }
    }

    /// A new ballot: now, but above the last one made here and above `above`.
    pub fn next(&self, above: Ballot) -> Ballot {
        let now = now_micros();
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let micros = now.max(last + 1).max(above.micros + 1);
            match self.last.compare_exchange_weak(
                last,
                micros,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Ballot {
                        micros,
                        node: self.node,
                    }
                }
                Err(seen) => last = seen,
            }
        }
    }
}

fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_order_is_ballot_order() {
        let ballots = [
            Ballot {
                micros: -5,
                node: 9,
            },
            Ballot::NONE,
            Ballot { micros: 0, node: 1 },
            Ballot {
                micros: 1_700_000_000_000_000,
                node: 3,
            },
            Ballot {
                micros: 1_700_000_000_000_000,
                node: u64::MAX,
            },
        ];
        for a in ballots {
            assert_eq!(Ballot::from_bytes(&a.to_bytes()), Some(a));
            for b in ballots {
                assert_eq!(a.cmp(&b), a.to_bytes().cmp(&b.to_bytes()), "{a:?} {b:?}");
            }
        }
        assert_eq!(Ballot::from_bytes(&[1, 2, 3]), None);
    }

    #[test]
    fn ballots_rise_above_what_was_seen() {
        let ballots = Ballots::new([7; 16]);
        let a = ballots.next(Ballot::NONE);
        let b = ballots.next(Ballot::NONE);
        assert!(b > a && b.micros > a.micros);
        let far = Ballot {
            micros: a.micros + 10_000_000,
            node: 1,
        };
        let c = ballots.next(far);
        assert!(c > far && c.micros == far.micros + 1);
        assert!(ballots.next(Ballot::NONE) > c);
    }
}
