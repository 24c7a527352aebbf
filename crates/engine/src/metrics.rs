//! Byte accounting: what the engine wrote and read, by purpose, per table.
//!
//! Counted at the point of I/O (every `write`, every `pread`), never estimated, so write,
//! space and read amplification are measurements.

use std::sync::atomic::{AtomicU64, Ordering};

/// Why bytes were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// Commitlog records.
    Commitlog = 0,
    /// Memtable flushes.
    Flush = 1,
    /// Compaction output.
    Compaction = 2,
    /// Anything else (schema, metadata).
    Other = 3,
}

/// Why bytes were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// Serving reads.
    Query = 0,
    /// Compaction input.
    Compaction = 1,
    /// Anything else (startup, tools).
    Other = 2,
}

/// Per-table I/O counters.
#[derive(Debug, Default)]
pub struct IoCounters {
    written: [AtomicU64; 4],
    read: [AtomicU64; 3],
    chunks_read: AtomicU64,
    index_pages_read: AtomicU64,
}

impl IoCounters {
    /// Counts bytes written.
    pub fn add_written(&self, kind: WriteKind, bytes: u64) {
        self.written[kind as usize].fetch_add(bytes, Ordering::Relaxed);
    }
    /// Counts bytes read.
    pub fn add_read(&self, kind: ReadKind, bytes: u64) {
        self.read[kind as usize].fetch_add(bytes, Ordering::Relaxed);
    }
    /// Counts one data chunk read from disk.
    pub fn add_chunk_read(&self) {
        self.chunks_read.fetch_add(1, Ordering::Relaxed);
    }
    /// Counts one index page (partition index or row index) read from disk.
    pub fn add_index_page_read(&self) {
        self.index_pages_read.fetch_add(1, Ordering::Relaxed);
    }
    /// Bytes written for `kind`.
    pub fn written(&self, kind: WriteKind) -> u64 {
        self.written[kind as usize].load(Ordering::Relaxed)
    }
    /// Bytes read for `kind`.
    pub fn read(&self, kind: ReadKind) -> u64 {
        self.read[kind as usize].load(Ordering::Relaxed)
    }
    /// Data chunks read.
    pub fn chunks_read(&self) -> u64 {
        self.chunks_read.load(Ordering::Relaxed)
    }
    /// Index pages read.
    pub fn index_pages_read(&self) -> u64 {
        self.index_pages_read.load(Ordering::Relaxed)
    }
}
