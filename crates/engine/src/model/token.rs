//! Murmur3Partitioner tokens and the composite partition-key encoding.
//!
//! A partition's place on the ring is `h1` of Cassandra's `MurmurHash.hash3_x64_128` (seed 0)
//! over the serialized partition key. Cassandra's implementation differs from the reference
//! MurmurHash3 in one way that matters for compatibility: the 1-15 byte *tail* is read as
//! signed Java bytes, so every tail byte is sign-extended before it is shifted into place. A
//! "correct" MurmurHash3 therefore puts most keys on the wrong node; we reproduce the quirk.
//!
//! Invariants:
//! - `token_of` returns [`Token::MIN`] for the empty key only, as Cassandra's
//!   `Murmur3Partitioner.getToken` does: Cassandra reserves `Long.MIN_VALUE` as the minimum
//!   token, so a hash equal to it is mapped to `Long.MAX_VALUE`. Tables refuse empty
//!   partition keys; a materialized view keyed by a base regular column may hold one (an
//!   empty text), which scans then return first.
//! - A composite partition key (2+ columns) is hashed in its composite encoding: per component
//!   a u16 big-endian length, the bytes, and one 0x00 byte. A single-column key is its raw value.

use crate::error::{Error, Result};
use bytes::Bytes;
use std::fmt;

/// A Murmur3Partitioner token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token(pub i64);

impl Token {
    /// The smallest token (`Long.MIN_VALUE`), the empty key's (no other key hashes to it).
    pub const MIN: Token = Token(i64::MIN);
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// Cassandra's `MurmurHash.hash3_x64_128`, including its signed tail-byte quirk.
///
/// Returns `(h1, h2)`; the token is `h1`.
pub fn murmur3_x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    let mut h1 = seed;
    let mut h2 = seed;

    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let (lo, hi) = block.split_at(8);
        let mut k1 = u64::from_le_bytes(lo.try_into().unwrap_or([0; 8]));
        let mut k2 = u64::from_le_bytes(hi.try_into().unwrap_or([0; 8]));

        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1.rotate_left(27).wrapping_add(h2);
        h1 = h1.wrapping_mul(5).wrapping_add(0x52dc_e729);

        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
        h2 = h2.rotate_left(31).wrapping_add(h1);
        h2 = h2.wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }

    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k1: u64 = 0;
        let mut k2: u64 = 0;
        for (i, &b) in tail.iter().enumerate() {
            // The quirk: Java's `(long) key.get(i)` sign-extends the byte, so a byte >= 0x80
            // sets every bit above its own position too.
            let v = b as i8 as i64 as u64;
            if i < 8 {
                k1 ^= v << (i * 8);
            } else {
                k2 ^= v << ((i - 8) * 8);
            }
        }
        if tail.len() > 8 {
            k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
            h2 ^= k2;
        }
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
    }

    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

/// Token of a serialized partition key (single value or composite encoding).
pub fn token_of(key: &[u8]) -> Token {
    if key.is_empty() {
        return Token::MIN;
    }
    let (h1, _) = murmur3_x64_128(key, 0);
    let t = h1 as i64;
    // Murmur3Partitioner.normalize: Long.MIN_VALUE is the ring's minimum token, never a key's.
    Token(if t == i64::MIN { i64::MAX } else { t })
}

/// Serialized partition key from its column values: a single value is used as is; two or
/// more are each written as u16 BE length, bytes, 0x00.
///
/// A component longer than 65535 bytes cannot be represented; its length is truncated to
/// 16 bits exactly as Cassandra's `CompositeType.build` would overflow, so callers must
/// reject such values beforehand (the CQL layer does: partition key components are limited
/// to 64 KiB).
pub fn composite_partition_key(components: &[&[u8]]) -> Bytes {
    match components {
        [single] => Bytes::copy_from_slice(single),
        _ => {
            let total: usize = components.iter().map(|c| c.len() + 3).sum();
            let mut out = Vec::with_capacity(total);
            for c in components {
                out.extend_from_slice(&(c.len() as u16).to_be_bytes());
                out.extend_from_slice(c);
                out.push(0);
            }
            Bytes::from(out)
        }
    }
}

fn bad(reason: &'static str) -> Error {
    Error::InvalidValue {
        type_name: "composite partition key",
        reason,
    }
}

