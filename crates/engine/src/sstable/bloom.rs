//! The per-sstable partition-key bloom filter.
//!
//! A classic (unblocked) bloom filter over `m` bits with `k` probes, sized from the table's
//! `bloom_filter_fp_chance` the textbook way: `m = -n·ln p / ln²2`, `k = round(m/n · ln 2)`.
//! Probes use Cassandra's double hashing, bit `(h1 + i·h2) mod m` for `i in 0..k`, where `h1, h2`
//! are the two 64-bit halves of the partition key's murmur3_x64_128, which the caller already
//! computes for the token, so the filter hashes nothing itself.
//!
//! Invariants: `m == 0` exactly when `k == 0`, and such a filter (asked for with `fp_chance`
//! 1.0) contains everything and costs no memory; otherwise `1 <= k <= MAX_HASHES` and the bit
//! vector holds `m.div_ceil(64)` words. No false negatives, ever.

use crate::error::{CorruptionKind, OptionError};

/// Upper bound on probes per key; beyond this the filter costs more lookups than it saves.
pub const MAX_HASHES: u32 = 32;

/// Upper bound on bits per key (p ≈ 1e-13 already needs only ~62).
const MAX_BITS_PER_KEY: f64 = 64.0;

/// Upper bound on the total size (2^36 bits = 8 GiB), so a silly `expected_items` cannot ask
/// for an impossible allocation.
const MAX_BITS: u64 = 1 << 36;

/// A bloom filter over 128-bit key hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    num_bits: u64,
    hashes: u32,
    words: Vec<u64>,
}

impl BloomFilter {
    /// A filter sized for `expected_items` keys at false-positive chance `fp_chance`, which must
    /// be in `(0, 1]`; 1.0 gives an empty filter that answers "maybe" to everything.
    pub fn new(expected_items: u64, fp_chance: f64) -> Result<Self, OptionError> {
        // Written so that NaN fails too.
        if !(fp_chance > 0.0 && fp_chance <= 1.0) {
            return Err(OptionError::Invalid {
                option: "bloom_filter_fp_chance",
                message: format!(
                    "bloom_filter_fp_chance must be larger than 0 and less than or equal to 1.0 (got {fp_chance})"
                ),
            });
        }
        if fp_chance >= 1.0 {
            return Ok(BloomFilter {
                num_bits: 0,
                hashes: 0,
                words: Vec::new(),
            });
        }
        let n = expected_items.max(1) as f64;
        let ln2 = std::f64::consts::LN_2;
        let bits_per_key = (-fp_chance.ln() / (ln2 * ln2)).clamp(1.0, MAX_BITS_PER_KEY);
        let num_bits = ((n * bits_per_key).ceil() as u64).clamp(64, MAX_BITS);
        let hashes = ((num_bits as f64 / n) * ln2)
            .round()
            .clamp(1.0, MAX_HASHES as f64) as u32;
        Ok(BloomFilter {
            num_bits,
            hashes,
            words: vec![0; num_bits.div_ceil(64) as usize],
        })
    }

    /// Number of bits (0 for the always-true filter).
    pub fn num_bits(&self) -> u64 {
        self.num_bits
    }

    /// Probes per key.
    pub fn num_hashes(&self) -> u32 {
        self.hashes
    }

