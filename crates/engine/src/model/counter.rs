//! Counter cells' values: a set of shards, one per node that ever led an increment of the
//! counter — Cassandra's `CounterContext` and ScyllaDB's counter shards, in Cairn's encoding.
//!
//! A shard is `(counter id, clock, value)`: the counter id is the leading node's host id (16
//! bytes), the clock counts that node's increments of this cell, the value is the running
//! sum of them. A counter's CQL value is the sum of its shards' values (wrapping, as Java's
//! `long` arithmetic in Cassandra's `CounterContext.total`).
//!
//! Invariants of an encoded context ([`is_valid`]): `SHARD_LEN` bytes per shard, shards in
//! strictly increasing counter id order. Two versions of a context [`merge`] by taking, per
//! counter id, the shard with the higher clock (a tie: the higher value) — never by timestamp
//! — so applying the same shard twice (a commitlog replayed after a crash, a write repeated to
//! a replica) changes nothing, and merging is commutative, associative and idempotent.
//!
//! Only a node's own shard changes: the node leading an increment reads its shard under the
//! partition's lock and writes the *resulting* shard (clock advanced, value plus the delta),
//! never the delta (`cairn_cluster::proxy`'s counter write).

use bytes::{BufMut, Bytes, BytesMut};
use std::cmp::Ordering;

/// Bytes per shard: counter id (16), clock (8, big-endian), value (8, big-endian).
pub const SHARD_LEN: usize = 32;

/// One node's part of a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    /// The node's host id.
    pub id: [u8; 16],
    /// How many times (at least) the node changed its shard; higher is newer.
    pub clock: i64,
    /// The node's running sum.
    pub value: i64,
}

impl Shard {
    fn put(&self, out: &mut BytesMut) {
        out.put_slice(&self.id);
        out.put_i64(self.clock);
        out.put_i64(self.value);
    }

    /// Whether `self` wins over `other` (same counter id): higher clock, then higher value.
    fn supersedes(&self, other: &Shard) -> bool {
        (self.clock, self.value) > (other.clock, other.value)
    }
}

/// A context holding exactly `shards` (sorted by id here).
pub fn encode(shards: &[Shard]) -> Bytes {
    let mut sorted = shards.to_vec();
    sorted.sort_by_key(|s| s.id);
    sorted.dedup_by(|a, b| a.id == b.id);
    let mut out = BytesMut::with_capacity(sorted.len() * SHARD_LEN);
    for s in &sorted {
        s.put(&mut out);
    }
    out.freeze()
}

/// The shards of a context, in counter id order. A trailing partial shard (never written by
/// [`encode`]; refused when decoded from disk, see [`is_valid`]) is ignored.
pub fn shards(ctx: &[u8]) -> impl Iterator<Item = Shard> + '_ {
    ctx.chunks_exact(SHARD_LEN).map(|c| {
        let mut id = [0u8; 16];
        id.copy_from_slice(&c[..16]);
        let mut clock = [0u8; 8];
        clock.copy_from_slice(&c[16..24]);
        let mut value = [0u8; 8];
        value.copy_from_slice(&c[24..32]);
        Shard {
            id,
            clock: i64::from_be_bytes(clock),
            value: i64::from_be_bytes(value),
        }
    })
}

/// Whether `ctx` is a well-formed context (see the module doc).
pub fn is_valid(ctx: &[u8]) -> bool {
    ctx.len().is_multiple_of(SHARD_LEN)
        && shards(ctx)
            .zip(shards(ctx).skip(1))
            .all(|(a, b)| a.id < b.id)
}

/// The counter's value: the sum of its shards' values.
pub fn total(ctx: &[u8]) -> i64 {
    shards(ctx).fold(0i64, |sum, s| sum.wrapping_add(s.value))
}

/// The shard of counter id `id`, if the context has one.
pub fn shard_of(ctx: &[u8], id: &[u8; 16]) -> Option<Shard> {
    shards(ctx).find(|s| &s.id == id)
}

