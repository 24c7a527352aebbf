//! What every worker task of a run shares: the arguments, the prepared statements, the wire
//! connections, the per-worker interval histograms and the stop flag.

use crate::args::{BenchArgs, RowSize};
use crate::stats::{Interval, Kind};
use bytes::Bytes;
use cairn_protocol::Consistency;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Mutex;

/// A statement prepared on every connection: its text, to prepare it again if the node
/// forgets it, and its id.
pub(crate) struct Statement {
    pub(crate) query: String,
    pub(crate) id: Bytes,
}

/// Everything a worker needs, shared.
pub(crate) struct Shared {
    pub(crate) args: BenchArgs,
    pub(crate) client: crate::wire::Client,
    pub(crate) consistency: Consistency,
    pub(crate) row_size: RowSize,
    pub(crate) insert: Statement,
    pub(crate) read: Statement,
    pub(crate) delete: Statement,
    pub(crate) scan: Statement,
    pub(crate) mix: Vec<(Kind, u32)>,
    pub(crate) stop: AtomicBool,
    /// Set once every connection is closed (the run then stops and exits with status 1).
    pub(crate) lost: AtomicBool,
    /// Set when the warm-up is over: workers then discard what they measured so far.
    pub(crate) epoch: AtomicU64,
    pub(crate) errors_printed: AtomicU64,
    pub(crate) slots: Vec<Mutex<Interval>>,
    /// Each worker's request deadline (`-timeout`).
    pub(crate) deadlines: crate::deadline::Deadlines,
    pub(crate) run_start_ns: i64,
    pub(crate) period_ns: i64,
}
