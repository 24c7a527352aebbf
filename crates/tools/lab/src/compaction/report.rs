//! The lab's outputs: the samples, amplification, job history and diagnostics CSVs, the
//! markdown table with the bars of seeds 000/003, and the charts.

use super::args::{CompactionArgs, MB};
use super::measure::{RunResult, Sample};
use super::setup::Strategy;
use crate::plot;
use anyhow::Result;
use std::fmt::Write as _;

/// Writes the CSVs and the markdown table of `results` into `a.out` (named `sustained…` for
/// sustained runs), prints the table and draws the charts.
pub(super) fn write_outputs(
    a: &CompactionArgs,
    results: &[RunResult],
    notes: &str,
    sustained: bool,
) -> Result<()> {
    let md = summary_md(results, notes)?;
    let prefix = if sustained { "sustained-" } else { "" };
    std::fs::write(
        a.out.join(format!("{prefix}history.csv")),
        history_csv(results)?,
    )?;
    std::fs::write(
        a.out.join(format!("{prefix}diagnostics.csv")),
        diagnostics_csv(results)?,
    )?;
    let (csv_name, amp_name, md_name) = if sustained {
        (
            "sustained.csv",
            "sustained-amplification.csv",
            "sustained.md",
        )
    } else {
        ("compaction.csv", "amplification.csv", "compaction.md")
    };
    std::fs::write(a.out.join(csv_name), samples_csv(results)?)?;
    std::fs::write(a.out.join(amp_name), amplification_csv(results)?)?;
    std::fs::write(a.out.join(md_name), &md)?;
    print!("{md}");
    plots(a, results, sustained)?;
    println!("wrote {}", a.out.display());
    Ok(())
}

/// Every sample of every run (`compaction.csv`; [`super::replot`] reads it back).
fn samples_csv(results: &[RunResult]) -> Result<String> {
    let mut csv = String::from(
        "strategy,workload,t_s,disk_bytes,live_bytes,pending,sstables,unleveled,compaction_bytes_per_s\n",
    );
    for r in results {
        for s in &r.samples {
            writeln!(
                csv,
                "{},{},{:.2},{},{:.0},{},{},{},{:.0}",
                r.strategy.name(),
                r.workload,
                s.t_s,
                s.disk_bytes,
                r.live_bytes(s),
                s.pending,
                s.sstables,
                s.unleveled,
                s.compaction_bytes_per_s
            )?;
        }
    }
    Ok(csv)
}

/// One line of amplification figures per run.
fn amplification_csv(results: &[RunResult]) -> Result<String> {
    let mut amp = String::from("strategy,workload,user_bytes,commitlog_bytes,flush_bytes,compaction_bytes,write_amp,peak_space_amp,final_space_amp,ops_per_s\n");
    for r in results {
        writeln!(
            amp,
            "{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.0}",
            r.strategy.name(),
            r.workload,
            r.user_bytes,
            r.commitlog_bytes,
            r.flush_bytes,
            r.compaction_bytes,
            r.write_amp(),
            r.peak_space_amp(),
            r.final_space_amp(),
            r.ops_per_s()
        )?;
    }
    Ok(amp)
}

/// The markdown summary: `notes`, a row per run, then the [`bars`].
fn summary_md(results: &[RunResult], notes: &str) -> Result<String> {
    let mut md = format!("{notes}\n| strategy | workload | user MB | commitlog MB | flush MB | compaction MB | WA | WA w/o log | peak SA | peak SA (dir) | final SA | compacted MB | mean flush MB | ops/s | settle s | pending mean / max | pending slope (2nd half, /min) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in results {
        let (pm, px, ps) = r.pending_trend();
        writeln!(
            md,
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} | {:.0} | {:.1}{} | {:.1} / {} | {:+.2} |",
            r.strategy.name(),
            r.workload,
            r.user_bytes as f64 / MB,
            r.commitlog_bytes as f64 / MB,
            r.flush_bytes as f64 / MB,
            r.compaction_bytes as f64 / MB,
            r.write_amp(),
            r.write_amp_no_log(),
            r.peak_space_amp(),
            r.peak_space_amp_du(),
            r.final_space_amp(),
            r.compacted_bytes as f64 / MB,
            r.flush_bytes as f64 / r.flushes.max(1) as f64 / MB,
            r.ops_per_s(),
            r.settle_secs,
            if r.settled { "" } else { " (not settled)" },
            pm,
            px,
            ps
        )?;
    }
    md.push('\n');
    md.push_str(&bars(results));
    Ok(md)
}

/// Every finished job of every run.
fn history_csv(results: &[RunResult]) -> Result<String> {
    let mut hist = String::from(
        "strategy,workload,kind,inputs,bytes_in,bytes_out,output_level,start_s,duration_s\n",
    );
    for r in results {
        for (kind, n, bi, bo, lvl, start_ms, dur) in &r.history {
            writeln!(
                hist,
                "{},{},{kind},{n},{bi},{bo},{lvl},{:.3},{dur:.3}",
                r.strategy.name(),
                r.workload,
                *start_ms as f64 / 1000.0
            )?;
        }
    }
    Ok(hist)
}

/// The samples' diagnostic columns (the live set's shape, running jobs, directory size).
fn diagnostics_csv(results: &[RunResult]) -> Result<String> {
    let mut diag = String::from("strategy,workload,t_s,disk_bytes,live_sstable_bytes,running,user_bytes,l0_bytes,largest_run_bytes,held_bytes,dir_bytes\n");
    for r in results {
        for s in &r.samples {
            writeln!(
                diag,
                "{},{},{:.2},{},{},{},{},{},{},{},{}",
                r.strategy.name(),
                r.workload,
                s.t_s,
                s.disk_bytes,
                s.live_sstable_bytes,
                s.running,
                s.user_bytes,
                s.l0_bytes,
                s.largest_run_bytes,
                s.held_bytes,
                s.dir_bytes
            )?;
        }
    }
    Ok(diag)
}

