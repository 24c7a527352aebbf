//! Calendar arithmetic, the text forms of `timestamp`, `date` and `time`, and UUID helpers
//! (text form, version-1 timestamps).
//!
//! - `timestamp`: milliseconds since the Unix epoch (i64). Accepted text (Cassandra's
//!   `TimestampSerializer` patterns): `yyyy-mm-dd`, optionally followed by ` ` or `T` and
//!   `HH:MM`, `HH:MM:SS` or `HH:MM:SS.f…`, then optionally a zone: `Z`, `+HH`, `+HHMM`,
//!   `+HH:MM` (or `-`), `UTC`/`GMT`, with or without a space before it. Without a zone the
//!   time is UTC (Cassandra uses the server's zone; servers run in UTC). The fraction is a
//!   fraction of a second (`.5` is 500 ms) truncated to milliseconds — Cassandra 4's
//!   `SimpleDateFormat` reads the digits as a millisecond count instead, which only differs
//!   for fractions that are not exactly three digits.
//! - `date`: days since the epoch, stored as an unsigned u32 with the epoch at 2^31. Text is
//!   ISO `yyyy-mm-dd` (years past 9999 written with a `+`).
//! - `time`: nanoseconds since midnight; text `HH:MM:SS[.fffffffff]`.
//! - version-1 UUIDs count 100 ns intervals since 1582-10-15 (the Gregorian reform).

/// 100-ns intervals between 1582-10-15 and 1970-01-01.
pub const GREGORIAN_OFFSET: i64 = 0x01B2_1DD2_1381_4000;

/// Milliseconds in a day.
pub const MILLIS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

fn valid_date(y: i64, m: u32, d: u32) -> bool {
    (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m)
}

/// A tiny cursor over ASCII text.
struct Scan<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Between `min` and `max` digits.
    fn digits(&mut self, min: usize, max: usize) -> Option<(i64, usize)> {
        let start = self.pos;
        let mut v: i64 = 0;
        while self.pos - start < max {
            match self.peek() {
                Some(c) if c.is_ascii_digit() => {
                    v = v.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
                    self.pos += 1;
                }
                _ => break,
            }
        }
        let n = self.pos - start;
        (n >= min).then_some((v, n))
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn rest(&self) -> &[u8] {
        self.s.get(self.pos..).unwrap_or_default()
    }
}

/// Parses a timestamp text (see the module docs) to milliseconds since the epoch.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let mut sc = Scan {
        s: text.as_bytes(),
        pos: 0,
    };
    let (y, _) = sc.digits(1, 9)?;
    if !sc.eat(b'-') {
        return None;
    }
    let (m, _) = sc.digits(1, 2)?;
    if !sc.eat(b'-') {
        return None;
    }
    let (d, _) = sc.digits(1, 2)?;
    let (m, d) = (m as u32, d as u32);
    if !valid_date(y, m, d) {
        return None;
    }
    let mut millis = days_from_civil(y, m, d).checked_mul(MILLIS_PER_DAY)?;
    // Time of day.
    let save = sc.pos;
    if sc.eat(b' ') || sc.eat(b'T') {
        if let Some((hh, _)) = sc.digits(1, 2) {
            if !sc.eat(b':') {
                return None;
            }
            let (mm, _) = sc.digits(1, 2)?;
            let mut ss = 0;
            let mut frac_ms = 0;
            if sc.eat(b':') {
                ss = sc.digits(1, 2)?.0;
                if sc.eat(b'.') {
                    let start = sc.pos;
                    let (_, n) = sc.digits(1, 64)?;
                    let digits = sc.s.get(start..start + n)?;
                    for (i, c) in digits.iter().take(3).enumerate() {
                        frac_ms += i64::from(c - b'0') * 10i64.pow(2 - i as u32);
                    }
                }
            }
            if hh > 23 || mm > 59 || ss > 59 {
                return None;
            }
            millis += ((hh * 60 + mm) * 60 + ss) * 1000 + frac_ms;
        } else {
            // Only a zone after a space, e.g. `2024-01-01 +0000`.
            sc.pos = save;
        }
    }
    // Zone.
    if sc.at_end() {
        return Some(millis);
    }
    while sc.eat(b' ') {}
    let offset_minutes: i64 = match sc.rest() {
        b"Z" | b"UTC" | b"GMT" => {
            sc.pos = sc.s.len();
            0
        }
        _ => {
            if sc.rest().starts_with(b"GMT") || sc.rest().starts_with(b"UTC") {
                sc.pos += 3;
            }
            let sign = match sc.peek()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            sc.pos += 1;
            let (hh, n) = sc.digits(1, 2)?;
            let mut mm = 0;
            if sc.eat(b':') {
                mm = sc.digits(2, 2)?.0;
            } else if n == 2 {
                if let Some((v, _)) = sc.digits(2, 2) {
                    mm = v;
                }
            }
            if hh > 23 || mm > 59 {
                return None;
            }
            sign * (hh * 60 + mm)
        }
    };
    if !sc.at_end() {
        return None;
    }
    Some(millis - offset_minutes * 60_000)
}