/// Inverse of [`composite_partition_key`] for a key of `n` columns.
pub fn split_composite_partition_key(key: &[u8], n: usize) -> Result<Vec<Bytes>> {
    if n == 1 {
        return Ok(vec![Bytes::copy_from_slice(key)]);
    }
    let mut out = Vec::with_capacity(n);
    let mut rest = key;
    for _ in 0..n {
        let len_bytes: [u8; 2] = rest
            .get(..2)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| bad("truncated component length"))?;
        let len = u16::from_be_bytes(len_bytes) as usize;
        let body = rest
            .get(2..2 + len)
            .ok_or_else(|| bad("truncated component"))?;
        match rest.get(2 + len) {
            Some(0) => {}
            Some(_) => return Err(bad("component not followed by 0x00")),
            None => return Err(bad("missing end-of-component byte")),
        }
        out.push(Bytes::copy_from_slice(body));
        rest = rest.get(3 + len..).unwrap_or_default();
    }
    if !rest.is_empty() {
        return Err(bad("bytes after the last component"));
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Reference MurmurHash3_x64_128 tail handling (unsigned bytes), to show the quirk matters.
    fn naive_h1(data: &[u8]) -> u64 {
        let mut h1: u64 = 0;
        let mut h2: u64 = 0;
        let mut blocks = data.chunks_exact(16);
        for block in &mut blocks {
            let mut k1 = u64::from_le_bytes(block[..8].try_into().unwrap());
            let mut k2 = u64::from_le_bytes(block[8..].try_into().unwrap());
            k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
            h1 ^= k1;
            h1 = h1
                .rotate_left(27)
                .wrapping_add(h2)
                .wrapping_mul(5)
                .wrapping_add(0x52dc_e729);
            k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
            h2 ^= k2;
            h2 = h2
                .rotate_left(31)
                .wrapping_add(h1)
                .wrapping_mul(5)
                .wrapping_add(0x3849_5ab5);
        }
        let tail = blocks.remainder();
        let (mut k1, mut k2) = (0u64, 0u64);
        for (i, &b) in tail.iter().enumerate() {
            if i < 8 {
                k1 ^= (b as u64) << (i * 8);
            } else {
                k2 ^= (b as u64) << ((i - 8) * 8);
            }
        }
        if tail.len() > 8 {
            h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        }
        if !tail.is_empty() {
            h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        }
        let len = data.len() as u64;
        h1 ^= len;
        h2 ^= len;
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        h1 = fmix(h1);
        h2 = fmix(h2);
        h1.wrapping_add(h2)
    }

    #[test]
    fn golden_tokens() {
        // Vectors from the scylla-rust-driver partitioner tests (computed by Scylla/Cassandra).
        for (key, token) in [
            ("test", -6017608668500074083i64),
            ("xd", 4507812186440344727),
            ("primary_key", -1632642444691073360),
            ("kremówki", 4354931215268080151),
        ] {
            assert_eq!(token_of(key.as_bytes()), Token(token), "key {key:?}");
        }
    }

    #[test]
    fn golden_composite_token() {
        // (int 10, text '20') -> token(id1, id2) as reported by cqlsh (CqlSharp's token tests).
        let key = composite_partition_key(&[&10i32.to_be_bytes(), b"20"]);
        assert_eq!(token_of(&key), Token(-9026262514124674157));
    }

    #[test]
    fn empty_key_has_the_minimum_token() {
        assert_eq!(token_of(b""), Token::MIN);
    }

    #[test]
    fn signed_tail_quirk_matters() {
        // ASCII tails agree with the reference algorithm...
        assert_eq!(murmur3_x64_128(b"test", 0).0, naive_h1(b"test"));
        assert_eq!(
            murmur3_x64_128(b"0123456789abcdefxyz", 0).0,
            naive_h1(b"0123456789abcdefxyz")
        );
        // ...tails with a byte >= 0x80 do not: the sign extension smears 1-bits above it.
        // Only a high byte in the top lane position (tail byte 7) loses its extension bits
        // off the end of the 64-bit word, so there both agree.
        for len in 1..=15 {
            for high in [0x80u8, 0xFF] {
                let mut data = vec![b'a'; 16 + len];
                data[16 + len - 1] = high;
                let (ours, naive) = (murmur3_x64_128(&data, 0).0, naive_h1(&data));
                if len == 8 {
                    assert_eq!(ours, naive, "tail length {len}");
                } else {
                    assert_ne!(ours, naive, "tail length {len}");
                }
            }
        }
        // Bytes >= 0x80 inside full 16-byte blocks are read unsigned, as in the reference.
        let block = [0xF0u8; 32];
        assert_eq!(murmur3_x64_128(&block, 0).0, naive_h1(&block));
    }

    #[test]
    fn composite_round_trip() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..500 {
            let n = rng.gen_range(1..5);
            let comps: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let len = rng.gen_range(0..40);
                    (0..len).map(|_| rng.gen()).collect()
                })
                .collect();
            let refs: Vec<&[u8]> = comps.iter().map(|c| c.as_slice()).collect();
            let key = composite_partition_key(&refs);
            let back = split_composite_partition_key(&key, n).unwrap();
            assert_eq!(back.iter().map(|b| b.to_vec()).collect::<Vec<_>>(), comps);
        }
        assert_eq!(
            composite_partition_key(&[b"ab", b""]).as_ref(),
            &[0, 2, b'a', b'b', 0, 0, 0, 0]
        );
    }

    #[test]
    fn composite_split_rejects_garbage() {
        assert!(split_composite_partition_key(&[0, 2, b'a'], 2).is_err());
        assert!(split_composite_partition_key(&[0, 1, b'a', 1, 0, 0, 0], 2).is_err());
        assert!(split_composite_partition_key(&[0, 1, b'a', 0, 0, 0, 0, 9], 2).is_err());
        assert!(split_composite_partition_key(&[0, 1, b'a', 0], 2).is_err());
    }
}
