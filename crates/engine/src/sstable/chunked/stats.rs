//! Timing of codec calls (compress, decompress), for spotting calls long enough to stall a
//! reactor thread.

use std::time::Instant;

/// Timing of codec calls, for spotting calls long enough to stall a thread-per-core reactor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodecStats {
    /// Number of compress (or decompress) calls.
    pub calls: u64,
    /// Total time spent in them.
    pub total_nanos: u64,
    /// Calls that took 1 ms or more.
    pub stalls: u64,
    /// The longest single call.
    pub max_call_nanos: u64,
}

impl CodecStats {
    /// A call counts as a stall from this duration on.
    pub const STALL_NANOS: u64 = 1_000_000;

    /// Records one call of `nanos`.
    pub fn record(&mut self, nanos: u64) {
        self.calls += 1;
        self.total_nanos = self.total_nanos.saturating_add(nanos);
        if nanos >= Self::STALL_NANOS {
            self.stalls += 1;
        }
        self.max_call_nanos = self.max_call_nanos.max(nanos);
    }

    /// Adds another set of stats into this one.
    pub fn merge(&mut self, other: &CodecStats) {
        self.calls += other.calls;
        self.total_nanos = self.total_nanos.saturating_add(other.total_nanos);
        self.stalls += other.stalls;
        self.max_call_nanos = self.max_call_nanos.max(other.max_call_nanos);
    }
}

pub(super) fn elapsed_nanos(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
