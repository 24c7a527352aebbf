//! Small chart helpers over plotters: grouped bar charts and line charts, each rendered to
//! both PNG and SVG.
//!
//! plotters has no built-in fonts here; DejaVu Sans is registered at runtime if present.
//! Without a font file the charts are drawn without any text.

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::OnceLock;

const FONT_PATH: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Registers the font once; returns whether text can be drawn.
fn has_font() -> bool {
    static FONT: OnceLock<bool> = OnceLock::new();
    *FONT.get_or_init(|| {
        let Ok(bytes) = std::fs::read(FONT_PATH) else {
            return false;
        };
        // plotters keeps a 'static reference to the font bytes.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
    })
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing chart: {e:?}")
}

/// One named series of values.
pub struct Series {
    /// Legend label.
    pub label: String,
    /// One value per x position (category or x value).
    pub values: Vec<f64>,
}

/// A grouped bar chart: one group per category, one bar per series in each group.
pub struct BarChart<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    pub categories: &'a [String],
    pub series: &'a [Series],
}

/// A line chart over numeric x values.
pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub xs: &'a [f64],
    pub series: &'a [Series],
}

const SIZE: (u32, u32) = (1000, 560);

/// Writes `<base>.png` and `<base>.svg`.
pub fn bar_chart(base: &Path, chart: &BarChart) -> Result<()> {
    let png = base.with_extension("png");
    let svg = base.with_extension("svg");
    draw_bars(BitMapBackend::new(&png, SIZE).into_drawing_area(), chart)?;
    draw_bars(SVGBackend::new(&svg, SIZE).into_drawing_area(), chart)?;
    Ok(())
}

/// Writes `<base>.png` and `<base>.svg`.
pub fn line_chart(base: &Path, chart: &LineChart) -> Result<()> {
    let png = base.with_extension("png");
    let svg = base.with_extension("svg");
    draw_lines(BitMapBackend::new(&png, SIZE).into_drawing_area(), chart)?;
    draw_lines(SVGBackend::new(&svg, SIZE).into_drawing_area(), chart)?;
    Ok(())
}

fn y_max(series: &[Series], headroom: f64) -> f64 {
    let m = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0f64, f64::max);
    if m > 0.0 {
        m * headroom
    } else {
        1.0
    }
}

