//! A table's `compression = {...}` options: which codec compresses its sstables' chunks, and
//! how long a chunk is.
//!
//! [`CompressionParams`] / [`from_options`] parse the CQL `compression` map the way Cassandra
//! 5.0 does, also accepting ScyllaDB's and Cassandra 3's spellings (`sstable_compression` for
//! `class`, the legacy `chunk_length_kb`; short or `org.apache.cassandra.io.compress.`-qualified
//! class names), and reject mistakes with Cassandra's texts (see [`OptionError`]).
//! [`CompressionParams::to_options`] gives back what `system_schema.tables.compression` shows.
//! The codecs themselves run in `sstable::compression`.
//!
//! Invariant: `chunk_length` is a power of two in `1 KiB..=128 KiB`.

use crate::error::OptionError;

/// Package prefix Cassandra uses for its compressor classes (and ScyllaDB emits for compatibility).
pub const CLASS_PREFIX: &str = "org.apache.cassandra.io.compress.";

/// ScyllaDB's default chunk length (Cassandra 4+ uses 16 KiB).
pub const DEFAULT_CHUNK_LENGTH: u32 = 4 * 1024;

/// Largest chunk length accepted (ScyllaDB issue #9933: bigger chunks only cause large allocations).
pub const MAX_CHUNK_LENGTH: u32 = 128 * 1024;

/// zstd level used when `compression_level` is not given (same as ScyllaDB and Cassandra).
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

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
}
