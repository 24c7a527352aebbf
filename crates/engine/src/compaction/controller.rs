//! The backlog controller: compaction gets more CPU the further it falls behind.
//!
//! As ScyllaDB's `backlog_controller`: the normalised backlog (the strategies' backlog in
//! bytes of pending rewrite work, summed over tables, divided by the memory available for
//! memtables) maps piecewise-linearly to *shares* through the control points
//! `{0 → 50, 1.5 → 100, 30 → 1000}`; foreground work has 1000. ScyllaDB's scheduler divides
//! CPU by shares; Cairn's compaction runs on OS threads, so shares become the threads' nice
//! value (the kernel's CFS weight shrinks ~1.25× per nice step: 1000 shares = nice 0,
//! 100 ≈ nice 10, 50 ≈ nice 13). Like shares, nice only matters when the CPU is contended:
//! an idle machine still compacts at full speed.
//!
//! Raising a thread's priority back (lowering nice) needs `CAP_SYS_NICE` or a permissive
//! `RLIMIT_NICE`; where that is refused the controller leaves priorities alone, so compaction
//! can never be stuck at low priority.

/// ScyllaDB's default control points: (normalised backlog, shares).
pub const CONTROL_POINTS: [(f64, f64); 3] = [(0.0, 50.0), (1.5, 100.0), (30.0, 1000.0)];

/// Shares for a normalised backlog.
pub fn shares(normalized_backlog: f64) -> f64 {
    let b = if normalized_backlog.is_finite() {
        normalized_backlog.max(0.0)
    } else {
        0.0
    };
    for w in CONTROL_POINTS.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if b <= x1 {
            return y0 + (y1 - y0) * (b - x0) / (x1 - x0);
        }
    }
    CONTROL_POINTS[CONTROL_POINTS.len() - 1].1
}

/// The nice value giving a thread `shares` out of foreground's 1000.
pub fn nice_for_shares(shares: f64) -> i32 {
    let s = shares.clamp(15.0, 1000.0);
    ((1000.0 / s).ln() / 1.25f64.ln()).round().clamp(0.0, 19.0) as i32
}

/// The calling thread's kernel id (for [`set_nice`] from another thread).
pub fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Sets a thread's nice value; false when the kernel refuses.
pub fn set_nice(tid: i32, nice: i32) -> bool {
    // SAFETY: setpriority only reads its integer arguments.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_points() {
        assert_eq!(shares(0.0), 50.0);
        assert_eq!(shares(1.5), 100.0);
        assert_eq!(shares(30.0), 1000.0);
        assert_eq!(shares(100.0), 1000.0);
        assert_eq!(shares(f64::NAN), 50.0);
        assert!((shares(0.75) - 75.0).abs() < 1e-9);
        assert_eq!(nice_for_shares(1000.0), 0);
        assert_eq!(nice_for_shares(100.0), 10);
        assert_eq!(nice_for_shares(50.0), 13);
    }
}
