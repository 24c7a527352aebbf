//! A snapshot's `manifest.json`, in the layout of Cassandra 4 and 5:
//!
//! ```json
//! {"files":["ca-3-Data.db"],"created_at":"2026-11-23T10:15:30.123Z","expires_at":null,"ephemeral":false}
//! ```
//!
//! `files` names each sstable's data component (as Cassandra lists its `Data.db` files);
//! times are ISO-8601 instants in UTC, as Java's `Instant.toString` prints them. The reader
//! accepts any flat JSON object and picks the fields it knows, so a manifest written by
//! Cassandra, or edited by hand, still lists; what it cannot read is reported as absent.

/// What a manifest records.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// The data files of the snapshot's sstables.
    pub files: Vec<String>,
    /// When the snapshot was taken (ms since the epoch).
    pub created_at_ms: Option<i64>,
    /// When it expires (`nodetool snapshot --ttl`), if ever.
    pub expires_at_ms: Option<i64>,
    /// Ephemeral snapshots are Cassandra's internal ones (repair); Cairn takes none.
    pub ephemeral: bool,
}

impl Manifest {
    /// The manifest as JSON.
    pub fn to_json(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| quote(f)).collect();
        let instant =
            |ms: Option<i64>| ms.map_or("null".to_string(), |ms| quote(&format_instant(ms)));
        format!(
            "{{\"files\":[{}],\"created_at\":{},\"expires_at\":{},\"ephemeral\":{}}}\n",
            files.join(","),
            instant(self.created_at_ms),
            instant(self.expires_at_ms),
            self.ephemeral
        )
    }

    /// Reads a manifest; `None` when the text is not a JSON object.
    pub fn parse(text: &str) -> Option<Manifest> {
        let mut p = Parser {
            s: text.as_bytes(),
            pos: 0,
        };
        let mut m = Manifest::default();
        p.expect(b'{')?;
        if p.peek() == Some(b'}') {
            return Some(m);
        }
        loop {
            let key = p.string()?;
            p.expect(b':')?;
            match (key.as_str(), p.value()?) {
                ("files", Value::Strings(files)) => m.files = files,
                ("created_at", Value::Str(s)) => m.created_at_ms = parse_instant(&s),
                ("expires_at", Value::Str(s)) => m.expires_at_ms = parse_instant(&s),
                ("ephemeral", Value::Bool(b)) => m.ephemeral = b,
                _ => {}
            }
            match p.next()? {
                b',' => continue,
                b'}' => return Some(m),
                _ => return None,
            }
        }
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A manifest value, as far as the reader cares.
enum Value {
    Str(String),
    Bool(bool),
    Strings(Vec<String>),
    Other,
}

/// A small JSON reader for one flat object: strings, booleans, `null`, numbers and arrays of
/// scalars. Nesting beyond that is refused (`None`), never a panic.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self
            .s
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn expect(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let b = *self.s.get(self.pos)?;
            self.pos += 1;
            match b {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = *self.s.get(self.pos)?;
                    self.pos += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex =
                                std::str::from_utf8(self.s.get(self.pos..self.pos + 4)?).ok()?;
                            self.pos += 4;
                            let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return None,
                    }
                }
                _ => out.push(b),
            }
        }
    }

    fn scalar(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => Some(Value::Str(self.string()?)),
            b't' | b'f' | b'n' => {
                for (word, v) in [
                    (&b"true"[..], Value::Bool(true)),
                    (b"false", Value::Bool(false)),
                    (b"null", Value::Other),
                ] {
                    if self.s.get(self.pos..self.pos + word.len()) == Some(word) {
                        self.pos += word.len();
                        return Some(v);
                    }
                }
                None
            }
            b'-' | b'0'..=b'9' => {
                while self
                    .s
                    .get(self.pos)
                    .is_some_and(|b| b.is_ascii_digit() || b"+-.eE".contains(b))
                {
                    self.pos += 1;
                }
                Some(Value::Other)
            }
            _ => None,
        }
    }

    fn value(&mut self) -> Option<Value> {
        if self.peek()? != b'[' {
            return self.scalar();
        }
        self.pos += 1;
        let mut strings = Vec::new();
        let mut all_strings = true;
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(Value::Strings(strings));
        }
        loop {
            match self.scalar()? {
                Value::Str(s) => strings.push(s),
                _ => all_strings = false,
            }
            match self.next()? {
                b',' => continue,
                b']' => break,
                _ => return None,
            }
        }
        Some(if all_strings {
            Value::Strings(strings)
        } else {
            Value::Other
        })
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A UTC date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    /// Year.
    pub year: i64,
    /// Month, 1–12.
    pub month: u32,
    /// Day of the month, 1–31.
    pub day: u32,
    /// Hour, minute, second.
    pub hms: (u32, u32, u32),
    /// Milliseconds.
    pub millis: u32,
}

