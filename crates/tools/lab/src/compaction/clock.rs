//! The lab's clock: seconds since the epoch as the engine's compaction sees them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Seconds since the epoch as the engine's compaction sees them; runs faster than real time
/// for the timeseries workload, and can be frozen once the writes stop.
pub(super) struct VirtualClock {
    pub(super) base_secs: f64,
    pub(super) start: Instant,
    pub(super) speed: f64,
    /// Frozen virtual time in ms (0 = running).
    pub(super) frozen_ms: AtomicU64,
}

impl VirtualClock {
    pub(super) fn new(speed: f64) -> Self {
        let base_secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        VirtualClock {
            base_secs,
            start: Instant::now(),
            speed,
            frozen_ms: AtomicU64::new(0),
        }
    }

    pub(super) fn now_f64(&self) -> f64 {
        let f = self.frozen_ms.load(Ordering::Relaxed);
        if f != 0 {
            return f as f64 / 1000.0;
        }
        self.base_secs + self.start.elapsed().as_secs_f64() * self.speed
    }

    pub(super) fn now_secs(&self) -> u32 {
        self.now_f64() as u32
    }

    pub(super) fn now_micros(&self) -> i64 {
        (self.now_f64() * 1e6) as i64
    }

    pub(super) fn freeze(&self) {
        let ms = (self.now_f64() * 1000.0) as u64;
        self.frozen_ms.store(ms.max(1), Ordering::Relaxed);
    }
}
