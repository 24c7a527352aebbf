//! Frame body compression (spec §5), chosen by STARTUP's `COMPRESSION` option.
//!
//! * `lz4`: a 4-byte **big-endian** uncompressed length, then one raw LZ4 block (this is the
//!   layout the drivers use; sstable LZ4 chunks use a little-endian prefix instead).
//! * `snappy`: one raw snappy block (its own varint length header).
//!
//! Invariants:
//! * Only headers are trusted to size the output after validation: a declared uncompressed
//!   size must be non-negative, at most the caller's bound (the maximum frame size), and
//!   achievable from the compressed length at the algorithm's best ratio; otherwise the
//!   body is refused before any allocation.
//! * Malformed compressed input is a [`CompressionError`] (answered as a protocol error),
//!   never a panic, and a block that decompresses to a length other than the declared one
//!   is malformed.
//! * Empty bodies are never compressed by the server (some driver decompressors reject a
//!   zero-length block).

use std::fmt;

/// The frame compressions the server supports, by their STARTUP names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    Lz4,
    Snappy,
}

/// Names advertised in SUPPORTED, in preference order.
pub const SUPPORTED_COMPRESSIONS: [&str; 2] = ["lz4", "snappy"];

/// LZ4's best ratio is about 255:1; allow a little slack for the block framing.
const LZ4_MAX_RATIO: usize = 256;
/// Snappy's best ratio (a 64-byte copy per 2-byte tag) is 32:1; allow slack.
const SNAPPY_MAX_RATIO: usize = 64;

/// A compressed body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{algorithm} decompression failed: {detail}")]
pub struct CompressionError {
    pub algorithm: &'static str,
    pub detail: String,
}

impl Compression {
    /// Parses a STARTUP `COMPRESSION` value (case-insensitive, as Cassandra does).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "lz4" => Some(Compression::Lz4),
            "snappy" => Some(Compression::Snappy),
            _ => None,
        }
    }

    /// The STARTUP name.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Lz4 => "lz4",
            Compression::Snappy => "snappy",
        }
    }

    fn err(self, detail: impl fmt::Display) -> CompressionError {
        CompressionError {
            algorithm: self.name(),
            detail: detail.to_string(),
        }
    }

    /// Compresses a frame body.
    pub fn compress(self, body: &[u8]) -> Vec<u8> {
        match self {
            Compression::Lz4 => {
                let bound = lz4_flex::block::get_maximum_output_size(body.len());
                let mut out = vec![0u8; 4 + bound];
                out[..4].copy_from_slice(&(body.len() as u32).to_be_bytes());
                match lz4_flex::block::compress_into(body, &mut out[4..]) {
                    Ok(n) => {
                        out.truncate(4 + n);
                        out
                    }
                    // Cannot happen with a max-size buffer; fall back to the allocating API.
                    Err(_) => {
                        let mut out = (body.len() as u32).to_be_bytes().to_vec();
                        out.extend_from_slice(&lz4_flex::block::compress(body));
                        out
                    }
                }
            }
            Compression::Snappy => {
                let mut enc = snap::raw::Encoder::new();
                let mut out = vec![0u8; snap::raw::max_compress_len(body.len())];
                match enc.compress(body, &mut out) {
                    Ok(n) => {
                        out.truncate(n);
                        out
                    }
                    // Only fails for inputs over ~4 GiB, which frames cannot be.
                    Err(_) => Vec::new(),
                }
            }
        }
    }

    /// Decompresses a frame body, refusing outputs larger than `max_len`.
    pub fn decompress(self, body: &[u8], max_len: usize) -> Result<Vec<u8>, CompressionError> {
        match self {
            Compression::Lz4 => {
                let Some(prefix) = body.get(..4) else {
                    return Err(self.err("body shorter than the 4-byte length prefix"));
                };
                let declared = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
                if declared < 0 {
                    return Err(self.err(format!("negative uncompressed length {declared}")));
                }
                let declared = declared as usize;
                let block = &body[4..];
                check_declared(self, declared, block.len(), max_len, LZ4_MAX_RATIO)?;
                let mut out = vec![0u8; declared];
                let n =
                    lz4_flex::block::decompress_into(block, &mut out).map_err(|e| self.err(e))?;
                if n != declared {
                    return Err(self.err(format!(
                        "block decompressed to {n} bytes, {declared} declared"
                    )));
                }
                Ok(out)
            }
            Compression::Snappy => {
                let declared = snap::raw::decompress_len(body).map_err(|e| self.err(e))?;
                check_declared(self, declared, body.len(), max_len, SNAPPY_MAX_RATIO)?;
                let mut out = vec![0u8; declared];
                let n = snap::raw::Decoder::new()
                    .decompress(body, &mut out)
                    .map_err(|e| self.err(e))?;
                if n != declared {
                    return Err(self.err(format!(
                        "block decompressed to {n} bytes, {declared} declared"
                    )));
                }
                Ok(out)
            }
        }
    }
}

