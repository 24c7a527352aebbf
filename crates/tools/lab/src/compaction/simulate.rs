//! The engine's pure simulator ([`crate::sim`]) on the overwrite shape, beside the real
//! runs (`--simulate`).

use super::args::CompactionArgs;
use super::setup::{Sizes, Strategy};
use crate::sim::{self, SimConfig};
use anyhow::{anyhow, Result};
use cairn_engine::compaction::manager::ManagerConfig;
use cairn_engine::compaction::strategy::CompactionOptions;
use std::fmt::Write as _;

/// The simulator on the overwrite shape: jobs applied at once, then timed, with each of the
/// two compactors processing `speed` bytes of input per byte the workload writes (at
/// `--rate-mb 10`, speed 4 is 40 MB/s of compaction per thread).
pub(super) fn simulate(a: &CompactionArgs, sizes: &Sizes) -> Result<String> {
    let base = SimConfig {
        dataset_mib: (sizes.dataset >> 20).max(1),
        buckets: 1024,
        flush_mib: a.memtable_mb as u64,
        passes: sizes.passes,
        seed: 1,
        compaction_speed: None,
        compactors: ManagerConfig::default().concurrent_compactors,
        flush_as_one: false,
        contention: None,
        same_tier_backlog_only: false,
    };
    let mut out = String::new();
    for speed in [None, Some(6.0), Some(4.0), Some(2.5)] {
        let cfg = SimConfig {
            compaction_speed: speed,
            ..base.clone()
        };
        // Beside ICS-goal in the timed modes: what the engine did before ICS flushes became
        // runs of fragments.
        let variant = speed.is_some().then(|| {
            (
                "ICS-goal-1.25 (whole flushes)",
                SimConfig {
                    flush_as_one: true,
                    ..cfg.clone()
                },
            )
        });
        let reports = simulate_strategies(a, &cfg, variant)?;
        let mode = match speed {
            None => "jobs at once".to_string(),
            Some(x) => format!(
                "timed: {} compactors, each {x} bytes of input per byte written",
                cfg.compactors
            ),
        };
        writeln!(
            out,
            "simulator (no I/O; WA without the log): overwrite {} MiB x {} passes, {} MiB flushes; {mode}\n{}",
            cfg.dataset_mib,
            cfg.passes,
            cfg.flush_mib,
            sim::table(&reports)
        )?;
    }
    // A shared machine: the compactors' speed follows the priority the backlog controller
    // gives them against other runnable work (`SimConfig::contention`).
    for contention in [0.1, 0.2, 0.4] {
        let cfg = SimConfig {
            compaction_speed: Some(CONTENDED_SPEED),
            contention: Some(contention),
            ..base.clone()
        };
        // Beside ICS-goal: the backlog as the engine counted it before (ScyllaDB's formula).
        let variant = (
            "ICS-goal (same-tier backlog)",
            SimConfig {
                same_tier_backlog_only: true,
                ..cfg.clone()
            },
        );
        let reports = simulate_strategies(a, &cfg, Some(variant))?;
        writeln!(
            out,
            "simulator, contended CPU: each compactor {CONTENDED_SPEED} bytes of input per byte written \
             on an idle core, beside {contention} nice-0 threads' worth of other work, at the nice \
             value the backlog controller sets\n{}",
            sim::table(&reports)
        )?;
    }
    Ok(out)
}

/// Simulates every strategy but TWCS (the overwrite shape has no time windows) under `cfg`;
/// `ics_goal_variant`, when given, is simulated right after ICS-goal under its own name and
/// configuration.
pub(super) fn simulate_strategies(
    a: &CompactionArgs,
    cfg: &SimConfig,
    ics_goal_variant: Option<(&str, SimConfig)>,
) -> Result<Vec<sim::SimReport>> {
    let mut reports = Vec::new();
    for s in Strategy::ALL {
        if s == Strategy::Twcs {
            continue;
        }
        let opts = CompactionOptions::from_map(&s.options(a))
            .map_err(|e| anyhow!("{}: {e:?}", s.name()))?;
        reports.push(sim::simulate(s.name(), &opts, cfg));
        if let (Strategy::IcsGoal, Some((name, variant))) = (s, &ics_goal_variant) {
            reports.push(sim::simulate(name, &opts, variant));
        }
    }
    Ok(reports)
}

/// Compaction speed on an idle core in the simulator's contended runs, in input bytes per
/// byte written: ~100 MB/s per thread at `--rate-mb 10`.
pub(super) const CONTENDED_SPEED: f64 = 10.0;
