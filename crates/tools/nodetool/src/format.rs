//! nodetool's output pieces: aligned tables (Cassandra's `TableBuilder`) and dates.

/// Left-aligned columns separated by one space, each padded to its widest cell
/// (Cassandra's `TableBuilder`).
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{s:<w$}", w = widths[i]))
            .collect();
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
    out
}

/// Milliseconds since the epoch as `yyyy-MM-ddTHH:mm:ss.SSS` (UTC).
pub fn format_millis(ms: i64) -> String {
    let c = cairn_engine::snapshot::manifest::civil_from_millis(ms);
    let (h, mi, s) = c.hms;
    format!(
        "{:04}-{:02}-{:02}T{h:02}:{mi:02}:{s:02}.{:03}",
        c.year, c.month, c.day, c.millis
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000");
        assert_eq!(format_millis(1_695_973_859_380), "2023-09-29T07:50:59.380");
        assert_eq!(format_millis(951_782_400_001), "2000-02-29T00:00:00.001");
    }

    #[test]
    fn tables_align() {
        let t = table(&[
            vec!["a".into(), "bb".into()],
            vec!["ccc".into(), "d".into()],
        ]);
        assert_eq!(t, "a   bb\nccc d \n");
    }
}