/// The UTC date and time of `ms` milliseconds since the epoch (Howard Hinnant's
/// `civil_from_days`).
pub fn civil_from_millis(ms: i64) -> Civil {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000) as u32;
    let days = secs.div_euclid(86400);
    let tod = secs.rem_euclid(86400) as u32;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    Civil {
        year: yoe + era * 400 + i64::from(month <= 2),
        month,
        day,
        hms: (tod / 3600, (tod % 3600) / 60, tod % 60),
        millis,
    }
}

/// `ms` since the epoch as Java's `Instant.toString` prints it: `2026-11-23T10:15:30.123Z`
/// (the fraction left out when it is zero).
pub fn format_instant(ms: i64) -> String {
    let c = civil_from_millis(ms);
    let (h, mi, s) = c.hms;
    let frac = if c.millis == 0 {
        String::new()
    } else {
        format!(".{:03}", c.millis)
    };
    format!(
        "{:04}-{:02}-{:02}T{h:02}:{mi:02}:{s:02}{frac}Z",
        c.year, c.month, c.day
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (what [`format_instant`] and Java write) to ms
/// since the epoch; digits past the milliseconds are ignored.
pub fn parse_instant(s: &str) -> Option<i64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-');
    let (y, mo, da): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':');
    let (h, mi, se): (i64, i64, i64) = (
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
    );
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    let days = days_from_civil(y, mo, da);
    Some(((days * 86400 + h * 3600 + mi * 60 + se) * 1000) + millis)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn instants_round_trip_as_java_prints_them() {
        assert_eq!(format_instant(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_instant(1_695_973_859_380),
            "2023-09-29T07:50:59.380Z"
        );
        assert_eq!(format_instant(951_782_400_001), "2000-02-29T00:00:00.001Z");
        for ms in [
            0,
            1,
            999,
            1_695_973_859_380,
            951_782_400_001,
            -86_400_000,
            4_102_444_800_000,
        ] {
            assert_eq!(parse_instant(&format_instant(ms)), Some(ms), "{ms}");
        }
        assert_eq!(
            parse_instant("2021-08-02T20:20:07.543123456Z"),
            Some(1_627_935_607_543)
        );
        assert_eq!(
            parse_instant("2021-08-02T20:20:07Z"),
            Some(1_627_935_607_000)
        );
        for bad in [
            "",
            "2021-08-02",
            "2021-13-02T00:00:00Z",
            "2021-08-02T20:20:07.5x3Z",
            "x-y-zTa:b:cZ",
        ] {
            assert_eq!(parse_instant(bad), None, "{bad}");
        }
    }

    #[test]
    fn manifests_round_trip_and_foreign_ones_read() {
        let m = Manifest {
            files: vec!["ca-1-Data.db".into(), "ca-\"2\"-Data.db".into()],
            created_at_ms: Some(1_695_973_859_380),
            expires_at_ms: None,
            ephemeral: false,
        };
        let json = m.to_json();
        assert_eq!(
            json,
            "{\"files\":[\"ca-1-Data.db\",\"ca-\\\"2\\\"-Data.db\"],\"created_at\":\"2023-09-29T07:50:59.380Z\",\"expires_at\":null,\"ephemeral\":false}\n"
        );
        assert_eq!(Manifest::parse(&json), Some(m));
        // Cassandra 5's, pretty-printed, with a field Cairn does not know.
        let cassandra = r#"{
          "files" : [ "nb-1-big-Data.db" ],
          "created_at" : "2024-01-15T10:30:00.123456Z",
          "expires_at" : "2024-01-16T10:30:00.123456Z",
          "ephemeral" : true,
          "extra" : [1, 2.5e3, null]
        }"#;
        let c = Manifest::parse(cassandra).unwrap();
        assert_eq!(c.files, ["nb-1-big-Data.db"]);
        assert_eq!(
            c.expires_at_ms.unwrap() - c.created_at_ms.unwrap(),
            86_400_000
        );
        assert!(c.ephemeral);
        for bad in [
            "",
            "[]",
            "{",
            "{\"files\":[\"a\"",
            "{\"a\" 1}",
            "{\"a\":{\"b\":1}}",
            "{\"a\":\"\\q\"}",
        ] {
            assert_eq!(Manifest::parse(bad), None, "{bad}");
        }
        assert_eq!(Manifest::parse("{}"), Some(Manifest::default()));
    }
}