fn draw_bars<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, c: &BarChart) -> Result<()> {
    let text = has_font();
    root.fill(&WHITE).map_err(err)?;
    let n = c.categories.len().max(1) as f64;
    // Headroom above the tallest bar for the legend.
    let ymax = y_max(c.series, 1.3);
    let mut b = ChartBuilder::on(&root);
    b.margin(15)
        .x_label_area_size(40)
        .y_label_area_size(if text { 70 } else { 10 });
    if text {
        b.caption(c.title, ("sans-serif", 22));
    }
    let mut chart = b.build_cartesian_2d(0.0..n, 0.0..ymax).map_err(err)?;
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh().x_labels(0);
    if text {
        mesh.y_desc(c.y_label).label_style(("sans-serif", 14));
    } else {
        mesh.y_labels(0);
    }
    mesh.draw().map_err(err)?;

    let k = c.series.len().max(1) as f64;
    let width = 0.8 / k;
    for (si, s) in c.series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let bars = s.values.iter().enumerate().map(move |(ci, v)| {
            let x0 = ci as f64 + 0.1 + si as f64 * width;
            Rectangle::new([(x0, 0.0), (x0 + width * 0.92, *v)], color.filled())
        });
        let drawn = chart.draw_series(bars).map_err(err)?;
        if text {
            drawn.label(s.label.clone()).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
            });
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
        let style =
            TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        for (ci, name) in c.categories.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(ci as f64 + 0.5, 0.0));
            root.draw(&Text::new(name.clone(), (px, py + 6), style.clone()))
                .map_err(err)?;
        }
    }
    root.present().map_err(err)?;
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, c: &LineChart) -> Result<()> {
    let text = has_font();
    root.fill(&WHITE).map_err(err)?;
    let xmin = c.xs.iter().copied().fold(f64::INFINITY, f64::min);
    let xmax = c.xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (xmin, xmax) = if xmin < xmax {
        (xmin, xmax)
    } else {
        (xmin - 1.0, xmin + 1.0)
    };
    let ymax = y_max(c.series, 1.1);
    let mut b = ChartBuilder::on(&root);
    b.margin(15)
        .x_label_area_size(if text { 45 } else { 10 })
        .y_label_area_size(if text { 80 } else { 10 });
    if text {
        b.caption(c.title, ("sans-serif", 22));
    }
    // Log2 x axis: chunk sizes are powers of two.
    let mut chart = b
        .build_cartesian_2d((xmin..xmax).log_scale(), 0.0..ymax)
        .map_err(err)?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(c.x_label)
            .y_desc(c.y_label)
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(err)?;
    for (si, s) in c.series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let pts: Vec<(f64, f64)> = c.xs.iter().copied().zip(s.values.iter().copied()).collect();
        let drawn = chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(err)?;
        if text {
            drawn.label(s.label.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        }
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
            .map_err(err)?;
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

/// A named series of (x, y) points; series need not share x values.
pub struct XySeries {
    /// Legend label.
    pub label: String,
    /// Points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart over a linear x axis (time series), each series with its own x values.
pub struct XyChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: &'a [XySeries],
}

/// Writes `<base>.png` and `<base>.svg`.
pub fn xy_chart(base: &Path, chart: &XyChart) -> Result<()> {
    xy_chart_marked(base, chart, &[])
}

/// [`xy_chart`] with events marked: a dashed vertical line at each `(x, label)`, labelled.
pub fn xy_chart_marked(base: &Path, chart: &XyChart, markers: &[(f64, String)]) -> Result<()> {
    let png = base.with_extension("png");
    let svg = base.with_extension("svg");
    draw_xy(
        BitMapBackend::new(&png, SIZE).into_drawing_area(),
        chart,
        markers,
    )?;
    draw_xy(
        SVGBackend::new(&svg, SIZE).into_drawing_area(),
        chart,
        markers,
    )?;
    Ok(())
}

fn draw_xy<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    c: &XyChart,
    markers: &[(f64, String)],
) -> Result<()> {
    let text = has_font();
    root.fill(&WHITE).map_err(err)?;
    let pts = || c.series.iter().flat_map(|s| s.points.iter().copied());
    let xmax = pts().map(|p| p.0).fold(0.0f64, f64::max);
    let xmax = if xmax > 0.0 { xmax } else { 1.0 };
    let ymax = pts().map(|p| p.1).fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let mut b = ChartBuilder::on(&root);
    b.margin(15)
        .x_label_area_size(if text { 45 } else { 10 })
        .y_label_area_size(if text { 80 } else { 10 });
    if text {
        b.caption(c.title, ("sans-serif", 22));
    }
    let mut chart = b.build_cartesian_2d(0.0..xmax, 0.0..ymax).map_err(err)?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(c.x_label)
            .y_desc(c.y_label)
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| {
                if *y >= 10.0 || *y == 0.0 {
                    format!("{y:.0}")
                } else {
                    format!("{y:.1}")
                }
            });
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(err)?;
    let grey = RGBColor(150, 150, 150);
    for (x, label) in markers {
        // Dashes: short segments up the whole height.
        let dashes = (0..40).filter(|k| k % 2 == 0).map(|k| {
            let (y0, y1) = (ymax * k as f64 / 40.0, ymax * (k + 1) as f64 / 40.0);
            PathElement::new(vec![(*x, y0), (*x, y1)], grey.stroke_width(1))
        });
        chart.draw_series(dashes).map_err(err)?;
        if text {
            chart
                .draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*x, ymax * 0.97),
                    ("sans-serif", 11).into_font().color(&grey),
                )))
                .map_err(err)?;
        }
    }
    for (si, s) in c.series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let drawn = chart
            .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))
            .map_err(err)?;
        if text {
            drawn.label(s.label.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
