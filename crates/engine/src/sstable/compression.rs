//! SSTable chunk compression: [`Compressor`] compresses / decompresses one chunk at a time with
//! the codec a table's options name ([`Codec`], in [`crate::schema::compression`]), reusing codec
//! contexts between calls. It is not `Sync`: every writer or reader thread owns one.
//!
//! Invariants: a chunk compresses to an independent unit (raw LZ4 block, raw Snappy, raw deflate
//! without zlib header, one zstd frame) so any chunk can be decompressed alone; decompression of
//! damaged input returns [`CorruptionKind::Decompress`], never panics and never yields a length
//! other than the expected one.

use std::io;
use std::path::PathBuf;

use crate::error::{CorruptionKind, Error, Result};
use crate::schema::compression::Codec;

/// Deflate level; Cassandra and ScyllaDB both use zlib's default and do not make it configurable.
const DEFLATE_LEVEL: u32 = 6;

/// A chunk compressor/decompressor with reusable per-thread contexts.
///
/// Contexts are created lazily on first use so a `Compressor` for a codec costs nothing until it
/// is used, and a reader thread that only decompresses never builds a compression context.
pub struct Compressor {
    codec: Codec,
    snappy_enc: Option<snap::raw::Encoder>,
    snappy_dec: Option<snap::raw::Decoder>,
    deflate_c: Option<flate2::Compress>,
    deflate_d: Option<flate2::Decompress>,
    zstd_c: Option<zstd::bulk::Compressor<'static>>,
    zstd_d: Option<zstd::bulk::Decompressor<'static>>,
    /// Scratch space for the chunk reader (compressed bytes read from disk), kept here so every
    /// reader thread reuses one buffer without a separate parameter.
    pub(crate) scratch: Vec<u8>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("codec", &self.codec)
            .finish_non_exhaustive()
    }
}

fn codec_failure(what: &str, e: impl std::fmt::Display) -> Error {
    // Compression of valid input cannot fail except for allocation trouble inside a codec; the
    // engine has no better variant than an I/O-style error for that.
    Error::io(
        PathBuf::from("<compressor>"),
        io::Error::other(format!("{what} compression failed: {e}")),
    )
}

impl Compressor {
    /// A compressor for `codec`; no context is allocated yet.
    pub fn new(codec: Codec) -> Self {
        Compressor {
            codec,
            snappy_enc: None,
            snappy_dec: None,
            deflate_c: None,
            deflate_d: None,
            zstd_c: None,
            zstd_d: None,
            scratch: Vec::new(),
        }
    }

