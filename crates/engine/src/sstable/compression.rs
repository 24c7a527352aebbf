//! SSTable compression: the table's `compression = {...}` options and the per-chunk codecs.
//!
//! Two halves:
//!
//! * [`CompressionParams`] / [`from_options`] parse the CQL `compression` map the way Cassandra
//!   5.0 does, also accepting ScyllaDB's and Cassandra 3's spellings (`sstable_compression` for
//!   `class`, the legacy `chunk_length_kb`; short or `org.apache.cassandra.io.compress.`-qualified
//!   class names), and reject mistakes with Cassandra's texts (see [`OptionError`]). [`CompressionParams::to_options`] gives back what
//!   `system_schema.tables.compression` shows.
//! * [`Compressor`] compresses / decompresses one chunk at a time, reusing codec contexts between
//!   calls. It is not `Sync`: every writer or reader thread owns one.
//!
//! Invariants: `chunk_length` is a power of two in `1 KiB..=128 KiB`; a chunk compresses to an
//! independent unit (raw LZ4 block, raw Snappy, raw deflate without zlib header, one zstd frame) so
//! any chunk can be decompressed alone; decompression of damaged input returns
//! [`CorruptionKind::Decompress`], never panics and never yields a length other than the expected
//! one.

use std::io;
use std::path::PathBuf;

use crate::error::{CorruptionKind, Error, OptionError, Result};

/// Package prefix Cassandra uses for its compressor classes (and ScyllaDB emits for compatibility).
pub const CLASS_PREFIX: &str = "org.apache.cassandra.io.compress.";

/// ScyllaDB's default chunk length (Cassandra 4+ uses 16 KiB).
pub const DEFAULT_CHUNK_LENGTH: u32 = 4 * 1024;

/// Largest chunk length accepted (ScyllaDB issue #9933: bigger chunks only cause large allocations).
pub const MAX_CHUNK_LENGTH: u32 = 128 * 1024;

/// zstd level used when `compression_level` is not given (same as ScyllaDB and Cassandra).
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

/// Deflate level; Cassandra and ScyllaDB both use zlib's default and do not make it configurable.
const DEFLATE_LEVEL: u32 = 6;

/// The codec applied to each chunk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Codec {
    /// Chunks are stored as-is (still checksummed).
    None,
    /// Raw LZ4 block per chunk.
    Lz4,
    /// Raw Snappy per chunk.
    Snappy,
    /// Raw deflate (no zlib header) per chunk.
    Deflate,
    /// One zstd frame per chunk.
    Zstd { level: i32 },
}

impl Codec {
    /// The short class name (`LZ4Compressor`, ...); empty for [`Codec::None`].
    pub fn class_name(&self) -> &'static str {
        match self {
            Codec::None => "",
            Codec::Lz4 => "LZ4Compressor",
            Codec::Snappy => "SnappyCompressor",
            Codec::Deflate => "DeflateCompressor",
            Codec::Zstd { .. } => "ZstdCompressor",
        }
    }

    /// The qualified class name as Cassandra 4+ and ScyllaDB show it; empty for [`Codec::None`].
    pub fn qualified_class_name(&self) -> String {
        match self {
            Codec::None => String::new(),
            other => format!("{CLASS_PREFIX}{}", other.class_name()),
        }
    }
}

/// A table's compression settings.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressionParams {
    pub codec: Codec,
    /// Uncompressed bytes per chunk: a power of two, `1 KiB..=128 KiB`.
    pub chunk_length: u32,
    /// Parsed and shown for compatibility; Cairn, like ScyllaDB, verifies every chunk anyway.
    pub crc_check_chance: f64,
}

impl Default for CompressionParams {
    fn default() -> Self {
        CompressionParams {
            codec: Codec::Lz4,
            chunk_length: DEFAULT_CHUNK_LENGTH,
            crc_check_chance: 1.0,
        }
    }
}

/// Parses a CQL `compression` map. See the module docs for the accepted spellings.
pub fn from_options(opts: &[(String, String)]) -> Result<CompressionParams, OptionError> {
    CompressionParams::from_options(opts)
}

