//! The engine's one error type.
//!
//! Every failure the engine can report is a structured variant: callers (the CQL layer, tools,
//! tests) match on the variant, and the `Display` text is what an operator reads. Corruption
//! always names the file and the byte offset where the bad data starts.

use std::path::{Path, PathBuf};

/// Result alias used throughout the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of damage a corruption error found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptionKind {
    /// A stored CRC32 does not match the bytes it covers.
    ChecksumMismatch { expected: u32, actual: u32 },
    /// A file does not start with the magic bytes of its format.
    BadMagic,
    /// A file's format version is one this build cannot read.
    UnsupportedVersion(u32),
    /// The data ends before a structure it announced is complete.
    Truncated,
    /// A structure decoded to a value that cannot be valid (the text says which).
    Invalid(&'static str),
    /// A compressed chunk failed to decompress.
    Decompress,
}

impl std::fmt::Display for CorruptionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CorruptionKind::ChecksumMismatch { expected, actual } => {
                write!(
                    f,
                    "checksum mismatch (stored {expected:#010x}, computed {actual:#010x})"
                )
            }
            CorruptionKind::BadMagic => f.write_str("bad magic bytes"),
            CorruptionKind::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
            CorruptionKind::Truncated => f.write_str("unexpected end of data"),
            CorruptionKind::Invalid(what) => write!(f, "invalid {what}"),
            CorruptionKind::Decompress => f.write_str("chunk failed to decompress"),
        }
    }
}

/// What kind of file failed, and how — read off an [`Error`] by [`Error::storage_fault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Stored sstable data failed verification (checksum, decompression, bad offsets).
    CorruptSSTable,
    /// The operating system failed a read or write of a file in the data directory.
    DataIo,
    /// The commitlog could not be written or synced (or, at startup, failed verification).
    Commitlog,
    /// A write refused because the commitlog stopped after an earlier fault (already counted
    /// when it happened).
    CommitlogStopped,
}

/// A storage fault carried by an engine [`Error`]: which file, where, and what kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageFault<'a> {
    /// What failed.
    pub kind: FaultKind,
    /// The file (or directory) that failed.
    pub path: &'a Path,
    /// The byte offset where the bad data starts (corruption only).
    pub offset: Option<u64>,
}

impl std::fmt::Display for StorageFault<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.kind {
            FaultKind::CorruptSSTable => "corrupt sstable",
            FaultKind::DataIo => "I/O error",
            FaultKind::Commitlog => "commitlog failure",
            FaultKind::CommitlogStopped => "commitlog stopped",
        };
        write!(f, "{what} in {}", self.path.display())?;
        if let Some(o) = self.offset {
            write!(f, " at offset {o}")?;
        }
        Ok(())
    }
}

/// Whether `path` names a commitlog segment (`CommitLog-…`).
fn is_commitlog_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("CommitLog"))
}

/// A table or compression option was rejected. `Display` gives the text Cassandra 5.0 gives
/// for the same mistake (or ScyllaDB, for what only it has), because drivers and users match
/// on it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OptionError {
    /// A compression option nobody knows.
    UnknownCompressionOption(String),
    /// A compressor class that does not exist.
    UnknownCompressor(String),
    /// `chunk_length_in_kb` is not positive.
    ChunkLengthNotPositive(String),
    /// `chunk_length_in_kb` is not a power of two.
    ChunkLengthNotPowerOfTwo(u64),
    /// `chunk_length_in_kb` is above Cairn's 128, or its bytes do not fit an int.
    ChunkLengthTooLarge(i64),
    /// `crc_check_chance` outside 0.0..=1.0 (the value as Java prints it).
    CrcCheckChance(String),
    /// `compression_level` refused by the zstd compressor: what its `create` threw.
    CompressionLevel(String),
    /// Any other option with a value out of its range; the text is complete.
    Invalid {
        option: &'static str,
        message: String,
    },
}

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionError::UnknownCompressionOption(k) => {
                write!(f, "Unknown compression options {k}")
            }
            OptionError::UnknownCompressor(c) => {
                write!(f, "Could not create Compression for type {c}")
            }
            OptionError::ChunkLengthNotPositive(_) => {
                f.write_str("Invalid negative or null chunk_length_in_kb")
            }
            OptionError::ChunkLengthNotPowerOfTwo(_) => {
                f.write_str("chunk_length_in_kb must be a power of 2")
            }
            OptionError::ChunkLengthTooLarge(kb) if *kb > i64::from(i32::MAX / 1024) => {
                write!(f, "Value of chunk_length_in_kb is too large ({kb})")
            }
            // Cassandra accepts up to 2 GiB; bigger chunks only cost memory (ScyllaDB #9933).
            OptionError::ChunkLengthTooLarge(kb) => write!(
                f,
                "chunk_length_in_kb must be at most 128 (got {kb}): larger chunks are not supported"
            ),
            OptionError::CrcCheckChance(v) => write!(
                f,
                "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got {v})"
            ),
            OptionError::CompressionLevel(thrown) => {
                write!(f, "ZstdCompressor.create() threw an error: {thrown}")
            }
            OptionError::Invalid { message, .. } => f.write_str(message),
        }
    }
}

