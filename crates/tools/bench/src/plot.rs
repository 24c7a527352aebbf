//! `--plot FILE`: throughput (top) and latency percentiles (bottom, log scale) over time, as
//! seed 004's graphs. PNG or SVG by the file's extension.

use super::stats::Point;
use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

const FONT_PATH: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const SIZE: (u32, u32) = (1100, 760);

/// A named, coloured series read off each point.
type Line = (&'static str, RGBColor, fn(&Point) -> f64);

fn has_font() -> bool {
    static FONT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FONT.get_or_init(|| {
        let Ok(bytes) = std::fs::read(FONT_PATH) else {
            return false;
        };
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
    })
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing {e:?}")
}

pub fn draw(path: &Path, points: &[Point], title: &str) -> Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "svg" => draw_on(
            SVGBackend::new(path, SIZE).into_drawing_area(),
            points,
            title,
        ),
        "png" => draw_on(
            BitMapBackend::new(path, SIZE).into_drawing_area(),
            points,
            title,
        ),
        _ => Err(anyhow!(
            "--plot {}: use a .png or .svg file name",
            path.display()
        )),
    }
}

fn draw_on<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    points: &[Point],
    title: &str,
) -> Result<()> {
    let text = has_font();
    root.fill(&WHITE).map_err(err)?;
    let root = if text {
        root.titled(title, ("sans-serif", 22)).map_err(err)?
    } else {
        root
    };
    let (top, bottom) = root.split_vertically(SIZE.1 * 2 / 5);
    let xmax = points.iter().map(|p| p.t).fold(1.0f64, f64::max);

    // Throughput.
    let ymax = points
        .iter()
        .map(|p| p.ops_s.max(p.rows_s))
        .fold(1.0f64, f64::max)
        * 1.15;
    let mut b = ChartBuilder::on(&top);
    b.margin(12)
        .x_label_area_size(if text { 35 } else { 5 })
        .y_label_area_size(if text { 80 } else { 5 });
    let mut c = b.build_cartesian_2d(0.0..xmax, 0.0..ymax).map_err(err)?;
    let mut mesh = c.configure_mesh();
    if text {
        mesh.y_desc("per second")
            .label_style(("sans-serif", 13))
            .y_label_formatter(&|y| format!("{y:.0}"));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(err)?;
    let series: [Line; 2] = [
        ("ops/s", RGBColor(31, 119, 180), |p| p.ops_s),
        ("rows/s", RGBColor(255, 127, 14), |p| p.rows_s),
    ];
    let same = points.iter().all(|p| p.ops_s == p.rows_s);
    for (i, (name, color, f)) in series.iter().enumerate() {
        if i == 1 && same {
            continue;
        }
        let color = *color;
        let s = c
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.t, f(p))),
                color.stroke_width(2),
            ))
            .map_err(err)?;
        if text {
            s.label(*name).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        }
    }
    if text {
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(err)?;
    }

    // Latency percentiles, milliseconds on a log axis.
    let lat: [Line; 5] = [
        ("median", RGBColor(44, 160, 44), |p| p.p50_us),
        ("90th", RGBColor(148, 103, 189), |p| p.p90_us),
        ("99th", RGBColor(255, 127, 14), |p| p.p99_us),
        ("99.9th", RGBColor(214, 39, 40), |p| p.p999_us),
        ("max", RGBColor(90, 90, 90), |p| p.max_us),
    ];
    let vals = || {
        points
            .iter()
            .flat_map(|p| lat.iter().map(move |(_, _, f)| f(p) / 1000.0))
            .filter(|v| *v > 0.0)
    };
    let lo = vals().fold(f64::INFINITY, f64::min);
    let hi = vals().fold(0.0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo * 0.8, hi * 1.5)
    } else {
        (0.01, 10.0)
    };
    let mut b = ChartBuilder::on(&bottom);
    b.margin(12)
        .x_label_area_size(if text { 40 } else { 5 })
        .y_label_area_size(if text { 80 } else { 5 });
    let mut c = b
        .build_cartesian_2d(0.0..xmax, (lo..hi).log_scale())
        .map_err(err)?;
    let mut mesh = c.configure_mesh();
    if text {
        mesh.x_desc("time (s)")
            .y_desc("latency (ms)")
            .label_style(("sans-serif", 13))
            .y_label_formatter(&|y| {
                if *y >= 10.0 {
                    format!("{y:.0}")
                } else if *y >= 1.0 {
                    format!("{y:.1}")
                } else {
                    format!("{y:.3}")
                }
            });
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(err)?;
    for (name, color, f) in lat {
        let s = c
            .draw_series(LineSeries::new(
                points
                    .iter()
                    .filter(|p| f(p) > 0.0)
                    .map(|p| (p.t, f(p) / 1000.0)),
                color.stroke_width(2),
            ))
            .map_err(err)?;
        if text {
            s.label(name).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        }
    }
    if text {
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
