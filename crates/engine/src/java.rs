//! Java behaviours that Cassandra's option values and error texts depend on, so that options
//! (the engine's compaction map, the CQL layer's table and keyspace options) accept what
//! Cassandra accepts and word refusals as Cassandra words them: `Double.parseDouble`,
//! `Double.toString`, and the iteration order of a `java.util.HashMap` of strings (Cassandra
//! lists unknown option names in that order).

/// Java's `Double.parseDouble` (and `Float.parseFloat`): surrounding whitespace ignored, an
/// optional `d`/`f` suffix, `NaN` and `Infinity` as Java spells them (Rust's `inf` / `nan`
/// are not Java's).
pub fn parse_double(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c <= ' ');
    let body = t.trim_start_matches(['+', '-']);
    if body == "NaN" || body == "Infinity" {
        return t.parse::<f64>().ok();
    }
    let t = t
        .strip_suffix(['d', 'D', 'f', 'F'])
        .filter(|r| r.ends_with(|c: char| c.is_ascii_digit() || c == '.'))
        .unwrap_or(t);
    if !t
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    t.parse::<f64>().ok()
}

/// Java's `Double.toString`: `0.01`, `1.0`, `1.0E-8`, `6.71E-5`, `1.5E10`.
pub fn double_to_string(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = d.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{d}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    let s = format!("{d:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    if mantissa.contains('.') {
        format!("{mantissa}E{exp}")
    } else {
        format!("{mantissa}.0E{exp}")
    }
}

/// Java's `String.hashCode` (over UTF-16 code units).
pub fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Java's `ByteBuffer.hashCode` of a buffer holding `b`.
pub fn byte_buffer_hash(b: &[u8]) -> i32 {
    b.iter().rev().fold(1i32, |h, &x| {
        h.wrapping_mul(31).wrapping_add(i32::from(x as i8))
    })
}

/// The bucket of a hash in a `java.util.HashMap` table of `capacity` (a power of two).
pub fn bucket(hash: i32, capacity: usize) -> usize {
    let h = hash as u32;
    ((h ^ (h >> 16)) as usize) & (capacity.max(1) - 1)
}

/// The table size of a `java.util.HashMap` created with room for `initial` entries
/// (a power of two) after `n` insertions (it doubles past 3/4 full).
pub fn grown_capacity(initial: usize, n: usize) -> usize {
    let mut cap = initial.max(1);
    while n > cap * 3 / 4 {
        cap *= 2;
    }
    cap
}

/// `keys` in the order a `java.util.HashMap` copied from a map of `entries` entries iterates
/// them (`new HashMap<>(map)`: its table holds `entries / 0.75 + 1` rounded up to a power of
/// two). Keys sharing a bucket keep their relative order in `keys`.
pub fn hash_map_order<'a>(keys: &[&'a str], entries: usize) -> Vec<&'a str> {
    let wanted = (entries as f32 / 0.75 + 1.0) as usize;
    sort_by_bucket(keys, wanted.next_power_of_two().clamp(1, 1 << 30))
}

/// `keys` (distinct) in the order a `java.util.HashSet` built with the default capacity
/// iterates them; keys sharing a bucket keep their relative order in `keys` (their insertion
/// order).
pub fn hash_set_order<'a>(keys: &[&'a str]) -> Vec<&'a str> {
    sort_by_bucket(keys, grown_capacity(16, keys.len()))
}

fn sort_by_bucket<'a>(keys: &[&'a str], capacity: usize) -> Vec<&'a str> {
    let mut out = keys.to_vec();
    // A stable sort: equal buckets keep their order.
    out.sort_by_key(|k| bucket(string_hash(k), capacity));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn doubles() {
        assert_eq!(parse_double("0.1"), Some(0.1));
        assert_eq!(parse_double(" 0.5 "), Some(0.5));
        assert_eq!(parse_double("2d"), Some(2.0));
        assert_eq!(parse_double(".5"), Some(0.5));
        assert_eq!(parse_double("x"), None);
        assert_eq!(parse_double("inf"), None);
        assert_eq!(parse_double("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(double_to_string(0.0), "0.0");
        assert_eq!(double_to_string(1.0), "1.0");
        assert_eq!(double_to_string(0.01), "0.01");
        assert_eq!(double_to_string(1e-8), "1.0E-8");
        assert_eq!(double_to_string(6.71e-5), "6.71E-5");
        assert_eq!(double_to_string(1.5e10), "1.5E10");
        assert_eq!(double_to_string(-0.1), "-0.1");
    }

    #[test]
    fn hash_map_order_is_javas() {
        assert_eq!(string_hash("foo"), 101_574);
        // Cassandra 5.0.9: "Properties specified [zed, foo] are not understood by …" for a
        // map of foo, zed and the two default thresholds.
        assert_eq!(hash_map_order(&["foo", "zed"], 4), ["zed", "foo"]);
        // "Invalid caching sub-options [bar, foo]" for {keys, foo, bar}.
        assert_eq!(hash_map_order(&["foo", "bar"], 3), ["bar", "foo"]);
        // Colliding names keep their insertion order.
        assert_eq!(
            hash_set_order(&["hk.bt", "hk.bt2", "hk.bt0"]),
            ["hk.bt0", "hk.bt", "hk.bt2"]
        );
    }
}