/// `yyyy-mm-dd` for a day number, as Java's `ISO_LOCAL_DATE` prints it.
pub fn format_date_days(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    let year = if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    };
    format!("{year}-{m:02}-{d:02}")
}

/// `(date, HH:MM:SS, millis)` parts of a timestamp in UTC.
fn timestamp_parts(millis: i64) -> (String, i64, i64, i64, i64) {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let in_day = millis.rem_euclid(MILLIS_PER_DAY);
    let ms = in_day % 1000;
    let secs = in_day / 1000;
    (
        format_date_days(days),
        secs / 3600,
        (secs / 60) % 60,
        secs % 60,
        ms,
    )
}

/// `2024-01-01 00:00:00.000000+0000`: the form cqlsh prints and `DESCRIBE` uses.
pub fn format_timestamp_cql(millis: i64) -> String {
    let (date, h, m, s, ms) = timestamp_parts(millis);
    format!("{date} {h:02}:{m:02}:{s:02}.{ms:03}000+0000")
}

/// `2024-01-01T00:00:00.000Z`: Cassandra's `toString` of a timestamp in UTC (what
/// `CAST(ts AS text)` returns).
pub fn format_timestamp_iso(millis: i64) -> String {
    let (date, h, m, s, ms) = timestamp_parts(millis);
    format!("{date}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// Parses ISO `yyyy-mm-dd` strictly (4-digit year, or a signed longer year) to days since
/// the epoch.
pub fn parse_date(text: &str) -> Option<i64> {
    let mut sc = Scan {
        s: text.as_bytes(),
        pos: 0,
    };
    let sign = if sc.eat(b'+') {
        Some(1)
    } else if sc.eat(b'-') {
        Some(-1)
    } else {
        None
    };
    let (y, n) = sc.digits(4, 10)?;
    if n > 4 && sign.is_none() {
        return None;
    }
    let y = y * sign.unwrap_or(1);
    if !sc.eat(b'-') {
        return None;
    }
    let (m, _) = sc.digits(2, 2)?;
    if !sc.eat(b'-') {
        return None;
    }
    let (d, _) = sc.digits(2, 2)?;
    if !sc.at_end() || !valid_date(y, m as u32, d as u32) {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32))
}

/// Parses `HH:MM:SS[.fffffffff]` (Cassandra's `TimeSerializer`) to nanoseconds since
/// midnight.
pub fn parse_time(text: &str) -> Option<i64> {
    let mut sc = Scan {
        s: text.trim().as_bytes(),
        pos: 0,
    };
    let (h, _) = sc.digits(1, 9)?;
    if !sc.eat(b':') {
        return None;
    }
    let (m, _) = sc.digits(1, 9)?;
    if !sc.eat(b':') {
        return None;
    }
    let (s, _) = sc.digits(1, 9)?;
    let mut nanos = 0;
    if sc.eat(b'.') {
        let (f, n) = sc.digits(1, 9)?;
        nanos = f * 10i64.pow(9 - n as u32);
    }
    if !sc.at_end() || h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(((h * 60 + m) * 60 + s) * 1_000_000_000 + nanos)
}

/// `HH:MM:SS.fffffffff` (Cassandra's `TimeSerializer.toString`).
pub fn format_time(nanos: i64) -> String {
    let n = nanos.rem_euclid(1_000_000_000);
    let secs = nanos.div_euclid(1_000_000_000);
    format!(
        "{:02}:{:02}:{:02}.{n:09}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Parses the 8-4-4-4-12 hex text of a UUID.
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let b = text.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut out = [0u8; 16];
    let mut nibbles = Vec::with_capacity(32);
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return None;
            }
            continue;
        }
        nibbles.push((c as char).to_digit(16)? as u8);
    }
    for (i, pair) in nibbles.chunks(2).enumerate() {
        if let (Some(slot), [hi, lo]) = (out.get_mut(i), pair) {
            *slot = (hi << 4) | lo;
        }
    }
    Some(out)
}

