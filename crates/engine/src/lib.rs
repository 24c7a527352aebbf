//! Cairn's storage engine: commitlog, memtables, chunk-compressed sstables and merging reads.
//!
//! The engine is synchronous and thread-safe. It knows nothing of sockets or CQL text: the
//! `cql` crate turns statements into [`model::Partition`] mutations and read commands.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod cache;
pub mod commitlog;
pub mod compaction;
pub mod database;
pub mod error;
pub mod fault;
pub mod io;
pub mod java;
pub mod memtable;
pub mod metrics;
pub mod model;
pub mod read;
pub mod schema;
pub mod snapshot;
pub mod sstable;
pub mod table;
pub mod trace;
pub mod view_update;

pub use database::{Database, DatabaseConfig, RecoveryReport};
pub use error::{CorruptionKind, Error, FaultKind, LoadProblem, OptionError, Result, StorageFault};
pub use fault::{CommitFailurePolicy, DiskFailurePolicy};
pub use io::Wait;
pub use read::{PartitionResult, ReadCommand};
pub use trace::{Trace, TraceSink};
