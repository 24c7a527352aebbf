//! `--replot`: the charts redrawn from the `compaction.csv` (or `sustained.csv`) of earlier
//! runs, e.g. runs made one strategy at a time.

use super::args::{CompactionArgs, MB};
use crate::plot;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// One sample read back from a `compaction.csv`: `(t_s, disk MB, live MB, pending,
/// unleveled, compaction MB/s)`.
pub(super) type CsvPoint = (f64, f64, f64, f64, f64, f64);

/// One strategy's samples on one workload, read back from a `compaction.csv`.
pub(super) struct CsvRun {
    pub(super) strategy: String,
    pub(super) workload: String,
    pub(super) points: Vec<CsvPoint>,
}

/// Reads the `compaction.csv` files of `dirs` (comma-separated) and draws the charts of
/// [`plots`] into `a.out`, every run of a workload in one chart.
pub(super) fn replot(a: &CompactionArgs, dirs: &str) -> Result<()> {
    let mut runs: Vec<CsvRun> = Vec::new();
    for dir in dirs.split(',').filter(|d| !d.trim().is_empty()) {
        // Sized runs write compaction.csv, sustained runs sustained.csv.
        let dir = Path::new(dir.trim());
        let path = ["compaction.csv", "sustained.csv"]
            .iter()
            .map(|f| dir.join(f))
            .find(|p| p.exists())
            .unwrap_or_else(|| dir.join("compaction.csv"));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        for (n, line) in text.lines().enumerate().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let num = |i: usize| -> Result<f64> {
                f.get(i)
                    .and_then(|v| v.parse::<f64>().ok())
                    .with_context(|| format!("{}:{}: field {i}", path.display(), n + 1))
            };
            let (Some(strategy), Some(workload)) = (f.first(), f.get(1)) else {
                bail!("{}:{}: short line", path.display(), n + 1);
            };
            let point = (
                num(2)?,
                num(3)? / MB,
                num(4)? / MB,
                num(5)?,
                num(7)?,
                num(8)? / MB,
            );
            match runs
                .iter_mut()
                .find(|r| r.strategy == *strategy && r.workload == *workload)
            {
                Some(r) => r.points.push(point),
                None => runs.push(CsvRun {
                    strategy: strategy.to_string(),
                    workload: workload.to_string(),
                    points: vec![point],
                }),
            }
        }
    }
    let mut workloads: Vec<String> = Vec::new();
    for r in &runs {
        if !workloads.contains(&r.workload) {
            workloads.push(r.workload.clone());
        }
    }
    for w in &workloads {
        let rs: Vec<&CsvRun> = runs.iter().filter(|r| &r.workload == w).collect();
        let series = |f: &dyn Fn(&CsvPoint) -> f64| -> Vec<plot::XySeries> {
            rs.iter()
                .map(|r| plot::XySeries {
                    label: r.strategy.clone(),
                    points: r.points.iter().map(|p| (p.0, f(p))).collect(),
                })
                .collect()
        };
        let mut disk = series(&|p| p.1);
        if let Some(r) = rs.first() {
            disk.push(plot::XySeries {
                label: format!("live data ({})", r.strategy),
                points: r.points.iter().map(|p| (p.0, p.2)).collect(),
            });
        }
        let chart = |name: &str, title: &str, y: &str, s: &[plot::XySeries]| {
            plot::xy_chart(
                &a.out.join(format!("compaction-{name}-{w}")),
                &plot::XyChart {
                    title: &format!("{title}: {w}"),
                    x_label: "seconds",
                    y_label: y,
                    series: s,
                },
            )
        };
        chart(
            "disk",
            "Disk usage over time",
            "sstable bytes on disk (MB)",
            &disk,
        )?;
        chart(
            "pending",
            "Pending compactions",
            "pending compactions",
            &series(&|p| p.3),
        )?;
        let leveled: Vec<plot::XySeries> = series(&|p| p.4)
            .into_iter()
            .filter(|s| s.label.starts_with("LCS"))
            .collect();
        if !leveled.is_empty() {
            chart(
                "unleveled",
                "Unleveled (L0) sstables",
                "L0 sstables",
                &leveled,
            )?;
        }
        if w.starts_with("sustained") {
            chart(
                "throughput",
                "Compaction throughput",
                "compaction output MB/s",
                &series(&|p| p.5),
            )?;
        }
    }
    println!(
        "charts of {} runs written to {}",
        runs.len(),
        a.out.display()
    );
    Ok(())
}