/// Two versions of a counter merged: per counter id, the shard that [supersedes](Shard)
/// the other's. Returns `a` or `b` itself (no copy) when it already is the merge.
pub fn merge(a: &Bytes, b: &Bytes) -> Bytes {
    let mut out: Vec<Shard> = Vec::new();
    let (mut a_wins_all, mut b_wins_all) = (true, true);
    let mut xs = shards(a).peekable();
    let mut ys = shards(b).peekable();
    loop {
        let next = match (xs.peek(), ys.peek()) {
            (Some(x), Some(y)) => match x.id.cmp(&y.id) {
                Ordering::Less => {
                    b_wins_all = false;
                    xs.next()
                }
                Ordering::Greater => {
                    a_wins_all = false;
                    ys.next()
                }
                Ordering::Equal => {
                    let (x, y) = (*x, *y);
                    xs.next();
                    ys.next();
                    if y.supersedes(&x) {
                        a_wins_all = false;
                        Some(y)
                    } else {
                        if x.supersedes(&y) {
                            b_wins_all = false;
                        }
                        Some(x)
                    }
                }
            },
            (Some(_), None) => {
                b_wins_all = false;
                xs.next()
            }
            (None, Some(_)) => {
                a_wins_all = false;
                ys.next()
            }
            (None, None) => break,
        };
        if let Some(s) = next {
            out.push(s);
        }
    }
    if a_wins_all {
        return a.clone();
    }
    if b_wins_all {
        return b.clone();
    }
    encode(&out)
}

/// `ctx` with the shard of `shard.id` replaced by `shard` (added when absent).
pub fn with_shard(ctx: &[u8], shard: Shard) -> Bytes {
    let mut all: Vec<Shard> = shards(ctx).filter(|s| s.id != shard.id).collect();
    all.push(shard);
    encode(&all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> [u8; 16] {
        [n; 16]
    }

    fn ctx(shards: &[(u8, i64, i64)]) -> Bytes {
        let s: Vec<Shard> = shards
            .iter()
            .map(|&(n, clock, value)| Shard {
                id: id(n),
                clock,
                value,
            })
            .collect();
        encode(&s)
    }

    /// Each case: two contexts, their merge (either order), its total.
    #[test]
    fn merge_table() {
        type S = &'static [(u8, i64, i64)];
        let cases: &[(S, S, S, i64)] = &[
            // Disjoint ids: both kept.
            (&[(1, 1, 5)], &[(2, 1, 7)], &[(1, 1, 5), (2, 1, 7)], 12),
            // Same id: the higher clock wins, whatever the values.
            (&[(1, 3, 2)], &[(1, 2, 100)], &[(1, 3, 2)], 2),
            // Same clock: the higher value wins.
            (&[(1, 3, 2)], &[(1, 3, 9)], &[(1, 3, 9)], 9),
            // Equal shards: idempotent.
            (&[(1, 4, 4)], &[(1, 4, 4)], &[(1, 4, 4)], 4),
            // Mixed: per id.
            (
                &[(1, 5, 10), (2, 1, 1), (4, 2, -3)],
                &[(1, 4, 8), (2, 2, 3), (3, 1, 6)],
                &[(1, 5, 10), (2, 2, 3), (3, 1, 6), (4, 2, -3)],
                16,
            ),
            // Empty sides.
            (&[], &[(1, 1, 1)], &[(1, 1, 1)], 1),
            (&[], &[], &[], 0),
            // Sums wrap as Java longs do.
            (
                &[(1, 1, i64::MAX)],
                &[(2, 1, 1)],
                &[(1, 1, i64::MAX), (2, 1, 1)],
                i64::MIN,
            ),
        ];
        for (a, b, want, sum) in cases {
            let (a, b, want) = (ctx(a), ctx(b), ctx(want));
            assert_eq!(merge(&a, &b), want, "{a:?} + {b:?}");
            assert_eq!(merge(&b, &a), want, "{b:?} + {a:?}");
            assert_eq!(merge(&want, &a), want, "idempotent");
            assert_eq!(total(&want), *sum);
            assert!(is_valid(&want));
        }
    }

    #[test]
    fn associative() {
        let a = ctx(&[(1, 2, 2), (3, 1, 1)]);
        let b = ctx(&[(1, 3, 5), (2, 1, 4)]);
        let c = ctx(&[(2, 2, 6), (3, 1, 0)]);
        assert_eq!(merge(&merge(&a, &b), &c), merge(&a, &merge(&b, &c)));
    }

    #[test]
    fn shard_lookup_and_replace() {
        let c = ctx(&[(1, 2, 2), (3, 1, 1)]);
        assert_eq!(shard_of(&c, &id(3)).map(|s| s.value), Some(1));
        assert_eq!(shard_of(&c, &id(2)), None);
        let next = Shard {
            id: id(2),
            clock: 1,
            value: 9,
        };
        let d = with_shard(&c, next);
        assert_eq!(total(&d), 12);
        assert!(is_valid(&d));
    }

    #[test]
    fn malformed_contexts_are_invalid() {
        assert!(!is_valid(&[0u8; 31]));
        let mut unsorted = ctx(&[(2, 1, 1)]).to_vec();
        unsorted.extend_from_slice(&ctx(&[(1, 1, 1)]));
        assert!(!is_valid(&unsorted));
        assert!(is_valid(&[]));
    }
}
