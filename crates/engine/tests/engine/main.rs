//! The engine's integration tests, one test binary: each module is one concern, exercised on
//! a real directory (and, for the crash tests, a real child process killed with SIGKILL).
//!
//! They are modules of a single binary rather than one binary per file because every test
//! binary links the whole engine again: one binary builds in a fraction of the time, and
//! `cargo test` runs its tests in parallel just the same. Select a module with its path,
//! e.g. `cargo test --release -p cairn-engine --test engine compaction::`.

mod common;

mod cache_memory;
mod commitlog_space;
mod compaction;
mod corruption;
mod crash_compaction;
mod crash_sigkill;
mod crash_snapshot;
mod disk_full;
mod engine_basics;
mod index_page_cache;
mod model_oracle;
mod nonblocking;
mod reader_suite;
mod row_cache;
mod snapshots;
mod sstable_scan;