    fn bit_indexes(&self, (h1, h2): (u64, u64)) -> impl Iterator<Item = u64> + '_ {
        (0..u64::from(self.hashes))
            .map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % self.num_bits)
    }

    /// Adds a key by its hash halves `(h1, h2)`.
    pub fn add(&mut self, hash: (u64, u64)) {
        if self.num_bits == 0 {
            return;
        }
        let (h1, h2) = hash;
        let m = self.num_bits;
        for i in 0..u64::from(self.hashes) {
            let b = h1.wrapping_add(i.wrapping_mul(h2)) % m;
            if let Some(w) = self.words.get_mut((b / 64) as usize) {
                *w |= 1 << (b % 64);
            }
        }
    }

    /// False means the key was certainly never added.
    pub fn may_contain(&self, hash: (u64, u64)) -> bool {
        self.bit_indexes(hash).all(|b| {
            self.words
                .get((b / 64) as usize)
                .is_some_and(|w| w & (1 << (b % 64)) != 0)
        })
    }

    /// Memory this filter holds, including itself.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.words.capacity() * 8
    }

    /// Serialises as `u32 hashes | u64 num_bits | num_bits.div_ceil(64) × u64 words`, all
    /// little-endian. No checksum: the caller's file has one.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(12 + self.words.len() * 8);
        out.extend_from_slice(&self.hashes.to_le_bytes());
        out.extend_from_slice(&self.num_bits.to_le_bytes());
        for w in &self.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// Parses [`BloomFilter::encode`]'s output.
    pub fn decode(bytes: &[u8]) -> Result<Self, CorruptionKind> {
        let (h, rest) = bytes
            .split_first_chunk::<4>()
            .ok_or(CorruptionKind::Truncated)?;
        let (m, rest) = rest
            .split_first_chunk::<8>()
            .ok_or(CorruptionKind::Truncated)?;
        let hashes = u32::from_le_bytes(*h);
        let num_bits = u64::from_le_bytes(*m);
        if (hashes == 0) != (num_bits == 0) || hashes > MAX_HASHES || num_bits > MAX_BITS {
            return Err(CorruptionKind::Invalid("bloom filter header"));
        }
        let n_words = num_bits.div_ceil(64) as usize;
        // num_bits <= MAX_BITS, so this cannot overflow.
        let need = n_words * 8;
        if rest.len() < need {
            return Err(CorruptionKind::Truncated);
        }
        if rest.len() > need {
            return Err(CorruptionKind::Invalid("trailing bytes after bloom filter"));
        }
        let words = rest
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        Ok(BloomFilter {
            num_bits,
            hashes,
            words,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Stand-in for murmur3 halves: splitmix64 of two different seeds.
    fn hash(i: u64) -> (u64, u64) {
        fn mix(mut z: u64) -> u64 {
            z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        (mix(i), mix(i ^ 0xdead_beef_cafe_f00d))
    }

    fn measured_fp(p: f64) -> f64 {
        let n = 100_000u64;
        let mut f = BloomFilter::new(n, p).unwrap();
        for i in 0..n {
            f.add(hash(i));
        }
        for i in 0..n {
            assert!(f.may_contain(hash(i)), "false negative for {i}");
        }
        let probes = 200_000u64;
        let fp = (n..n + probes).filter(|&i| f.may_contain(hash(i))).count();
        fp as f64 / probes as f64
    }

    #[test]
    fn false_positive_rate_close_to_requested() {
        for p in [0.01, 0.1] {
            let r = measured_fp(p);
            println!("bloom p = {p}: measured false-positive rate {r:.4}");
            assert!(r <= 2.0 * p && r >= p / 2.0, "p = {p}: measured {r}");
        }
    }

    #[test]
    fn sizing() {
        let f = BloomFilter::new(1000, 0.01).unwrap();
        // -ln(0.01)/ln²2 = 9.585 bits per key, k = round(9.585 · ln 2) = 7.
        assert_eq!(f.num_bits(), 9586);
        assert_eq!(f.num_hashes(), 7);
        assert!(f.memory_bytes() < 1300);
        let f = BloomFilter::new(0, 0.1).unwrap();
        assert!(f.num_bits() >= 64 && f.num_hashes() >= 1);
        let f = BloomFilter::new(1000, 1e-300).unwrap();
        assert_eq!(f.num_hashes(), MAX_HASHES);
        assert_eq!(f.num_bits(), 64_000);
    }

    #[test]
    fn fp_chance_one_is_always_true() {
        let f = BloomFilter::new(1_000_000, 1.0).unwrap();
        assert_eq!(f.num_bits(), 0);
        assert!(f.may_contain(hash(1)));
        assert!(f.memory_bytes() <= std::mem::size_of::<BloomFilter>());
        let mut buf = Vec::new();
        f.encode(&mut buf);
        assert_eq!(BloomFilter::decode(&buf).unwrap(), f);
    }

    #[test]
    fn bad_fp_chance() {
        for p in [0.0, -0.5, 1.5, f64::NAN] {
            let e = BloomFilter::new(10, p).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("bloom_filter_fp_chance must be larger than 0"),
                "{e}"
            );
        }
    }

    #[test]
    fn encode_decode() {
        let mut f = BloomFilter::new(5000, 0.05).unwrap();
        for i in 0..5000 {
            f.add(hash(i));
        }
        let mut buf = Vec::new();
        f.encode(&mut buf);
        let g = BloomFilter::decode(&buf).unwrap();
        assert_eq!(g, f);
        assert!((0..5000).all(|i| g.may_contain(hash(i))));
        for cut in [0, 3, 11, 12, buf.len() - 1] {
            assert!(BloomFilter::decode(&buf[..cut]).is_err());
        }
        let mut longer = buf.clone();
        longer.push(0);
        assert!(BloomFilter::decode(&longer).is_err());
        // Inconsistent or absurd headers.
        let mut bad = buf.clone();
        bad[0..4].copy_from_slice(&0u32.to_le_bytes());
        assert!(BloomFilter::decode(&bad).is_err());
        let mut bad = buf.clone();
        bad[4..12].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(BloomFilter::decode(&bad).is_err());
    }
}