/// Lower-case 8-4-4-4-12 text of 16 bytes.
pub fn format_uuid(u: &[u8]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The 60-bit timestamp (100 ns since 1582-10-15) of a version-1 UUID.
pub fn v1_timestamp(u: &[u8; 16]) -> i64 {
    let time_low = u64::from(u32::from_be_bytes([u[0], u[1], u[2], u[3]]));
    let time_mid = u64::from(u16::from_be_bytes([u[4], u[5]]));
    let time_hi = u64::from(u16::from_be_bytes([u[6], u[7]]) & 0x0FFF);
    ((time_hi << 48) | (time_mid << 32) | time_low) as i64
}

/// A version-1 UUID from a 60-bit timestamp and the 64-bit clock-sequence-and-node half
/// (whose variant bits the caller chooses).
pub fn make_v1(timestamp: i64, clock_seq_and_node: u64) -> [u8; 16] {
    let ts = timestamp as u64 & 0x0FFF_FFFF_FFFF_FFFF;
    let mut out = [0u8; 16];
    out[..4].copy_from_slice(&(ts as u32).to_be_bytes());
    out[4..6].copy_from_slice(&((ts >> 32) as u16).to_be_bytes());
    out[6..8].copy_from_slice(&(((ts >> 48) as u16 & 0x0FFF) | 0x1000).to_be_bytes());
    out[8..].copy_from_slice(&clock_seq_and_node.to_be_bytes());
    out
}

/// Unix milliseconds of a version-1 UUID (Cassandra's `UUIDGen.unixTimestamp`).
pub fn v1_unix_millis(u: &[u8; 16]) -> i64 {
    (v1_timestamp(u) - GREGORIAN_OFFSET).div_euclid(10_000)
}

/// Lowest clock-sequence-and-node half in `timeuuid` order (bytes compared signed).
pub const MIN_CLOCK_SEQ_AND_NODE: u64 = 0x8080_8080_8080_8080;
/// Highest clock-sequence-and-node half in `timeuuid` order.
pub const MAX_CLOCK_SEQ_AND_NODE: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// `minTimeuuid(ms)`: the smallest timeuuid of that millisecond.
pub fn min_timeuuid(millis: i64) -> [u8; 16] {
    make_v1(
        millis
            .saturating_mul(10_000)
            .saturating_add(GREGORIAN_OFFSET),
        MIN_CLOCK_SEQ_AND_NODE,
    )
}

/// `maxTimeuuid(ms)`: the largest timeuuid of that millisecond.
pub fn max_timeuuid(millis: i64) -> [u8; 16] {
    make_v1(
        millis
            .saturating_add(1)
            .saturating_mul(10_000)
            .saturating_add(GREGORIAN_OFFSET)
            - 1,
        MAX_CLOCK_SEQ_AND_NODE,
    )
}

// ---------------------------------------------------------------------------------------
// Durations added to instants (Cassandra's `Duration.addTo`)

/// The first day of the Gregorian calendar in `java.util.GregorianCalendar`, 1582-10-15,
/// in days since the epoch; earlier instants are Julian dates there.
const GREGORIAN_CUTOVER_DAY: i64 = -141_427;

/// Days since 1970-01-01 of a proleptic Julian date (astronomical years).
fn days_from_julian(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    // Julian 0000-03-01 is day -719470; four-year cycles of 1461 days from there.
    365 * y + y.div_euclid(4) + doy - 719_470
}

/// The proleptic Julian date of a day number (inverse of [`days_from_julian`]).
fn julian_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_470;
    let cycle = z.div_euclid(1461);
    let r = z.rem_euclid(1461);
    let yoc = (r - r / 1460) / 365;
    let doy = r - 365 * yoc;
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = cycle * 4 + yoc;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The date of a day in `GregorianCalendar`'s hybrid calendar: Julian before the cutover.
fn hybrid_from_days(days: i64) -> (i64, u32, u32) {
    if days >= GREGORIAN_CUTOVER_DAY {
        civil_from_days(days)
    } else {
        julian_from_days(days)
    }
}

/// The day of a hybrid-calendar date: a Gregorian date from the cutover on, Julian before
/// (so the ten days skipped in October 1582 read as the Julian dates they were).
fn hybrid_to_days(y: i64, m: u32, d: u32) -> i64 {
    let g = days_from_civil(y, m, d);
    if g >= GREGORIAN_CUTOVER_DAY {
        g
    } else {
        days_from_julian(y, m, d)
    }
}

/// Month length in the hybrid calendar (Julian leap years before 1582).
fn hybrid_days_in_month(y: i64, m: u32) -> u32 {
    if m == 2 && (y < 1582) {
        if y.rem_euclid(4) == 0 {
            29
        } else {
            28
        }
    } else {
        days_in_month(y, m)
    }
}

/// Cassandra's `Duration.addTo(millis)` (and `substractFrom` with negated parts): without
/// months, days and whole milliseconds are added to the instant; with months, UTC
/// `GregorianCalendar` arithmetic — months first (the day pinned to the new month's length,
/// Julian rules before 1582-10-15), then days, then the milliseconds of `nanos` as a Java
/// `int` (which wraps past 24.8 days, as Cassandra's does). Java's `long` overflow wraps.
pub fn add_duration_millis(millis: i64, months: i32, days: i32, nanos: i64) -> i64 {
    if months == 0 {
        let shift = i64::from(days)
            .wrapping_mul(MILLIS_PER_DAY)
            .wrapping_add(nanos / 1_000_000);
        return millis.wrapping_add(shift);
    }
    let day = millis.div_euclid(MILLIS_PER_DAY);
    let time_of_day = millis.rem_euclid(MILLIS_PER_DAY);
    let (y, m, d) = hybrid_from_days(day);
    let month_index = i64::from(m) - 1 + i64::from(months);
    let y = y + month_index.div_euclid(12);
    let m = (month_index.rem_euclid(12) + 1) as u32;
    let d = d.min(hybrid_days_in_month(y, m));
    let base = i128::from(hybrid_to_days(y, m, d)) * i128::from(MILLIS_PER_DAY)
        + i128::from(time_of_day)
        + i128::from(days) * i128::from(MILLIS_PER_DAY)
        + i128::from((nanos / 1_000_000) as i32);
    base as i64
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn durations_added_like_gregorian_calendar() {
        let ts = |s: &str| parse_timestamp(s).unwrap();
        let add = |s: &str, m: i32, d: i32, n: i64| {
            format_timestamp_iso(add_duration_millis(ts(s), m, d, n))
        };
        const H: i64 = 3_600_000_000_000;
        // Checked against Cassandra 5.0.9 (`SELECT ts + 1mo1d1h`, …).
        assert_eq!(add("2024-01-01", 1, 1, H), "2024-02-02T01:00:00.000Z");
        assert_eq!(add("2024-01-01", -13, 0, 0), "2022-12-01T00:00:00.000Z");
        assert_eq!(add("2024-01-31", 1, 0, 0), "2024-02-29T00:00:00.000Z");
        assert_eq!(
            add("2024-01-01", 0, 0, 2000 * H),
            "2024-03-24T08:00:00.000Z"
        );
        // With months, the milliseconds are a Java int: 600h wraps.
        assert_eq!(add("2024-01-01", 1, 0, 600 * H), "2024-01-07T06:57:12.704Z");
        assert_eq!(add("2024-01-01", 0, 0, 600 * H), "2024-01-26T00:00:00.000Z");
        // Julian months before the cutover; dates in the skipped days read as Julian.
        assert_eq!(add("1500-03-31", -1, 0, 0), "1500-03-02T00:00:00.000Z");
        assert_eq!(add("1582-11-14", -1, 0, 0), "1582-10-24T00:00:00.000Z");
        assert_eq!(add("1582-10-15", 0, -1, 0), "1582-10-14T00:00:00.000Z");
        for days in [-800_000i64, -141_428, -141_427, 0, 50_000] {
            let (y, m, d) = julian_from_days(days);
            assert_eq!(days_from_julian(y, m, d), days);
        }
        // Extreme values wrap instead of panicking.
        add_duration_millis(i64::MAX, i32::MAX, i32::MAX, i64::MAX);
        add_duration_millis(i64::MIN, i32::MIN, i32::MIN, i64::MIN);
    }

    #[test]
    fn civil_round_trip() {
        for days in [
            -1_000_000i64,
            -719_468,
            -1,
            0,
            1,
            19_723,
            2_932_896,
            10_000_000,
        ] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2024, 1, 1), 19_723);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn timestamps() {
        let base = 1_704_067_200_000i64; // 2024-01-01T00:00:00Z
        for (text, ms) in [
            ("2024-01-01", base),
            ("2024-01-01 00:00", base),
            ("2024-01-01T00:00:00", base),
            ("2024-01-01 00:00:00.123", base + 123),
            ("2024-01-01 00:00:00.5", base + 500),
            ("2024-01-01 00:00:00.123456", base + 123),
            ("2024-01-01 01:00:00+0100", base),
            ("2024-01-01 01:00:00 +01:00", base),
            ("2024-01-01T01:00+01", base),
            ("2024-01-01 00:00:00Z", base),
            ("2024-01-01 00:00:00 UTC", base),
            ("2023-12-31 23:00:00-0100", base),
            ("2024-01-01Z", base),
            ("2024-01-01 +0000", base),
            ("1969-12-31 23:59:59.999", -1),
        ] {
            assert_eq!(parse_timestamp(text), Some(ms), "{text}");
        }
        for bad in [
            "",
            "2024",
            "2024-13-01",
            "2024-02-30",
            "2024-01-01 25:00",
            "2024-01-01 00",
            "2024-01-01 00:00:00.",
            "2024-01-01 00:00 PST8",
            "now",
            "2024-01-01x",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
        assert_eq!(
            format_timestamp_cql(base + 123),
            "2024-01-01 00:00:00.123000+0000"
        );
        assert_eq!(format_timestamp_iso(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2024-01-01"), Some(19_723));
        assert_eq!(parse_date("-0001-01-01"), Some(days_from_civil(-1, 1, 1)));
        assert_eq!(
            parse_date("+10000-01-01"),
            Some(days_from_civil(10000, 1, 1))
        );
        for bad in [
            "70-01-01",
            "1970-1-01",
            "10000-01-01",
            "1970-02-29",
            "1970-01-01 ",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert_eq!(format_date_days(0), "1970-01-01");
        assert_eq!(
            format_date_days(days_from_civil(10000, 1, 1)),
            "+10000-01-01"
        );
        assert_eq!(parse_time("00:00:00"), Some(0));
        assert_eq!(parse_time("1:2:3"), Some(3_723_000_000_000));
        assert_eq!(parse_time("12:34:56.789"), Some(45_296_789_000_000));
        assert_eq!(parse_time("23:59:59.999999999"), Some(86_399_999_999_999));
        for bad in [
            "24:00:00",
            "12:60:00",
            "12:00",
            "12:00:00.",
            "12:00:00.1234567890",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
        assert_eq!(format_time(45_296_789_000_001), "12:34:56.789000001");
    }

    #[test]
    fn uuids() {
        let text = "e7cd5752-bc0d-11ea-b3de-0242ac130004";
        let u = parse_uuid(text).unwrap();
        assert_eq!(format_uuid(&u), text);
        assert_eq!(parse_uuid(&text.to_uppercase()), Some(u));
        assert!(parse_uuid("e7cd5752bc0d11eab3de0242ac130004").is_none());
        let min = min_timeuuid(1000);
        let max = max_timeuuid(1000);
        assert_eq!(v1_unix_millis(&min), 1000);
        assert_eq!(v1_unix_millis(&max), 1000);
        assert_eq!(v1_timestamp(&max) - v1_timestamp(&min), 9_999);
        assert_eq!(min[6] >> 4, 1);
        let u = make_v1(GREGORIAN_OFFSET + 123_456_789, 0x8000_0000_0000_0001);
        assert_eq!(v1_timestamp(&u), GREGORIAN_OFFSET + 123_456_789);
    }
}
