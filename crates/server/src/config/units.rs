//! Cassandra 4.1's unit-carrying values: durations (`10000ms`, `10s`), data sizes
//! (`32MiB`) and rates (`64MiB/s`), read from a YAML node, and a byte count written back in
//! the same notation for `system_views.settings`.
//!
//! Invariant: a value without a unit is an error (the unit-carrying key names require
//! one); a size or rate that overflows 64 bits is an error or saturates, never wraps.

use super::yaml::Node;
use super::MIB;
use std::time::Duration;

impl Node {
    /// Cassandra 4.1 durations: `10000ms`, `10s`, `3h`, `1d`, `500us`…
    pub(super) fn duration_min(&self, min: Duration) -> Result<Duration, String> {
        let s = self.scalar()?.trim();
        let (num, unit) = split_unit(s);
        let n: u64 = num.parse().map_err(|_| {
            format!("`{s}` is not a duration (a number and a unit: ms, s, m, h, d, us, ns)")
        })?;
        let d = match unit.to_ascii_lowercase().as_str() {
            "ns" => Duration::from_nanos(n),
            "us" | "µs" => Duration::from_micros(n),
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.saturating_mul(60)),
            "h" => Duration::from_secs(n.saturating_mul(3600)),
            "d" => Duration::from_secs(n.saturating_mul(86400)),
            "" => return Err(format!("`{s}` has no unit (ms, s, m, h, d, us, ns)")),
            other => return Err(format!("unknown duration unit `{other}` in `{s}`")),
        };
        if d < min {
            return Err(format!("`{s}` is below the minimum {min:?}"));
        }
        Ok(d)
    }

    /// Cassandra 4.1 data sizes: `32MiB`, `1024KiB`, `1GiB`, `512B`.
    pub(super) fn size_in(&self, min: u64, max: u64) -> Result<u64, String> {
        let s = self.scalar()?.trim();
        let (num, unit) = split_unit(s);
        let n: u64 = num
            .parse()
            .map_err(|_| format!("`{s}` is not a data size (a number and B, KiB, MiB or GiB)"))?;
        let mult = size_unit(unit)
            .ok_or_else(|| format!("unknown or missing size unit in `{s}` (B, KiB, MiB or GiB)"))?;
        let b = n
            .checked_mul(mult)
            .ok_or_else(|| format!("`{s}` is too large"))?;
        if b < min || b > max {
            return Err(format!("`{s}` is out of range ({min} to {max} bytes)"));
        }
        Ok(b)
    }

    /// Cassandra 4.1 rates, in whole MiB/s: `64MiB/s`, `0MiB/s`, `65536KiB/s`.
    pub(super) fn rate_mib(&self) -> Result<u64, String> {
        let s = self.scalar()?.trim();
        let Some(per_sec) = s.strip_suffix("/s") else {
            return Err(format!("`{s}` is not a rate (e.g. 64MiB/s)"));
        };
        let (num, unit) = split_unit(per_sec);
        let n: u64 = num
            .parse()
            .map_err(|_| format!("`{s}` is not a rate (e.g. 64MiB/s)"))?;
        let mult = size_unit(unit)
            .ok_or_else(|| format!("unknown rate unit in `{s}` (B/s, KiB/s, MiB/s, GiB/s)"))?;
        Ok(n.saturating_mul(mult).div_ceil(MIB))
    }
}

/// A byte count in Cassandra 4.1's notation, in the largest unit that divides it.
pub(super) fn size(bytes: u64) -> String {
    match bytes {
        0 => "0MiB".into(),
        b if b % MIB == 0 => format!("{}MiB", b / MIB),
        b if b % 1024 == 0 => format!("{}KiB", b / 1024),
        b => format!("{b}B"),
    }
}

fn split_unit(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

fn size_unit(unit: &str) -> Option<u64> {
    match unit {
        "B" => Some(1),
        "KiB" => Some(1 << 10),
        "MiB" => Some(MIB),
        "GiB" => Some(1 << 30),
        _ => None,
    }
}