fn parse_class(name: &str) -> Result<Codec, OptionError> {
    let short = name.strip_prefix(CLASS_PREFIX).unwrap_or(name);
    match short {
        "" => Ok(Codec::None),
        "LZ4Compressor" => Ok(Codec::Lz4),
        "SnappyCompressor" => Ok(Codec::Snappy),
        "DeflateCompressor" => Ok(Codec::Deflate),
        "ZstdCompressor" => Ok(Codec::Zstd {
            level: DEFAULT_ZSTD_LEVEL,
        }),
        _ => {
            // Cassandra qualifies an unqualified name before failing to load it, and its message
            // shows the qualified name.
            let shown = if name.contains('.') {
                name.to_string()
            } else {
                format!("{CLASS_PREFIX}{name}")
            };
            Err(OptionError::UnknownCompressor(shown))
        }
    }
}

/// `chunk_length_in_kb` as Cassandra reads it (a Java int whose bytes fit an int).
fn parse_chunk_length_kb(v: &str) -> Result<i64, OptionError> {
    let kb: i32 = v.parse().map_err(|_| OptionError::Invalid {
        option: "chunk_length_in_kb",
        message: "Invalid value for chunk_length_in_kb".to_string(),
    })?;
    if kb > i32::MAX / 1024 {
        return Err(OptionError::ChunkLengthTooLarge(i64::from(kb)));
    }
    Ok(i64::from(kb))
}

/// Cassandra's checks of the chunk length (positive, a power of two), then Cairn's bound.
fn check_chunk_length_kb(kb: i64) -> Result<u32, OptionError> {
    if kb <= 0 {
        return Err(OptionError::ChunkLengthNotPositive(kb.to_string()));
    }
    let kb = kb.unsigned_abs();
    if !kb.is_power_of_two() {
        return Err(OptionError::ChunkLengthNotPowerOfTwo(kb));
    }
    if kb > u64::from(MAX_CHUNK_LENGTH / 1024) {
        return Err(OptionError::ChunkLengthTooLarge(kb as i64));
    }
    // kb <= 128 here, so the product fits.
    Ok((kb as u32) * 1024)
}

impl CompressionParams {
    /// No compression, default chunking.
    pub fn uncompressed() -> Self {
        CompressionParams {
            codec: Codec::None,
            ..Default::default()
        }
    }