pub(super) fn bars(results: &[RunResult]) -> String {
    let find = |s: Strategy, w: &str| results.iter().find(|r| r.strategy == s && r.workload == w);
    let mut out = String::from("| bar | measured | |\n|---|---|---|\n");
    let mut row = |bar: &str, measured: String, met: bool| {
        let _ = writeln!(
            out,
            "| {bar} | {measured} | {} |",
            if met { "met" } else { "**not met**" }
        );
    };
    if let Some(r) = find(Strategy::Stcs, "overwrite") {
        let p = r.peak_space_amp();
        row("STCS overwrite peak SA ≥ 4", format!("{p:.2}"), p >= 4.0);
    }
    if let Some(r) = find(Strategy::Lcs, "overwrite") {
        let p = r.peak_space_amp();
        row("LCS overwrite peak SA ≤ 2.5", format!("{p:.2}"), p <= 2.5);
    }
    if let (Some(l), Some(s)) = (
        find(Strategy::Lcs, "append"),
        find(Strategy::Stcs, "append"),
    ) {
        let ratio = l.write_amp() / s.write_amp();
        row(
            "LCS WA ≥ 1.5 × STCS WA on append",
            format!(
                "{:.2} / {:.2} = {ratio:.2}× (without log {:.2} / {:.2} = {:.2}×)",
                l.write_amp(),
                s.write_amp(),
                l.write_amp_no_log(),
                s.write_amp_no_log(),
                l.write_amp_no_log() / s.write_amp_no_log()
            ),
            ratio >= 1.5,
        );
    }
    if let Some(r) = find(Strategy::IcsGoal, "overwrite") {
        let (p, w) = (r.peak_space_amp(), r.write_amp());
        row(
            "ICS goal 1.25 overwrite: peak SA ≤ 1.6 and WA ≤ 5.5",
            format!("peak SA {p:.2}, WA {w:.2}"),
            p <= 1.6 && w <= 5.5,
        );
    }
    if let Some(r) = find(Strategy::LcsDynamic, "overwrite") {
        let f = r.final_space_amp();
        row(
            "LCS-dynamic overwrite final SA ≤ 1.15",
            format!("{f:.2}"),
            f <= 1.15,
        );
    }
    for r in results
        .iter()
        .filter(|r| r.workload.starts_with("sustained"))
    {
        let (mean, _max, slope) = r.pending_trend();
        let half_min = r.write_secs / 2.0 / 60.0;
        let rise = slope * half_min;
        row(
            &format!("{} sustained: pending bounded", r.strategy.name()),
            format!("slope {slope:+.2}/min over the 2nd half (rise {rise:+.1} vs mean {mean:.1})"),
            rise <= (0.25 * mean).max(2.0),
        );
    }
    out
}

pub(super) fn plots(a: &CompactionArgs, results: &[RunResult], sustained: bool) -> Result<()> {
    let mut workloads: Vec<&str> = Vec::new();
    for r in results {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    for w in workloads {
        let rs: Vec<&RunResult> = results.iter().filter(|r| r.workload == w).collect();
        let series = |f: &dyn Fn(&RunResult, &Sample) -> f64| -> Vec<plot::XySeries> {
            rs.iter()
                .map(|r| plot::XySeries {
                    label: r.strategy.name().to_string(),
                    points: r.samples.iter().map(|s| (s.t_s, f(r, s))).collect(),
                })
                .collect()
        };
        let mut disk = series(&|_, s| s.disk_bytes as f64 / MB);
        if let Some(r) = rs.first() {
            disk.push(plot::XySeries {
                label: format!("live data ({})", r.strategy.name()),
                points: r
                    .samples
                    .iter()
                    .map(|s| (s.t_s, r.live_bytes(s) / MB))
                    .collect(),
            });
        }
        plot::xy_chart(
            &a.out.join(format!("compaction-disk-{w}")),
            &plot::XyChart {
                title: &format!("Disk usage over time: {w}"),
                x_label: "seconds",
                y_label: "sstable bytes on disk (MB)",
                series: &disk,
            },
        )?;
        plot::xy_chart(
            &a.out.join(format!("compaction-pending-{w}")),
            &plot::XyChart {
                title: &format!("Pending compactions: {w}"),
                x_label: "seconds",
                y_label: "pending compactions",
                series: &series(&|_, s| s.pending as f64),
            },
        )?;
        let leveled: Vec<plot::XySeries> = series(&|_, s| s.unleveled as f64)
            .into_iter()
            .zip(rs.iter())
            .filter(|(_, r)| r.strategy.is_leveled())
            .map(|(s, _)| s)
            .collect();
        if !leveled.is_empty() {
            plot::xy_chart(
                &a.out.join(format!("compaction-unleveled-{w}")),
                &plot::XyChart {
                    title: &format!("Unleveled (L0) sstables: {w}"),
                    x_label: "seconds",
                    y_label: "L0 sstables",
                    series: &leveled,
                },
            )?;
        }
        if sustained {
            plot::xy_chart(
                &a.out.join(format!("compaction-throughput-{w}")),
                &plot::XyChart {
                    title: &format!("Compaction throughput: {w}"),
                    x_label: "seconds",
                    y_label: "compaction output MB/s",
                    series: &series(&|_, s| s.compaction_bytes_per_s / MB),
                },
            )?;
        }
    }
    Ok(())
}