    /// The codec this compressor applies.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// Compresses `input` as one independent unit and appends it to `out`.
    pub fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        let r = self.compress_inner(input, out, start);
        if r.is_err() {
            out.truncate(start);
        }
        r
    }

    fn compress_inner(&mut self, input: &[u8], out: &mut Vec<u8>, start: usize) -> Result<()> {
        match self.codec {
            Codec::None => out.extend_from_slice(input),
            Codec::Lz4 => {
                out.resize(
                    start + lz4_flex::block::get_maximum_output_size(input.len()),
                    0,
                );
                let dst = out.get_mut(start..).unwrap_or_default();
                let n = lz4_flex::block::compress_into(input, dst)
                    .map_err(|e| codec_failure("LZ4", e))?;
                out.truncate(start + n);
            }
            Codec::Snappy => {
                out.resize(start + snap::raw::max_compress_len(input.len()), 0);
                let enc = self.snappy_enc.get_or_insert_with(snap::raw::Encoder::new);
                let dst = out.get_mut(start..).unwrap_or_default();
                let n = enc
                    .compress(input, dst)
                    .map_err(|e| codec_failure("Snappy", e))?;
                out.truncate(start + n);
            }
            Codec::Deflate => {
                let c = self.deflate_c.get_or_insert_with(|| {
                    flate2::Compress::new(flate2::Compression::new(DEFLATE_LEVEL), false)
                });
                c.reset();
                // Room for incompressible input plus block headers; grown below if short.
                out.reserve(input.len() + input.len() / 8 + 64);
                loop {
                    let consumed = usize::try_from(c.total_in()).unwrap_or(usize::MAX);
                    let rest = input.get(consumed..).unwrap_or_default();
                    match c.compress_vec(rest, out, flate2::FlushCompress::Finish) {
                        Ok(flate2::Status::StreamEnd) => break,
                        Ok(_) => out.reserve(out.capacity().max(64)),
                        Err(e) => return Err(codec_failure("Deflate", e)),
                    }
                }
            }
            Codec::Zstd { level } => {
                if self.zstd_c.is_none() {
                    self.zstd_c = Some(
                        zstd::bulk::Compressor::new(level).map_err(|e| codec_failure("Zstd", e))?,
                    );
                }
                out.resize(start + zstd::compress_bound(input.len()), 0);
                let dst = out.get_mut(start..).unwrap_or_default();
                let n = match self.zstd_c.as_mut() {
                    Some(c) => c
                        .compress_to_buffer(input, dst)
                        .map_err(|e| codec_failure("Zstd", e))?,
                    None => return Err(codec_failure("Zstd", "no context")),
                };
                out.truncate(start + n);
            }
        }
        Ok(())
    }

    /// Decompresses one unit produced by [`Compressor::compress`] and appends exactly
    /// `uncompressed_len` bytes to `out`; any other outcome is [`CorruptionKind::Decompress`]
    /// and leaves `out` as it was.
    pub fn decompress(
        &mut self,
        input: &[u8],
        uncompressed_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), CorruptionKind> {
        let start = out.len();
        let ok = self.decompress_inner(input, uncompressed_len, out, start);
        if ok {
            Ok(())
        } else {
            out.truncate(start);
            Err(CorruptionKind::Decompress)
        }
    }

    fn decompress_inner(
        &mut self,
        input: &[u8],
        n: usize,
        out: &mut Vec<u8>,
        start: usize,
    ) -> bool {
        if let Codec::None = self.codec {
            if input.len() != n {
                return false;
            }
            out.extend_from_slice(input);
            return true;
        }
        out.resize(start + n, 0);
        match out.get_mut(start..) {
            Some(dst) => self.decompress_into(input, dst).is_ok(),
            None => false,
        }
    }

    /// Decompresses one unit produced by [`Compressor::compress`] into `dst`, which must be
    /// exactly as long as the unit's uncompressed length; any other outcome is
    /// [`CorruptionKind::Decompress`] (and `dst`'s contents are then unspecified).
    ///
    /// Unlike [`Compressor::decompress`] this writes into memory the caller already owns, so a
    /// reader that reuses one buffer per chunk pays neither an allocation nor a zero-fill.
    pub fn decompress_into(&mut self, input: &[u8], dst: &mut [u8]) -> Result<(), CorruptionKind> {
        let n = dst.len();
        let ok = match self.codec {
            Codec::None => {
                if input.len() == n {
                    dst.copy_from_slice(input);
                    true
                } else {
                    false
                }
            }
            Codec::Lz4 => matches!(lz4_flex::block::decompress_into(input, dst), Ok(m) if m == n),
            Codec::Snappy => {
                // The snappy header states the length; refuse a mismatch before decoding.
                if !matches!(snap::raw::decompress_len(input), Ok(m) if m == n) {
                    false
                } else {
                    let dec = self.snappy_dec.get_or_insert_with(snap::raw::Decoder::new);
                    matches!(dec.decompress(input, dst), Ok(m) if m == n)
                }
            }
            Codec::Deflate => {
                let d = self
                    .deflate_d
                    .get_or_insert_with(|| flate2::Decompress::new(false));
                d.reset(false);
                let status = d.decompress(input, dst, flate2::FlushDecompress::Finish);
                matches!(status, Ok(flate2::Status::StreamEnd))
                    && d.total_out() == n as u64
                    && d.total_in() == input.len() as u64
            }
            Codec::Zstd { .. } => {
                if self.zstd_d.is_none() {
                    if let Ok(d) = zstd::bulk::Decompressor::new() {
                        self.zstd_d = Some(d);
                    }
                }
                match self.zstd_d.as_mut() {
                    Some(d) => matches!(d.decompress_to_buffer(input, dst), Ok(m) if m == n),
                    None => false,
                }
            }
        };
        if ok {
            Ok(())
        } else {
            Err(CorruptionKind::Decompress)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rand::{Rng, RngCore, SeedableRng};

    fn all_codecs() -> [Codec; 6] {
        [
            Codec::None,
            Codec::Lz4,
            Codec::Snappy,
            Codec::Deflate,
            Codec::Zstd { level: 3 },
            // A negative (fast) level, which Cassandra accepts too.
            Codec::Zstd { level: -5 },
        ]
    }

    fn structured_text(len: usize) -> Vec<u8> {
        let mut s = Vec::with_capacity(len + 64);
        let mut i = 0u64;
        while s.len() < len {
            s.extend_from_slice(
                format!(
                    "{{\"user_id\": {i}, \"name\": \"user{}\", \"score\": {}}}\n",
                    i % 97,
                    i * 7 % 1000
                )
                .as_bytes(),
            );
            i += 1;
        }
        s.truncate(len);
        s
    }

    #[test]
    fn round_trip_every_codec() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for codec in all_codecs() {
            let mut c = Compressor::new(codec);
            for len in [0usize, 1, 100, 4096, 65536, 131072] {
                let mut random = vec![0u8; len];
                rng.fill_bytes(&mut random);
                for input in [structured_text(len), random] {
                    let mut out = vec![0xAA]; // compress and decompress append
                    c.compress(&input, &mut out).unwrap();
                    let mut back = vec![0xBB];
                    c.decompress(&out[1..], input.len(), &mut back).unwrap();
                    assert_eq!(back[0], 0xBB);
                    assert_eq!(&back[1..], &input[..], "{codec:?} len {len}");
                }
            }
            // Text compresses with every real codec.
            if codec != Codec::None {
                let text = structured_text(65536);
                let mut out = Vec::new();
                c.compress(&text, &mut out).unwrap();
                assert!(out.len() < text.len() / 2, "{codec:?}: {}", out.len());
            }
        }
    }

    #[test]
    fn corrupted_input_is_an_error_not_a_panic() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let text = structured_text(16384);
        for codec in all_codecs() {
            let mut c = Compressor::new(codec);
            let mut comp = Vec::new();
            c.compress(&text, &mut comp).unwrap();
            // Wrong expected length is always detected.
            let mut out = vec![1, 2, 3];
            assert_eq!(
                c.decompress(&comp, text.len() + 1, &mut out),
                Err(CorruptionKind::Decompress)
            );
            assert_eq!(out, vec![1, 2, 3]);
            assert!(c.decompress(&comp, text.len() - 1, &mut out).is_err());
            // Truncations and garbage never panic; a success must still give the right length.
            for cut in [0, 1, comp.len() / 2, comp.len().saturating_sub(1)] {
                let mut o = Vec::new();
                if c.decompress(&comp[..cut], text.len(), &mut o).is_ok() {
                    assert_eq!(o.len(), text.len());
                }
            }
            for _ in 0..200 {
                let mut bad = comp.clone();
                for _ in 0..rng.gen_range(1..8) {
                    let i = rng.gen_range(0..bad.len());
                    bad[i] = rng.gen();
                }
                let mut o = Vec::new();
                match c.decompress(&bad, text.len(), &mut o) {
                    Ok(()) => assert_eq!(o.len(), text.len()),
                    Err(k) => {
                        assert_eq!(k, CorruptionKind::Decompress);
                        assert!(o.is_empty());
                    }
                }
                let mut garbage = vec![0u8; rng.gen_range(0..300)];
                rng.fill_bytes(&mut garbage);
                let _ = c.decompress(&garbage, text.len(), &mut o);
            }
            // The context still works after failures.
            let mut o = Vec::new();
            c.decompress(&comp, text.len(), &mut o).unwrap();
            assert_eq!(o, text);
        }
    }
}
