//! `cairn bench`: a CQL load generator with scylla-bench's flags, schema and output.
//!
//! Flags are accepted with one dash as scylla-bench (Go) spells them (`-mode write`,
//! `-validate-data`, `-client-compression=false`) or with two. Every worker is a task that
//! sends one request at a time; a reporter task merges the workers' interval histograms
//! once a second, prints scylla-bench's line, appends to the HDR log and keeps the series
//! for `--plot`. The run ends with scylla-bench's "Results" block plus the client's CPU per
//! operation (getrusage) and, with `-server-pid`, the server's (from /proc).
//!
//! The client must stay light (issue 5: ≤ 10 µs of CPU per operation), so that a run
//! measures the node. The Rust `scylla` driver only sets the schema up (DDL, TRUNCATE) and is
//! then closed; the statements are prepared and run by the bench's own pipelined protocol v4
//! client ([`wire`]), which sends the frames the driver did (same statements, consistency,
//! values and paging, one request per operation, spread over the connections round robin;
//! only the driver's default serial consistency is left out) with far less work per
//! request. `-timeout` is one deadline slot per worker checked by a reaper
//! task instead of a timer per request ([`deadline`]), and there is one clock read per
//! operation.

mod args;
pub mod clock;
mod deadline;
mod plot;
mod report;
mod run;
mod shared;
mod stats;
mod wire;
mod worker;
mod workload;

pub use args::{normalize_args, BenchArgs};
pub use run::run;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{fill_value, parse_go_duration, parse_mix, RowSize};
    use crate::run::read_query;
    use crate::stats::Kind;
    use crate::worker::token_range;
    use std::time::Duration;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_go_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_go_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(
            parse_go_duration("250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(parse_go_duration("0").unwrap(), Duration::ZERO);
        assert!(parse_go_duration("10").is_err());
        assert!(parse_go_duration("3x").is_err());
    }

    #[test]
    fn row_sizes() {
        assert_eq!(RowSize::parse("4").unwrap(), RowSize::Fixed(4));
        assert_eq!(
            RowSize::parse("uniform:10..20").unwrap(),
            RowSize::Uniform(10, 20)
        );
        assert!(RowSize::parse("uniform:20..10").is_err());
        let mut v = vec![];
        for ck in 0..100 {
            fill_value(&mut v, RowSize::Uniform(10, 20), 7, ck);
            assert!((10..=20).contains(&v.len()));
            let mut w = vec![];
            fill_value(&mut w, RowSize::Uniform(10, 20), 7, ck);
            assert_eq!(v, w);
        }
        fill_value(&mut v, RowSize::Fixed(13), 1, 2);
        assert_eq!(v.len(), 13);
    }

    #[test]
    fn single_dash_flags() {
        let args = [
            "cairn",
            "bench",
            "-mode",
            "write",
            "-validate-data",
            "--plot",
            "x.png",
            "-5",
        ]
        .map(std::ffi::OsString::from);
        let out = normalize_args(args);
        let out: Vec<&str> = out.iter().map(|s| s.to_str().unwrap()).collect();
        assert_eq!(
            out,
            [
                "cairn",
                "bench",
                "--mode",
                "write",
                "--validate-data",
                "--plot",
                "x.png",
                "-5"
            ]
        );
        let serve = normalize_args(["cairn", "serve", "-x"].map(std::ffi::OsString::from));
        assert_eq!(serve[2], "-x");
    }

    #[test]
    fn mixes_and_ranges() {
        assert_eq!(
            parse_mix("write=4,delete=1").unwrap(),
            vec![(Kind::Write, 4), (Kind::Delete, 1)]
        );
        assert!(parse_mix("write=0").is_err());
        assert_eq!(token_range(0, 1), (i64::MIN, i64::MAX));
        let (a, b) = token_range(0, 2);
        let (c, d) = token_range(1, 2);
        assert_eq!((a, b + 1, c, d), (i64::MIN, 0, 0, i64::MAX));
    }

    #[test]
    fn read_queries() {
        let mut a = test_args();
        assert_eq!(
            read_query(&a, "ks.t"),
            "SELECT pk, ck, v FROM ks.t WHERE pk = ? AND ck >= ? LIMIT 1"
        );
        a.in_restriction = true;
        a.rows_per_request = 2;
        assert_eq!(
            read_query(&a, "ks.t"),
            "SELECT pk, ck, v FROM ks.t WHERE pk = ? AND ck IN (?, ?)"
        );
    }

    fn test_args() -> BenchArgs {
        #[derive(clap::Parser)]
        struct P {
            #[command(flatten)]
            a: BenchArgs,
        }
        use clap::Parser;
        P::parse_from(["x"]).a
    }
}
