//! `compaction_throughput_mb_per_sec`: a token bucket shared by every compaction job.
//!
//! Jobs call [`Throttle::acquire`] with the bytes they just processed; when the bucket is
//! empty the job sleeps until the rate allows. A rate of 0 means unlimited. The bucket holds
//! at most one second's worth, so an idle period does not buy a burst larger than that.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A shared rate limit in bytes per second.
#[derive(Debug)]
pub struct Throttle {
    bytes_per_sec: AtomicU64,
    bucket: Mutex<(Instant, f64)>,
}

impl Throttle {
    /// A limit of `bytes_per_sec` (0 = unlimited).
    pub fn new(bytes_per_sec: u64) -> Self {
        Throttle {
            bytes_per_sec: AtomicU64::new(bytes_per_sec),
            bucket: Mutex::new((Instant::now(), 0.0)),
        }
    }

    /// Changes the limit (`nodetool setcompactionthroughput`); 0 = unlimited.
    pub fn set(&self, bytes_per_sec: u64) {
        self.bytes_per_sec.store(bytes_per_sec, Ordering::Relaxed);
    }

    /// The current limit in bytes per second (0 = unlimited).
    pub fn get(&self) -> u64 {
        self.bytes_per_sec.load(Ordering::Relaxed)
    }

    /// Accounts `bytes`, sleeping as long as the rate requires.
    pub fn acquire(&self, bytes: u64) {
        let wait = self.reserve(bytes, Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
    }

    /// Takes `bytes` from the bucket at `now`; returns how long the caller must wait.
    fn reserve(&self, bytes: u64, now: Instant) -> Duration {
        let rate = self.get();
        let mut b = self.bucket.lock();
        if rate == 0 {
            *b = (now, 0.0);
            return Duration::ZERO;
        }
        let rate = rate as f64;
        let refill = now.saturating_duration_since(b.0).as_secs_f64() * rate;
        let tokens = (b.1 + refill).min(rate) - bytes as f64;
        *b = (now, tokens);
        if tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-tokens / rate)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlimited_never_waits() {
        let t = Throttle::new(0);
        let now = Instant::now();
        for _ in 0..1000 {
            assert_eq!(t.reserve(1 << 30, now), Duration::ZERO);
        }
    }

    #[test]
    fn limit_paces_and_caps_the_burst() {
        let t = Throttle::new(1_000_000);
        let t0 = Instant::now();
        // Starts empty: 500 KB at 1 MB/s means waiting 0.5 s.
        let w = t.reserve(500_000, t0);
        assert!((w.as_secs_f64() - 0.5).abs() < 1e-6, "{w:?}");
        // A second later the debt is paid and 0.5 s of credit earned.
        assert_eq!(
            t.reserve(500_000, t0 + Duration::from_secs(1)),
            Duration::ZERO
        );
        // Ten idle seconds buy at most one second's worth.
        let w = t.reserve(1_500_000, t0 + Duration::from_secs(11));
        assert!((w.as_secs_f64() - 0.5).abs() < 1e-6, "{w:?}");
        t.set(0);
        assert_eq!(t.reserve(u64::MAX / 2, t0), Duration::ZERO);
    }
}