    /// Parses a CQL `compression` map (values are the strings CQL gives), checked in
    /// Cassandra's order (`CompressionParams.fromMap`, the compressor's `create`, `validate`)
    /// with its texts. Accepted besides Cassandra's keys, for ScyllaDB's and Cassandra 3's
    /// scripts: `sstable_compression` for `class`, `chunk_length_kb`, `crc_check_chance`, and
    /// an empty class (no compression, chunks kept).
    pub fn from_options(opts: &[(String, String)]) -> Result<CompressionParams, OptionError> {
        let get = |key: &str| {
            opts.iter()
                .rfind(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        // Java's `Boolean.parseBoolean`: anything but `true` disables.
        let enabled = get("enabled").is_none_or(|v| v.eq_ignore_ascii_case("true"));
        let class = get("class");
        let legacy_class = get("sstable_compression");
        if let (Some(a), Some(b)) = (class, legacy_class) {
            // Both spellings given: harmless only if they name the same codec.
            if parse_class(a)? != parse_class(b)? {
                return Err(OptionError::Invalid {
                    option: "class",
                    message: format!("Conflicting compression classes '{a}' and '{b}'"),
                });
            }
        }
        let class = class.or(legacy_class);
        if !opts.is_empty() && enabled && class.is_none() {
            return Err(OptionError::Invalid {
                option: "class",
                message: "Missing sub-option 'class' for the 'compression' option.".to_string(),
            });
        }
        if !enabled {
            if opts.iter().any(|(k, _)| k != "enabled") {
                return Err(OptionError::Invalid {
                    option: "enabled",
                    message:
                        "If the 'enabled' option is set to false no other options must be specified"
                            .to_string(),
                });
            }
            return Ok(CompressionParams::uncompressed());
        }
        // The current spelling wins over the legacy one.
        let chunk_kb = match get("chunk_length_in_kb").or(get("chunk_length_kb")) {
            Some(v) => Some(parse_chunk_length_kb(v)?),
            None => None,
        };
        let mut codec = match class {
            Some(c) => parse_class(c)?,
            None => Codec::None,
        };
        if let Some(v) = get("compression_level") {
            if let Codec::Zstd { level } = &mut codec {
                // Cassandra reports what its compressor's `create` threw.
                let l: i32 = v.parse().map_err(|_| {
                    OptionError::CompressionLevel(format!(
                        "java.lang.NumberFormatException For input string: \"{v}\""
                    ))
                })?;
                if !zstd::compression_level_range().contains(&l) {
                    return Err(OptionError::CompressionLevel(format!(
                        "java.lang.IllegalArgumentException compression_level={l} is invalid"
                    )));
                }
                *level = l;
            }
        }
        let known = |k: &str| {
            matches!(
                k,
                "enabled"
                    | "class"
                    | "sstable_compression"
                    | "chunk_length_in_kb"
                    | "chunk_length_kb"
                    | "crc_check_chance"
            ) || (k == "compression_level" && matches!(codec, Codec::Zstd { .. }))
        };
        if let Some((k, _)) = opts.iter().find(|(k, _)| !known(k)) {
            // Cassandra's options Cairn's sstables have no use for yet: refused by name
            // rather than called unknown.
            if matches!(
                k.as_str(),
                "min_compress_ratio" | "lz4_compressor_type" | "lz4_high_compressor_level"
            ) {
                return Err(OptionError::Invalid {
                    option: "compression",
                    message: format!("The compression option {k} is not supported"),
                });
            }
            return Err(OptionError::UnknownCompressionOption(k.clone()));
        }
        let chunk_length = match chunk_kb {
            Some(kb) => check_chunk_length_kb(kb)?,
            None => DEFAULT_CHUNK_LENGTH,
        };
        let crc_check_chance = match get("crc_check_chance") {
            Some(v) => {
                let x = crate::java::parse_double(v).ok_or_else(|| OptionError::Invalid {
                    option: "crc_check_chance",
                    message: format!("Invalid double value {v} for 'crc_check_chance'"),
                })?;
                if !(0.0..=1.0).contains(&x) {
                    return Err(OptionError::CrcCheckChance(crate::java::double_to_string(
                        x,
                    )));
                }
                x
            }
            None => 1.0,
        };
        Ok(CompressionParams {
            codec,
            chunk_length,
            crc_check_chance,
        })
    }

    /// The map `system_schema.tables.compression` shows (Cassandra 4+ style, sorted by key).
    ///
    /// Parsing the result with [`from_options`] gives back `self` except for `crc_check_chance`,
    /// which Cassandra 4+ shows as a table property rather than inside this map.
    pub fn to_options(&self) -> Vec<(String, String)> {
        let chunk = (
            "chunk_length_in_kb".to_string(),
            (self.chunk_length / 1024).to_string(),
        );
        match self.codec {
            Codec::None if self.chunk_length == DEFAULT_CHUNK_LENGTH => {
                vec![("enabled".to_string(), "false".to_string())]
            }
            // A non-default chunk length without compression can only be expressed with an
            // empty class (both Cassandra and ScyllaDB accept that).
            Codec::None => vec![chunk, ("class".to_string(), String::new())],
            Codec::Zstd { level } => vec![
                chunk,
                ("class".to_string(), self.codec.qualified_class_name()),
                ("compression_level".to_string(), level.to_string()),
            ],
            _ => vec![
                chunk,
                ("class".to_string(), self.codec.qualified_class_name()),
            ],
        }
    }
}

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

    fn opts(kv: &[(&str, &str)]) -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn parse(kv: &[(&str, &str)]) -> Result<CompressionParams, OptionError> {
        from_options(&opts(kv))
    }

    fn err_text(kv: &[(&str, &str)]) -> String {
        match parse(kv) {
            Ok(p) => panic!("expected an error for {kv:?}, got {p:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn default_is_lz4_4k() {
        let p = CompressionParams::default();
        assert_eq!(p.codec, Codec::Lz4);
        assert_eq!(p.chunk_length, 4096);
        assert_eq!(p.crc_check_chance, 1.0);
    }

    #[test]
    fn class_spellings() {
        for key in ["sstable_compression", "class"] {
            for (name, codec) in [
                ("LZ4Compressor", Codec::Lz4),
                ("SnappyCompressor", Codec::Snappy),
                ("DeflateCompressor", Codec::Deflate),
                ("ZstdCompressor", Codec::Zstd { level: 3 }),
            ] {
                let p = parse(&[(key, name)]).unwrap();
                assert_eq!(p.codec, codec);
                assert_eq!(p.chunk_length, 4096);
                let q = format!("org.apache.cassandra.io.compress.{name}");
                assert_eq!(parse(&[(key, &q)]).unwrap().codec, codec);
            }
        }
    }

    #[test]
    fn no_compression_spellings() {
        for kv in [
            &[][..],
            &[("sstable_compression", "")][..],
            &[("class", "")][..],
            &[("enabled", "false")][..],
            &[("enabled", "FALSE")][..],
        ] {
            let p = parse(kv).unwrap();
            assert_eq!(p.codec, Codec::None, "{kv:?}");
            assert_eq!(p.chunk_length, 4096);
        }
        // Uncompressed data is still chunked, with the chunk length given.
        let p = parse(&[("sstable_compression", ""), ("chunk_length_in_kb", "64")]).unwrap();
        assert_eq!((p.codec, p.chunk_length), (Codec::None, 65536));
    }

    #[test]
    fn chunk_length_spellings() {
        for key in ["chunk_length_in_kb", "chunk_length_kb"] {
            for kb in [1u32, 2, 4, 8, 16, 32, 64, 128] {
                let p = parse(&[("class", "LZ4Compressor"), (key, &kb.to_string())]).unwrap();
                assert_eq!(p.chunk_length, kb * 1024);
            }
        }
        // The current spelling wins over the legacy one.
        let p = parse(&[
            ("class", "LZ4Compressor"),
            ("chunk_length_kb", "8"),
            ("chunk_length_in_kb", "16"),
        ])
        .unwrap();
        assert_eq!(p.chunk_length, 16384);
    }

    #[test]
    fn chunk_length_errors() {
        for key in ["chunk_length_in_kb", "chunk_length_kb"] {
            for v in ["0", "-4"] {
                assert_eq!(
                    err_text(&[("class", "LZ4Compressor"), (key, v)]),
                    "Invalid negative or null chunk_length_in_kb"
                );
            }
            for v in ["3", "12", "100"] {
                assert_eq!(
                    err_text(&[("class", "LZ4Compressor"), (key, v)]),
                    "chunk_length_in_kb must be a power of 2"
                );
            }
            for v in ["256", "1024"] {
                assert_eq!(
                    err_text(&[("class", "LZ4Compressor"), (key, v)]),
                    format!("chunk_length_in_kb must be at most 128 (got {v}): larger chunks are not supported")
                );
            }
            assert_eq!(
                err_text(&[("class", "LZ4Compressor"), (key, "2097152")]),
                "Value of chunk_length_in_kb is too large (2097152)"
            );
            assert_eq!(
                err_text(&[("class", "LZ4Compressor"), (key, "abc")]),
                "Invalid value for chunk_length_in_kb"
            );
        }
    }

    #[test]
    fn unknown_option_and_class() {
        assert_eq!(
            err_text(&[("class", "LZ4Compressor"), ("foo", "1")]),
            "Unknown compression options foo"
        );
        assert_eq!(
            err_text(&[
                ("sstable_compression", "LZ4Compressor"),
                ("min_compress_ratio", "1")
            ]),
            "The compression option min_compress_ratio is not supported"
        );
        assert_eq!(
            err_text(&[("class", "BogusCompressor")]),
            "Could not create Compression for type org.apache.cassandra.io.compress.BogusCompressor"
        );
        assert_eq!(
            err_text(&[("class", "com.example.Bogus")]),
            "Could not create Compression for type com.example.Bogus"
        );
        assert!(matches!(
            parse(&[
                ("class", "LZ4Compressor"),
                ("sstable_compression", "SnappyCompressor")
            ]),
            Err(OptionError::Invalid { .. })
        ));
        // Same codec under both keys is fine.
        assert_eq!(
            parse(&[
                ("class", "LZ4Compressor"),
                (
                    "sstable_compression",
                    "org.apache.cassandra.io.compress.LZ4Compressor"
                )
            ])
            .unwrap()
            .codec,
            Codec::Lz4
        );
    }

    #[test]
    fn missing_class_and_enabled_errors() {
        assert_eq!(
            err_text(&[("chunk_length_in_kb", "16")]),
            "Missing sub-option 'class' for the 'compression' option."
        );
        assert_eq!(
            err_text(&[("enabled", "true")]),
            "Missing sub-option 'class' for the 'compression' option."
        );
        // Cassandra checks the class before anything else.
        assert_eq!(
            err_text(&[("foo", "1")]),
            "Missing sub-option 'class' for the 'compression' option."
        );
        assert_eq!(
            err_text(&[("enabled", "false"), ("class", "LZ4Compressor")]),
            "If the 'enabled' option is set to false no other options must be specified"
        );
        // Anything but `true` disables, as Java's `Boolean.parseBoolean` reads it.
        assert_eq!(
            parse(&[("enabled", "maybe")]).unwrap(),
            CompressionParams::uncompressed()
        );
        assert_eq!(
            err_text(&[("enabled", "maybe"), ("class", "LZ4Compressor")]),
            "If the 'enabled' option is set to false no other options must be specified"
        );
        assert_eq!(
            parse(&[("enabled", "true"), ("class", "SnappyCompressor")])
                .unwrap()
                .codec,
            Codec::Snappy
        );
    }

    #[test]
    fn crc_check_chance() {
        let p = parse(&[("class", "LZ4Compressor"), ("crc_check_chance", "0.5")]).unwrap();
        assert_eq!(p.crc_check_chance, 0.5);
        for v in ["1.5", "-0.1"] {
            assert_eq!(
                err_text(&[("class", "LZ4Compressor"), ("crc_check_chance", v)]),
                format!("crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got {v})")
            );
        }
        assert_eq!(
            err_text(&[("class", "LZ4Compressor"), ("crc_check_chance", "x")]),
            "Invalid double value x for 'crc_check_chance'"
        );
    }

    #[test]
    fn compression_level() {
        let p = parse(&[("class", "ZstdCompressor"), ("compression_level", "7")]).unwrap();
        assert_eq!(p.codec, Codec::Zstd { level: 7 });
        // zstd's own range, negative (fast) levels included, as Cassandra accepts.
        for l in ["1", "22", "0", "-5"] {
            assert!(parse(&[("class", "ZstdCompressor"), ("compression_level", l)]).is_ok());
        }
        assert_eq!(
            err_text(&[("class", "ZstdCompressor"), ("compression_level", "23")]),
            "ZstdCompressor.create() threw an error: java.lang.IllegalArgumentException compression_level=23 is invalid"
        );
        assert_eq!(
            err_text(&[("class", "ZstdCompressor"), ("compression_level", "x")]),
            "ZstdCompressor.create() threw an error: java.lang.NumberFormatException For input string: \"x\""
        );
        for c in ["LZ4Compressor", "DeflateCompressor", "SnappyCompressor"] {
            assert_eq!(
                err_text(&[("class", c), ("compression_level", "3")]),
                "Unknown compression options compression_level"
            );
        }
    }

    #[test]
    fn to_options_round_trip() {
        let cases = [
            CompressionParams::default(),
            CompressionParams::uncompressed(),
            CompressionParams {
                codec: Codec::None,
                chunk_length: 65536,
                crc_check_chance: 1.0,
            },
            CompressionParams {
                codec: Codec::Zstd { level: 9 },
                chunk_length: 16384,
                crc_check_chance: 1.0,
            },
            CompressionParams {
                codec: Codec::Snappy,
                chunk_length: 1024,
                crc_check_chance: 1.0,
            },
            CompressionParams {
                codec: Codec::Deflate,
                chunk_length: 131072,
                crc_check_chance: 1.0,
            },
        ];
        for p in cases {
            let o = p.to_options();
            assert_eq!(from_options(&o).unwrap(), p, "{o:?}");
        }
        assert_eq!(
            CompressionParams::default().to_options(),
            opts(&[
                ("chunk_length_in_kb", "4"),
                ("class", "org.apache.cassandra.io.compress.LZ4Compressor")
            ])
        );
        assert_eq!(
            CompressionParams::uncompressed().to_options(),
            opts(&[("enabled", "false")])
        );
    }

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