/// The engine's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A memtable partition took a write while a read copied it in two steps; the read is
    /// retried copying whole slices (`Snapshot::read_consulting`), so this never reaches a
    /// caller of the engine's reads.
    #[error("a partition changed while it was read; the read is retried")]
    SourceChanged,
    /// An operating-system I/O failure on a named file or directory.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Stored data failed verification.
    #[error("corruption in {} at offset {offset}: {kind}", path.display())]
    Corruption {
        path: PathBuf,
        offset: u64,
        kind: CorruptionKind,
    },
    /// A table or compression option was rejected.
    #[error("{0}")]
    Option(#[from] OptionError),
    /// A value does not match its CQL type's encoding.
    #[error("invalid {type_name} value: {reason}")]
    InvalidValue {
        type_name: &'static str,
        reason: &'static str,
    },
    /// The named keyspace or table does not exist.
    #[error("unknown table {keyspace}.{table}")]
    UnknownTable { keyspace: String, table: String },
    /// A table of that name already exists.
    #[error("table {keyspace}.{table} already exists")]
    TableExists { keyspace: String, table: String },
    /// A mutation does not fit the table's schema (the text says how).
    #[error("invalid mutation: {0}")]
    InvalidMutation(&'static str),
    /// Memtables are full and flushing cannot keep up; the write was not applied.
    #[error("overloaded: memtables are full and flushes are not keeping up")]
    Overloaded,
    /// A compaction was stopped on request (`nodetool stop`, table dropped, shutdown).
    #[error("compaction {job} of {keyspace}.{table} was stopped")]
    CompactionStopped {
        job: u64,
        keyspace: String,
        table: String,
    },
    /// A compaction job names an sstable that is not live (a strategy or caller bug).
    #[error("compaction input {generation} is not a live sstable, or another job holds it")]
    NotLive { generation: u64 },
    /// The database is shutting down or a background thread failed; no new work is accepted.
    #[error("the engine is closed")]
    Closed,
    /// A snapshot with this tag already exists for a table it was asked of (Cassandra's
    /// text).
    #[error("Snapshot {tag} already exists.")]
    SnapshotExists { tag: String },
    /// A snapshot tag that cannot name a snapshot directory.
    #[error("invalid snapshot name '{tag}': {reason}")]
    InvalidSnapshotTag { tag: String, reason: &'static str },
    /// A file in a table's `upload/` directory that `refresh` will not load; nothing was
    /// loaded.
    #[error("cannot load {}: {problem}", path.display())]
    Unloadable { path: PathBuf, problem: LoadProblem },
    /// Under [`crate::io::Wait::Never`], the operation would have waited (a read missing the
    /// page cache, full memtables, a commitlog sync or segment). Nothing was changed: retry it
    /// with [`crate::io::Wait::Allowed`] on a thread that may block.
    #[error("the operation would block")]
    WouldBlock,
    /// A write refused because the commitlog stopped after a failure (`commit_failure_policy`
    /// `stop` or `stop_commit`; the failure itself was logged and counted when it happened).
    #[error("the commitlog in {} stopped after a failure; writes are refused", dir.display())]
    CommitlogStopped { dir: PathBuf },
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A corruption error at `offset` of `path`.
    pub fn corruption(path: impl Into<PathBuf>, offset: u64, kind: CorruptionKind) -> Self {
        Error::Corruption {
            path: path.into(),
            offset,
            kind,
        }
    }

    /// The storage fault this error is — a corrupt sstable, an I/O error on a data file, a
    /// commitlog failure — with its file and offset; `None` for every other error (bad input,
    /// overload, a closed engine, …). See [`crate::fault`].
    pub fn storage_fault(&self) -> Option<StorageFault<'_>> {
        let (kind, path, offset) = match self {
            Error::Corruption { path, offset, .. } if is_commitlog_file(path) => {
                (FaultKind::Commitlog, path, Some(*offset))
            }
            Error::Corruption { path, offset, .. } => {
                (FaultKind::CorruptSSTable, path, Some(*offset))
            }
            Error::Io { path, .. } if is_commitlog_file(path) => (FaultKind::Commitlog, path, None),
            Error::Io { path, .. } => (FaultKind::DataIo, path, None),
            Error::CommitlogStopped { dir } => (FaultKind::CommitlogStopped, dir, None),
            _ => return None,
        };
        Some(StorageFault {
            kind,
            path: path.as_path(),
            offset,
        })
    }

    /// True when the failure is the disk being full (ENOSPC or EDQUOT).
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::Io { source, .. } => matches!(
                source.raw_os_error(),
                Some(libc::ENOSPC) | Some(libc::EDQUOT)
            ),
            _ => false,
        }
    }
}

/// Why `refresh` refuses a file of `upload/` (see [`Error::Unloadable`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadProblem {
    /// Not a component of a Cairn sstable (another database's file, or a stray one).
    NotCairnSSTable,
    /// The sstable lacks a component (the missing file's name).
    MissingComponent(String),
    /// The sstable has no statistics header recording its columns (written before Cairn
    /// recorded them), so it cannot be checked against the table.
    NoHeader,
    /// The sstable was written for a table whose columns differ (the text says how).
    Incompatible { table: String, reason: String },
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadProblem::NotCairnSSTable => {
                f.write_str("not a component of a Cairn sstable (ca-<generation>-<component>)")
            }
            LoadProblem::MissingComponent(c) => write!(f, "its sstable has no {c}"),
            LoadProblem::NoHeader => f.write_str(
                "the sstable does not record its columns (written by an older Cairn), so it cannot be checked against the table",
            ),
            LoadProblem::Incompatible { table, reason } => {
                write!(f, "the sstable was not written for a table like {table}: {reason}")
            }
        }
    }
}

/// Extension to attach a path to `std::io::Result`s.
pub trait IoResultExt<T> {
    /// Maps an `io::Error` to [`Error::Io`] naming `path`.
    fn with_path(self, path: &std::path::Path) -> Result<T>;
}

impl<T> IoResultExt<T> for std::io::Result<T> {
    fn with_path(self, path: &std::path::Path) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

impl std::error::Error for OptionError {}