fn check_declared(
    c: Compression,
    declared: usize,
    compressed: usize,
    max_len: usize,
    ratio: usize,
) -> Result<(), CompressionError> {
    if declared > max_len {
        return Err(c.err(format!(
            "uncompressed length {declared} exceeds the maximum frame size {max_len}"
        )));
    }
    if declared > compressed.saturating_mul(ratio).saturating_add(64) {
        return Err(c.err(format!(
            "uncompressed length {declared} is impossible for {compressed} compressed bytes"
        )));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const MAX: usize = 1 << 20;

    fn sample() -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..2000u32 {
            v.extend_from_slice(format!("row {} value {}\n", i % 17, i).as_bytes());
        }
        v
    }

    #[test]
    fn round_trips() {
        for c in [Compression::Lz4, Compression::Snappy] {
            for body in [sample(), b"x".to_vec(), vec![0u8; 100_000]] {
                let z = c.compress(&body);
                assert_eq!(c.decompress(&z, MAX).unwrap(), body, "{c:?}");
            }
        }
    }

    #[test]
    fn lz4_layout_is_big_endian_length_then_raw_block() {
        let body = sample();
        let z = Compression::Lz4.compress(&body);
        assert_eq!(&z[..4], &(body.len() as u32).to_be_bytes());
        assert_eq!(
            lz4_flex::block::decompress(&z[4..], body.len()).unwrap(),
            body
        );
        let s = Compression::Snappy.compress(&body);
        assert_eq!(snap::raw::Decoder::new().decompress_vec(&s).unwrap(), body);
    }

    #[test]
    fn names() {
        assert_eq!(Compression::from_name("LZ4"), Some(Compression::Lz4));
        assert_eq!(Compression::from_name("snappy"), Some(Compression::Snappy));
        assert_eq!(Compression::from_name("zstd"), None);
    }

    #[test]
    fn corrupted_bodies_are_errors() {
        let body = sample();
        let lz = Compression::Lz4;
        // Declared length too large for the bound / the compressed size / negative.
        let mut z = lz.compress(&body);
        assert!(lz.decompress(&z, body.len() - 1).is_err());
        z[..4].copy_from_slice(&(200_000_000u32).to_be_bytes());
        assert!(lz.decompress(&z, usize::MAX).is_err());
        z[..4].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(lz.decompress(&z, MAX).is_err());
        // Declared length off by one.
        let mut z = lz.compress(&body);
        z[..4].copy_from_slice(&(body.len() as u32 - 1).to_be_bytes());
        assert!(lz.decompress(&z, MAX).is_err());
        assert!(lz.decompress(&[0, 0], MAX).is_err());
        let sn = Compression::Snappy;
        assert!(sn.decompress(&[0xff, 0xff, 0xff, 0xff, 0x0f], MAX).is_err());
        assert!(sn.decompress(&[], MAX).is_err());
    }

    #[test]
    fn random_mutations_never_panic() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let body = sample();
        for c in [Compression::Lz4, Compression::Snappy] {
            let z = c.compress(&body);
            for _ in 0..3000 {
                let mut m = z.clone();
                match rng.gen_range(0..3) {
                    0 => {
                        let i = rng.gen_range(0..m.len());
                        m[i] = rng.gen();
                    }
                    1 => m.truncate(rng.gen_range(0..m.len())),
                    _ => {
                        let n = rng.gen_range(0..64);
                        m = (0..n).map(|_| rng.gen()).collect();
                    }
                }
                if let Ok(out) = c.decompress(&m, MAX) {
                    assert!(out.len() <= MAX);
                }
            }
        }
    }
}
