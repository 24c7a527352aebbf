//! Clock and CPU readings: wall time in nanoseconds, this process's CPU (getrusage) and the
//! server's (from `/proc/PID/stat`).

use anyhow::{anyhow, Context, Result};
use std::time::Duration;

pub fn unix_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Process CPU time (user + system) from getrusage.
pub(crate) fn self_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// CPU time (utime + stime) of another process, from /proc/PID/stat.
pub fn proc_cpu(pid: u32) -> Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')').ok_or_else(|| anyhow!("bad /proc stat"))? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 (1-based), i.e. 11 and 12 after the state field.
    let field = |i: usize| -> Result<u64> {
        let v = f
            .get(i)
            .ok_or_else(|| anyhow!("/proc/{pid}/stat: too few fields"))?;
        Ok(v.parse::<u64>()?)
    };
    let ticks = field(11)? + field(12)?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Ok(Duration::from_nanos(ticks * 1_000_000_000 / hz))
}
