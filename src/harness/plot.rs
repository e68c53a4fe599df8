//! The report's plots, drawn as SVG by the plotters crate:
//! - TFLOP/s against matrix size on a log axis, a few rungs per panel, each panel with the
//!   cuBLAS baseline of its rungs' precision ([`write_plot`]);
//! - the percentage of cuBLAS that each rung reaches at one size, as bars
//!   ([`write_percent_plot`]);
//! - the dequant GEMM's speedup over cuBLAS fp16 against the weights' bit width, one panel per
//!   layer shape ([`write_dequant_plot`]), and against the batch size m
//!   ([`write_dequant_batch_plot`]);
//! - the shape suite's ratio to cuBLAS against each product's size, one panel per precision
//!   ([`write_suite_plot`], in `plot/suite.rs`).
//!
//! plotters draws the axes, grids and tick labels; the lines, markers and legends are drawn
//! here in pixels, so that every series has its own colour, marker and dash, and every legend
//! swatch looks exactly like its line.

use crate::harness::report::Record;
use plotters::coord::Shift;
use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;
use std::path::Path;

mod suite;
pub use suite::write_suite_plot;

/// The whole SVG canvas, in pixels.
type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A point on the canvas, in pixels.
type Pixel = (i32, i32);

/// Okabe and Ito's colour-blind-safe palette, without its yellow (too pale on white). No two
/// lines in one panel share a colour.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
];
/// Grey for grid-like reference lines.
const GREY: RGBColor = RGBColor(150, 150, 150);

/// Point markers. Filled and hollow ones alternate, so that two series with the same values
/// (v8 and v9) both stay visible: a small filled marker inside a larger hollow one.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Marker {
    None,
    Dot,
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
    Plus,
    Tick,
}

const MARKERS: [Marker; 6] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::Cross,
    Marker::Plus,
];

/// How one series is drawn: colour, marker, line width and dash (`(dash, gap)` in pixels).
#[derive(Clone, Copy, Debug)]
struct Look {
    color: RGBColor,
    marker: Marker,
    width: u32,
    dash: Option<(u32, u32)>,
}

impl Look {
    /// The `index`-th series of a panel: its own colour and marker, every other one dashed.
    fn series(index: usize) -> Look {
        Look {
            color: PALETTE[index % PALETTE.len()],
            marker: MARKERS[index % MARKERS.len()],
            width: 2,
            dash: if index % 2 == 1 { Some((8, 4)) } else { None },
        }
    }

    /// A cuBLAS baseline: thick and black, small dots at the measured points.
    const BASELINE: Look = Look {
        color: BLACK,
        marker: Marker::Dot,
        width: 3,
        dash: None,
    };
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A linear axis whose ticks are exactly `ticks`. (plotters' `with_key_points` on an f64 range
/// loses the range's value formatting, which the mesh needs.)
#[derive(Clone)]
struct LinearTicks {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for LinearTicks {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value - self.range.start) / (self.range.end - self.range.start);
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// A polyline in `look`'s colour, width and dash.
fn draw_path(canvas: &Canvas, points: &[Pixel], look: &Look) -> Result<(), String> {
    if points.len() < 2 {
        return Ok(());
    }
    let style = look.color.stroke_width(look.width);
    match look.dash {
        Some((dash, gap)) => canvas
            .draw(&DashedPathElement::new(
                points.iter().copied(),
                dash,
                gap,
                style,
            ))
            .map_err(err),
        None => canvas
            .draw(&PathElement::new(points.to_vec(), style))
            .map_err(err),
    }
}

fn draw_marker(
    canvas: &Canvas,
    (x, y): Pixel,
    marker: Marker,
    color: RGBColor,
) -> Result<(), String> {
    let stroke = color.stroke_width(2);
    let fill = color.filled();
    let line = |points: Vec<Pixel>| canvas.draw(&PathElement::new(points, stroke)).map_err(err);
    match marker {
        Marker::None => Ok(()),
        Marker::Dot => canvas.draw(&Circle::new((x, y), 3, fill)).map_err(err),
        Marker::Circle => canvas.draw(&Circle::new((x, y), 4, fill)).map_err(err),
        Marker::Square => canvas
            .draw(&Rectangle::new([(x - 6, y - 6), (x + 6, y + 6)], stroke))
            .map_err(err),
        Marker::Triangle => canvas
            .draw(&Polygon::new(
                vec![(x, y - 6), (x + 6, y + 5), (x - 6, y + 5)],
                fill,
            ))
            .map_err(err),
        Marker::Diamond => line(vec![
            (x, y - 8),
            (x + 8, y),
            (x, y + 8),
            (x - 8, y),
            (x, y - 8),
        ]),
        Marker::Cross => {
            line(vec![(x - 5, y - 5), (x + 5, y + 5)])?;
            line(vec![(x - 5, y + 5), (x + 5, y - 5)])
        }
        Marker::Plus => {
            line(vec![(x - 6, y), (x + 6, y)])?;
            line(vec![(x, y - 6), (x, y + 6)])
        }
        Marker::Tick => line(vec![(x - 7, y), (x + 7, y)]),
    }
}

fn draw_text(
    canvas: &Canvas,
    text: &str,
    at: Pixel,
    size: u32,
    pos: Pos,
    color: &RGBColor,
) -> Result<(), String> {
    let style = TextStyle::from(("sans-serif", size).into_font())
        .color(color)
        .pos(pos);
    canvas
        .draw(&Text::new(text.to_string(), at, style))
        .map_err(err)
}

const LEFT: Pos = Pos {
    h_pos: HPos::Left,
    v_pos: VPos::Center,
};
const CENTER: Pos = Pos {
    h_pos: HPos::Center,
    v_pos: VPos::Center,
};

/// Pixel width of the line swatch in a legend entry.
const SWATCH: i32 = 40;

/// One legend entry at `(x, y)` (the swatch's left end): a piece of the series' line with its
/// marker in the middle, then the label.
fn draw_legend_entry(
    canvas: &Canvas,
    (x, y): Pixel,
    look: &Look,
    label: &str,
) -> Result<(), String> {
    draw_path(canvas, &[(x, y), (x + SWATCH, y)], look)?;
    draw_marker(canvas, (x + SWATCH / 2, y), look.marker, look.color)?;
    draw_text(canvas, label, (x + SWATCH + 8, y), 14, LEFT, &BLACK)
}

/// Draws a series through `points` (pixels; `None` where it has no value, which breaks the
/// line), with a marker at each point.
fn draw_series(canvas: &Canvas, points: &[Option<Pixel>], look: &Look) -> Result<(), String> {
    for run in points.split(Option::is_none) {
        let run: Vec<Pixel> = run.iter().flatten().copied().collect();
        draw_path(canvas, &run, look)?;
    }
    for p in points.iter().flatten() {
        draw_marker(canvas, *p, look.marker, look.color)?;
    }
    Ok(())
}

/// Splits `text` into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A rung's idea without the per-shape detail some rungs add (v11's chosen tile).
fn short_idea(idea: &str) -> &str {
    idea.split(" → ").next().unwrap_or(idea)
}

/// Square shapes smaller than this are left out of the plot: they measure launch latency.
pub const MIN_PLOTTED_SIZE: usize = 256;

/// Sizes closer than this ratio would sit on top of each other on the log axis (1000 and 1024).
const CROWDED_RATIO: f64 = 1.15;

/// The report's plots of TFLOP/s against size: file name, title, and the record precisions
/// each shows. The tensor-core rungs run an order of magnitude faster than the fp32 ladder, so
/// they get their own axes.
pub const PLOTS: [(&str, &str, &[&str]); 2] = [
    ("plot.svg", "SGEMM ladder, fp32", &["fp32"]),
    (
        "plot-tensor-cores.svg",
        "Tensor-core rungs, TF32, FP16 and FP8",
        &["tf32", "fp16", "fp8-e4m3", "fp8-e5m2"],
    ),
];

/// File name of the bar chart of % of cuBLAS per rung ([`write_percent_plot`]).
pub const PERCENT_PLOT: &str = "plot-percent.svg";

/// The fp32 ladder's chapters, one panel each (rungs not listed get panels by precision).
const CHAPTERS: [(&str, &[&str]); 4] = [
    (
        "global memory to shared tiles",
        &["v0", "v1", "v2", "v3", "v4"],
    ),
    ("register blocking", &["v5", "v6", "v7"]),
    ("overlap, launch order, warp tiles", &["v8", "v9", "v10"]),
    (
        "autotuning, fused epilogue, cp.async",
        &["v11", "v12", "v13"],
    ),
];
/// Most rungs in one panel.
const MAX_PER_PANEL: usize = 5;

/// One panel of [`write_plot`]: its title, its cuBLAS baseline and its rungs.
struct Panel {
    key: String,
    title_words: String,
    baseline: Option<String>,
    rungs: Vec<String>,
}

impl Panel {
    fn title(&self) -> String {
        match (self.rungs.first(), self.rungs.last()) {
            (Some(first), Some(last)) if first != last => {
                format!("{first}–{last}: {}", self.title_words)
            }
            (Some(first), _) => format!("{first}: {}", self.title_words),
            _ => self.title_words.clone(),
        }
    }
}

/// The precision as the panels name it.
fn precision_label(precision: &str) -> String {
    match precision {
        "tf32" => "TF32 tensor cores".to_string(),
        "fp16" => "fp16 tensor cores".to_string(),
        "fp8-e4m3" => "FP8 e4m3 tensor cores".to_string(),
        "fp8-e5m2" => "FP8 e5m2 tensor cores".to_string(),
        other => other.to_string(),
    }
}

/// Keeps the sizes that stay apart on a log axis: of two closer than [`CROWDED_RATIO`], the
/// power of two (or the larger). Returns (kept, left out).
fn spread_sizes(sorted: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let mut kept: Vec<usize> = Vec::new();
    let mut left_out = Vec::new();
    for &size in sorted {
        match kept.last().copied() {
            Some(last) if (size as f64) / (last as f64) < CROWDED_RATIO => {
                if size.is_power_of_two() || !last.is_power_of_two() {
                    kept.pop();
                    kept.push(size);
                    left_out.push(last);
                } else {
                    left_out.push(size);
                }
            }
            _ => kept.push(size),
        }
    }
    (kept, left_out)
}

/// Draws TFLOP/s against size for the square shapes (m = n = k ≥ [`MIN_PLOTTED_SIZE`]) in
/// `records` into an SVG file titled `title`: size on a log axis, the rungs in panels of a few
/// (the fp32 ladder's chapters, else one per precision), each with the cuBLAS baseline of its
/// precision and a legend naming each rung's idea; notes under the panels say which points are
/// missing and why. Returns `Ok(false)` without writing anything when fewer than two square
/// sizes were measured.
pub fn write_plot(
    path: &Path,
    records: &[Record],
    title: &str,
    device: &str,
) -> Result<bool, String> {
    // rung → (size → TFLOP/s), rungs in the order they first appear.
    let mut order: Vec<String> = Vec::new();
    let mut about: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut series: BTreeMap<String, BTreeMap<usize, f64>> = BTreeMap::new();
    let mut skipped: Vec<(String, usize, String)> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.is_ladder() && r.m == r.n && r.n == r.k && r.m >= MIN_PLOTTED_SIZE)
    {
        if !about.contains_key(&r.rung) {
            order.push(r.rung.clone());
            about.insert(
                r.rung.clone(),
                (short_idea(&r.idea).to_string(), r.precision.clone()),
            );
        }
        if let Some(gflops) = r.gflops {
            series
                .entry(r.rung.clone())
                .or_default()
                .insert(r.m, gflops / 1000.0);
        } else if let Some(reason) = &r.skipped {
            skipped.push((r.rung.clone(), r.m, reason.clone()));
        }
    }
    let measured: Vec<usize> = {
        let mut s: Vec<usize> = series.values().flat_map(|s| s.keys().copied()).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let (sizes, left_out) = spread_sizes(&measured);
    if sizes.len() < 2 {
        return Ok(false);
    }
    let drawn: Vec<String> = order
        .iter()
        .filter(|r| series.contains_key(*r))
        .cloned()
        .collect();

    let mut panels: Vec<Panel> = Vec::new();
    for rung in drawn.iter().filter(|r| !r.starts_with("cublas")) {
        let precision = &about[rung].1;
        let (key, words) = match CHAPTERS
            .iter()
            .position(|(_, rs)| rs.contains(&rung.as_str()))
        {
            Some(c) => (format!("chapter {c}"), CHAPTERS[c].0.to_string()),
            None => (format!("precision {precision}"), precision_label(precision)),
        };
        match panels
            .iter_mut()
            .rev()
            .find(|p| p.key == key && p.rungs.len() < MAX_PER_PANEL)
        {
            Some(panel) => panel.rungs.push(rung.clone()),
            None => panels.push(Panel {
                key,
                title_words: words,
                baseline: drawn
                    .iter()
                    .find(|b| b.starts_with("cublas") && about[*b].1 == *precision)
                    .cloned(),
                rungs: vec![rung.clone()],
            }),
        }
    }
    if panels.is_empty() {
        // Baselines only.
        panels.push(Panel {
            key: String::new(),
            title_words: "cuBLAS".to_string(),
            baseline: None,
            rungs: drawn.clone(),
        });
    }

    // Notes: points that are not drawn, and why.
    let mut notes: Vec<String> = Vec::new();
    for (rung, size, reason) in &skipped {
        if sizes.contains(size) && series.contains_key(rung) {
            notes.push(format!("{rung} is not drawn at {size}³: {reason}."));
        }
    }
    if !left_out.is_empty() {
        let list: Vec<String> = left_out.iter().map(|s| format!("{s}³")).collect();
        notes.push(format!(
            "Not drawn: {} (too close to a neighbouring size on the log axis; results.md has every shape).",
            list.join(", ")
        ));
    }

    let cols = match panels.len() {
        1 => 1,
        2 | 4 => 2,
        _ => 3,
    };
    let rows = panels.len().div_ceil(cols);
    let width: u32 = if cols == 1 { 1000 } else { 1280 };
    let panel_w = width / cols as u32;
    let chart_h: u32 = 430;
    let entries = panels
        .iter()
        .map(|p| p.rungs.len() + usize::from(p.baseline.is_some()))
        .max()
        .unwrap_or(1) as u32;
    let legend_h = 22 * entries + 16;
    let note_lines: Vec<String> = notes
        .iter()
        .flat_map(|n| wrap(n, (width as usize - 60) / 7))
        .collect();
    let title_h = 48;
    let height = title_h + rows as u32 * (chart_h + legend_h) + 20 * note_lines.len() as u32 + 16;
    let top = series
        .values()
        .flat_map(|s| s.values())
        .fold(0.0f64, |a, &b| a.max(b))
        * 1.08;
    let x_range = (sizes[0] as f64 / 1.2)..(sizes[sizes.len() - 1] as f64 * 1.2);
    let key_points: Vec<f64> = sizes.iter().map(|&s| s as f64).collect();

    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    draw_text(
        &root,
        &format!("{title}, {device}: TFLOP/s against size"),
        (width as i32 / 2, 24),
        22,
        CENTER,
        &BLACK,
    )?;
    for (index, panel) in panels.iter().enumerate() {
        let (col, row) = ((index % cols) as u32, (index / cols) as u32);
        let (x0, y0) = (col * panel_w, title_h + row * (chart_h + legend_h));
        let area = root.clone().shrink((x0, y0), (panel_w, chart_h));
        let mut chart = ChartBuilder::on(&area)
            .caption(panel.title(), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(56)
            .build_cartesian_2d(
                x_range
                    .clone()
                    .log_scale()
                    .with_key_points(key_points.clone()),
                0.0..top,
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("M = N = K (log scale)")
            .y_desc("TFLOP/s")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_labels(8)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .bold_line_style(RGBColor(210, 210, 210))
            .light_line_style(RGBColor(242, 242, 242))
            .max_light_lines(1)
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(err)?;
        let mut legend: Vec<(Look, String)> = Vec::new();
        let lines = panel.baseline.iter().map(|b| (b, Look::BASELINE)).chain(
            panel
                .rungs
                .iter()
                .enumerate()
                .map(|(i, r)| (r, Look::series(i))),
        );
        for (rung, look) in lines {
            let values = &series[rung];
            let points: Vec<Option<Pixel>> = sizes
                .iter()
                .map(|s| values.get(s).map(|&t| chart.backend_coord(&(*s as f64, t))))
                .collect();
            draw_series(&root, &points, &look)?;
            let idea = &about[rung].0;
            let mut label = if rung.starts_with("cublas") {
                idea.clone()
            } else {
                format!("{rung} {idea}")
            };
            if let Some((_, size, _)) = skipped
                .iter()
                .find(|(r, s, _)| r == rung && sizes.contains(s))
            {
                label.push_str(&format!(" (none at {size}³: see the note below)"));
            }
            legend.push((look, label));
        }
        for (i, (look, label)) in legend.iter().enumerate() {
            let y = (y0 + chart_h + 10 + 22 * i as u32) as i32;
            draw_legend_entry(&root, (x0 as i32 + 64, y), look, label)?;
        }
    }
    let notes_y = title_h + rows as u32 * (chart_h + legend_h);
    for (i, line) in note_lines.iter().enumerate() {
        draw_text(
            &root,
            line,
            (30, (notes_y + 8 + 20 * i as u32) as i32),
            14,
            LEFT,
            &RGBColor(60, 60, 60),
        )?;
    }
    root.present().map_err(err)?;
    Ok(true)
}

/// Bar colour of a precision.
fn precision_color(precision: &str) -> RGBColor {
    match precision {
        "fp32" => PALETTE[0],
        "tf32" => PALETTE[4],
        "fp16" => PALETTE[2],
        "fp8-e4m3" => PALETTE[3],
        "fp8-e5m2" => PALETTE[5],
        _ => GREY,
    }
}

/// Draws the percentage of cuBLAS (in the rung's own precision) that each rung reaches, one
/// bar per rung in ladder order, at 4096³ or, when that was not measured, at the largest square
/// size that was. Returns `Ok(false)` without writing anything when no rung has a percentage at
/// a square size.
pub fn write_percent_plot(path: &Path, records: &[Record], device: &str) -> Result<bool, String> {
    let square = |r: &&Record| r.is_ladder() && r.m == r.n && r.n == r.k;
    let rated: Vec<&Record> = records
        .iter()
        .filter(square)
        .filter(|r| !r.rung.starts_with("cublas") && r.percent_of_reference.is_some())
        .collect();
    let Some(size) = (if rated.iter().any(|r| r.m == 4096) {
        Some(4096)
    } else {
        rated.iter().map(|r| r.m).max()
    }) else {
        return Ok(false);
    };
    // (rung, idea, precision, percent), in the order the rungs first appear.
    let mut bars: Vec<(String, String, String, Option<f64>)> = Vec::new();
    for r in records
        .iter()
        .filter(square)
        .filter(|r| !r.rung.starts_with("cublas") && r.m == size)
    {
        if !bars.iter().any(|b| b.0 == r.rung) {
            bars.push((
                r.rung.clone(),
                short_idea(&r.idea).to_string(),
                r.precision.clone(),
                r.percent_of_reference,
            ));
        }
    }
    // Each precision's baseline, for the legend.
    let mut baselines: Vec<(String, String)> = Vec::new();
    for r in records.iter().filter(|r| r.rung.starts_with("cublas")) {
        if !baselines.iter().any(|b| b.0 == r.precision) {
            baselines.push((r.precision.clone(), r.idea.clone()));
        }
    }
    let precisions: Vec<String> = {
        let mut p: Vec<String> = Vec::new();
        for bar in &bars {
            if !p.contains(&bar.2) {
                p.push(bar.2.clone());
            }
        }
        p
    };

    let count = bars.len();
    let row_h: u32 = 28;
    let (width, title_h, axis_h) = (1100u32, 50u32, 60u32);
    let legend_h = 24 * precisions.len() as u32 + 16;
    let height = title_h + row_h * count as u32 + axis_h + legend_h;
    let best = bars.iter().filter_map(|b| b.3).fold(100.0f64, f64::max);
    let x_max = (best * 1.12 / 10.0).ceil() * 10.0;
    let centers: Vec<f64> = (0..count).map(|i| i as f64 + 0.5).collect();
    // Bar `i` (0 = first rung) sits at the top: y = count − 1 − i.
    let labels: Vec<String> = bars
        .iter()
        .map(|(rung, idea, _, _)| format!("{rung}  {idea}"))
        .collect();

    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    draw_text(
        &root,
        &format!("% of cuBLAS per rung at {size}³, {device}"),
        (width as i32 / 2, 24),
        22,
        CENTER,
        &BLACK,
    )?;
    let area = root
        .clone()
        .shrink((0, title_h), (width, row_h * count as u32 + axis_h));
    let mut chart = ChartBuilder::on(&area)
        .margin_right(30)
        .margin_left(10)
        .x_label_area_size(axis_h - 10)
        .y_label_area_size(370)
        .build_cartesian_2d(
            0.0..x_max,
            LinearTicks {
                range: 0.0..count as f64,
                ticks: centers.clone(),
            },
        )
        .map_err(err)?;
    let label_of = |y: &f64| {
        let i = count as i64 - 1 - y.floor() as i64;
        usize::try_from(i)
            .ok()
            .and_then(|i| labels.get(i))
            .cloned()
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_labels(12)
        .x_label_formatter(&|x| format!("{x:.0}%"))
        .y_label_formatter(&label_of)
        .x_desc("% of cuBLAS in the rung's own precision (same shape, same run)")
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .max_light_lines(1)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    for (i, (_, _, precision, percent)) in bars.iter().enumerate() {
        let y = (count - 1 - i) as f64;
        let text_at = match percent {
            Some(p) => {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y + 0.18), (*p, y + 0.82)],
                        precision_color(precision).filled(),
                    )))
                    .map_err(err)?;
                chart.backend_coord(&(*p, y + 0.5))
            }
            None => chart.backend_coord(&(0.0, y + 0.5)),
        };
        let text = match percent {
            Some(p) if *p < 1.0 => format!("{p:.2}%"),
            Some(p) => format!("{p:.1}%"),
            None => "not run at this size".to_string(),
        };
        draw_text(&root, &text, (text_at.0 + 6, text_at.1), 13, LEFT, &BLACK)?;
    }
    // cuBLAS itself: 100%.
    let (top_of_100, bottom_of_100) = (
        chart.backend_coord(&(100.0, count as f64)),
        chart.backend_coord(&(100.0, 0.0)),
    );
    draw_path(
        &root,
        &[top_of_100, bottom_of_100],
        &Look {
            color: BLACK,
            marker: Marker::None,
            width: 2,
            dash: Some((6, 4)),
        },
    )?;
    draw_text(
        &root,
        "cuBLAS",
        (top_of_100.0, top_of_100.1 - 8),
        13,
        CENTER,
        &BLACK,
    )?;
    let legend_y = title_h + row_h * count as u32 + axis_h + 8;
    for (i, precision) in precisions.iter().enumerate() {
        let y = (legend_y + 24 * i as u32 + 8) as i32;
        let x = 380;
        root.draw(&Rectangle::new(
            [(x, y - 7), (x + 30, y + 7)],
            precision_color(precision).filled(),
        ))
        .map_err(err)?;
        let baseline = baselines
            .iter()
            .find(|b| b.0 == *precision)
            .map(|b| b.1.as_str())
            .unwrap_or("cuBLAS");
        draw_text(
            &root,
            &format!(
                "{} rungs, as % of {baseline}",
                if precision == "tf32" {
                    "TF32"
                } else {
                    precision
                }
            ),
            (x + 40, y),
            14,
            LEFT,
            &BLACK,
        )?;
    }
    root.present().map_err(err)?;
    Ok(true)
}

/// A dequant plot panel: linear x, log-scale speedup.
type SpeedupChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<LinearTicks, WithKeyPoints<LogCoord<f64>>>>;

/// The chart of one panel of the dequant plots: `caption` above, linear x ticks at `x_ticks`
/// (labelled by `x_label`), speedup over cuBLAS fp16 on a log scale, and parity with cuBLAS (1×)
/// drawn in grey.
#[allow(clippy::too_many_arguments)]
fn speedup_panel<'a, 'b>(
    root: &Canvas<'b>,
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: String,
    x_range: std::ops::Range<f64>,
    x_ticks: Vec<f64>,
    x_desc: &str,
    x_label: &dyn Fn(&f64) -> String,
    y_range: std::ops::Range<f64>,
    y_ticks: Vec<f64>,
) -> Result<SpeedupChart<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(52)
        .build_cartesian_2d(
            LinearTicks {
                range: x_range.clone(),
                ticks: x_ticks,
            },
            y_range.log_scale().with_key_points(y_ticks),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("speedup over cuBLAS fp16 (log scale)")
        .x_label_formatter(x_label)
        .y_label_formatter(&|y| format!("{y}×"))
        .bold_line_style(RGBColor(215, 215, 215))
        .light_line_style(RGBColor(242, 242, 242))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    let parity = [
        chart.backend_coord(&(x_range.start, 1.0)),
        chart.backend_coord(&(x_range.end, 1.0)),
    ];
    let parity_look = Look {
        color: GREY,
        marker: Marker::None,
        width: 1,
        dash: None,
    };
    draw_path(root, &parity, &parity_look)?;
    Ok(chart)
}

/// x position of a bit width in the dequant plot: 1–8 at their values, 16 (fp16 weights) just
/// past a gap, so the axis does not spend half its width on widths nobody measures.
fn bits_slot(bits: u32) -> f64 {
    if bits <= 8 { bits as f64 } else { 9.6 }
}

/// Draws the dequant GEMM's speedup over cuBLAS fp16 against the weights' bit width, one panel
/// per layer shape: m = 1 and m = 16 (solid with filled circles, dashed with hollow squares
/// shifted a little to the right), the ideal speedup at the same bandwidth (black, short dashes)
/// and parity with cuBLAS (grey), for the unsigned formats with the most common group and fp16
/// weights at 16 bits, on a log scale of speedup. Lines join consecutive widths only (nothing
/// is drawn between 8 and 16 bits). Returns `Ok(false)` when fewer than two widths were
/// measured.
pub fn write_dequant_plot(path: &Path, records: &[Record], device: &str) -> Result<bool, String> {
    // (n, k) → m → (bits → speedup); (n, k) → (bits → ideal).
    type BitsSeries = BTreeMap<u32, f64>;
    let mut measured: BTreeMap<(usize, usize), BTreeMap<usize, BitsSeries>> = BTreeMap::new();
    let mut ideal: BTreeMap<(usize, usize), BitsSeries> = BTreeMap::new();
    let mut groups: BTreeMap<usize, usize> = BTreeMap::new();
    for r in records {
        if let Some(d) = &r.dequant
            && d.format.starts_with('u')
            && !d.zero_points
        {
            *groups.entry(d.group).or_default() += 1;
        }
    }
    let Some((&group, _)) = groups.iter().max_by_key(|(_, count)| **count) else {
        return Ok(false);
    };
    for r in records {
        let Some(d) = &r.dequant else { continue };
        let bits = match d.format.as_str() {
            "f16" => 16,
            f if f.starts_with('u') && !d.zero_points && d.group == group => {
                match f[1..].parse::<u32>() {
                    Ok(b) => b,
                    Err(_) => continue,
                }
            }
            _ => continue,
        };
        if r.m != 1 && r.m != 16 {
            continue;
        }
        measured
            .entry((r.n, r.k))
            .or_default()
            .entry(r.m)
            .or_default()
            .insert(bits, d.speedup);
        ideal
            .entry((r.n, r.k))
            .or_default()
            .insert(bits, d.ideal_speedup);
    }
    if measured
        .values()
        .flat_map(|by_m| by_m.values())
        .all(|series| series.len() < 2)
    {
        return Ok(false);
    }
    // Largest layer first: the headline shape.
    let mut shapes: Vec<(usize, usize)> = measured.keys().copied().collect();
    shapes.sort_by_key(|&(n, k)| std::cmp::Reverse(n * k));
    let all_values = measured
        .values()
        .flat_map(|by_m| by_m.values())
        .chain(ideal.values())
        .flat_map(|s| s.values().copied());
    let (low, high) = all_values.fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let y_range = (low / 1.3).min(0.5)..(high * 1.3);
    let y_ticks: Vec<f64> = (-4..8)
        .map(|e| 2f64.powi(e))
        .filter(|t| y_range.contains(t))
        .collect();
    let mut x_ticks: Vec<f64> = (1..=8).map(f64::from).collect();
    let has_fp16 = ideal.values().any(|s| s.contains_key(&16));
    if has_fp16 {
        x_ticks.push(bits_slot(16));
    }
    let x_range = 0.4..(if has_fp16 { 10.2 } else { 8.6 });

    let cols = shapes.len().min(3);
    let rows = shapes.len().div_ceil(cols);
    let width = 1320u32;
    let panel_w = width / cols as u32;
    let (title_h, chart_h, legend_h) = (48u32, 470u32, 70u32);
    let height = title_h + rows as u32 * chart_h + legend_h;
    let m_looks = |index: usize| -> Look {
        if index == 0 {
            Look {
                color: PALETTE[0],
                marker: Marker::Circle,
                width: 2,
                dash: None,
            }
        } else {
            Look {
                color: PALETTE[1],
                marker: Marker::Square,
                width: 2,
                dash: Some((9, 4)),
            }
        }
    };
    let ideal_look = Look {
        color: BLACK,
        marker: Marker::Tick,
        width: 2,
        dash: Some((3, 3)),
    };
    let parity_look = Look {
        color: GREY,
        marker: Marker::None,
        width: 1,
        dash: None,
    };

    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    draw_text(
        &root,
        &format!(
            "Dequant GEMM (u1–u8, group {group}; fp16 weights at 16) vs cuBLAS fp16, {device}"
        ),
        (width as i32 / 2, 24),
        21,
        CENTER,
        &BLACK,
    )?;
    let mut m_values: Vec<usize> = measured
        .values()
        .flat_map(|by_m| by_m.keys().copied())
        .collect();
    m_values.sort_unstable();
    m_values.dedup();
    for (index, &(n, k)) in shapes.iter().enumerate() {
        let (col, row) = ((index % cols) as u32, (index / cols) as u32);
        let area = root
            .clone()
            .shrink((col * panel_w, title_h + row * chart_h), (panel_w, chart_h));
        let bits_label = |x: &f64| {
            if *x > 8.5 {
                "16".to_string()
            } else {
                format!("{x:.0}")
            }
        };
        let chart = speedup_panel(
            &root,
            &area,
            format!("k = {k}, n = {n}"),
            x_range.clone(),
            x_ticks.clone(),
            "bits per weight",
            &bits_label,
            y_range.clone(),
            y_ticks.clone(),
        )?;
        // A widths slot per measured width, `None` where one is missing, so lines break at
        // gaps (and always between 8 and 16 bits).
        let points = |series: &BitsSeries, shift: f64| -> Vec<Option<Pixel>> {
            let mut out = Vec::new();
            for bits in (1..=8).chain(std::iter::once(16)) {
                if bits == 16 {
                    out.push(None);
                }
                out.push(
                    series
                        .get(&bits)
                        .map(|&s| chart.backend_coord(&(bits_slot(bits) + shift, s))),
                );
            }
            out
        };
        if let Some(series) = ideal.get(&(n, k)) {
            draw_series(&root, &points(series, 0.0), &ideal_look)?;
        }
        for (i, m) in m_values.iter().enumerate() {
            if let Some(series) = measured[&(n, k)].get(m) {
                draw_series(&root, &points(series, 0.12 * i as f64), &m_looks(i))?;
            }
        }
    }
    // One legend for all panels.
    let mut legend: Vec<(Look, String)> = m_values
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let shifted = if i > 0 {
                ", drawn a little to the right"
            } else {
                ""
            };
            (m_looks(i), format!("m = {m}{shifted}"))
        })
        .collect();
    legend.push((
        ideal_look,
        "ideal: fp16 weight bytes / these bytes".to_string(),
    ));
    legend.push((parity_look, "cuBLAS fp16 (1×)".to_string()));
    let legend_y = title_h + rows as u32 * chart_h + 14;
    for (i, (look, label)) in legend.iter().enumerate() {
        let (col, row) = ((i % 2) as i32, (i / 2) as i32);
        draw_legend_entry(
            &root,
            (200 + col * 560, legend_y as i32 + 24 * row),
            look,
            label,
        )?;
    }
    root.present().map_err(err)?;
    Ok(true)
}

/// Draws the dequant GEMM's speedup over cuBLAS fp16 against the batch size m (both on log
/// scales), one panel per layer shape, one line per format with the most common group and no
/// zero points (u4 first), with parity with cuBLAS in grey: where decode, batched decode and
/// prefill take over shows in the line. Returns `Ok(false)` when no format was measured at two
/// or more m for some shape.
pub fn write_dequant_batch_plot(
    path: &Path,
    records: &[Record],
    device: &str,
) -> Result<bool, String> {
    // (n, k) → format → (m → speedup).
    type RowSeries = BTreeMap<usize, f64>;
    let mut groups: BTreeMap<usize, usize> = BTreeMap::new();
    for d in records.iter().filter_map(|r| r.dequant.as_ref()) {
        if !d.zero_points && d.format != "f16" {
            *groups.entry(d.group).or_default() += 1;
        }
    }
    let Some((&group, _)) = groups.iter().max_by_key(|(_, count)| **count) else {
        return Ok(false);
    };
    let mut measured: BTreeMap<(usize, usize), BTreeMap<String, RowSeries>> = BTreeMap::new();
    for r in records {
        let Some(d) = &r.dequant else { continue };
        if d.zero_points || d.group != group {
            continue;
        }
        measured
            .entry((r.n, r.k))
            .or_default()
            .entry(d.format.clone())
            .or_default()
            .insert(r.m, d.speedup);
    }
    // Shapes with a format measured at two m or more; within them, formats in order of how many
    // m they have (u4 first on ties).
    measured.retain(|_, formats| {
        formats.retain(|_, series| series.len() >= 2);
        !formats.is_empty()
    });
    if measured.is_empty() {
        return Ok(false);
    }
    let mut formats: Vec<String> = measured.values().flat_map(|f| f.keys().cloned()).collect();
    formats.sort_by_key(|f| {
        let points: usize = measured
            .values()
            .filter_map(|by_format| by_format.get(f))
            .map(|s| s.len())
            .sum();
        (std::cmp::Reverse(points), f != "u4", f.clone())
    });
    formats.dedup();
    formats.truncate(PALETTE.len());
    let mut shapes: Vec<(usize, usize)> = measured.keys().copied().collect();
    shapes.sort_by_key(|&(n, k)| std::cmp::Reverse(n * k));
    let rows_measured = measured
        .values()
        .flat_map(|f| f.values())
        .flat_map(|s| s.keys().copied());
    let max_m = rows_measured.max().unwrap_or(1).max(2);
    let x_range = -0.4..((max_m as f64).log2() + 0.4);
    let x_ticks: Vec<f64> = (0..=(max_m as f64).log2().ceil() as i32)
        .map(f64::from)
        .collect();
    let (low, high) = measured
        .values()
        .flat_map(|f| f.values())
        .flat_map(|s| s.values().copied())
        .fold((1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let y_range = (low / 1.3).min(0.5)..(high * 1.3);
    let y_ticks: Vec<f64> = (-4..8)
        .map(|e| 2f64.powi(e))
        .filter(|t| y_range.contains(t))
        .collect();

    let cols = shapes.len().min(3);
    let rows = shapes.len().div_ceil(cols);
    let width = 1320u32;
    let panel_w = width / cols as u32;
    let (title_h, chart_h, legend_h) = (48u32, 420u32, 40 + 24 * formats.len().div_ceil(3) as u32);
    let height = title_h + rows as u32 * chart_h + legend_h;
    let look = |index: usize| Look {
        width: if index == 0 { 3 } else { 2 },
        ..Look::series(index)
    };
    let parity_look = Look {
        color: GREY,
        marker: Marker::None,
        width: 1,
        dash: None,
    };
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    draw_text(
        &root,
        &format!("Dequant GEMM against batch size m (group {group}) vs cuBLAS fp16, {device}"),
        (width as i32 / 2, 24),
        21,
        CENTER,
        &BLACK,
    )?;
    for (index, &(n, k)) in shapes.iter().enumerate() {
        let (col, row) = ((index % cols) as u32, (index / cols) as u32);
        let area = root
            .clone()
            .shrink((col * panel_w, title_h + row * chart_h), (panel_w, chart_h));
        let chart = speedup_panel(
            &root,
            &area,
            format!("k = {k}, n = {n}"),
            x_range.clone(),
            x_ticks.clone(),
            "m (rows of activations, log scale)",
            &|x: &f64| format!("{}", 2f64.powf(*x).round()),
            y_range.clone(),
            y_ticks.clone(),
        )?;
        for (i, format) in formats.iter().enumerate() {
            if let Some(series) = measured[&(n, k)].get(format) {
                let points: Vec<Option<Pixel>> = series
                    .iter()
                    .map(|(&m, &s)| Some(chart.backend_coord(&((m as f64).log2(), s))))
                    .collect();
                draw_series(&root, &points, &look(i))?;
            }
        }
    }
    let legend_y = title_h + rows as u32 * chart_h + 14;
    let mut legend: Vec<(Look, String)> = formats
        .iter()
        .enumerate()
        .map(|(i, f)| (look(i), f.clone()))
        .collect();
    legend.push((parity_look, "cuBLAS fp16 (1×)".to_string()));
    for (i, (look, label)) in legend.iter().enumerate() {
        let (col, row) = ((i % 3) as i32, (i / 3) as i32);
        draw_legend_entry(
            &root,
            (160 + col * 380, legend_y as i32 + 24 * row),
            look,
            label,
        )?;
    }
    root.present().map_err(err)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowded_sizes_keep_the_power_of_two() {
        assert_eq!(
            spread_sizes(&[1000, 1024, 2048, 4096]),
            (vec![1024, 2048, 4096], vec![1000])
        );
        assert_eq!(
            spread_sizes(&[1024, 1100, 3000]),
            (vec![1024, 3000], vec![1100])
        );
        assert_eq!(spread_sizes(&[500, 520]), (vec![520], vec![500]));
    }

    /// cuBLAS and three rungs at three square sizes, v1 refused at the largest.
    fn ladder_records() -> Vec<Record> {
        let mut records = Vec::new();
        for size in [1024usize, 2048, 4096] {
            let shape = crate::GemmShape::new(size, size, size).unwrap();
            for (rung, idea, ms) in [
                ("cublas", "cuBLAS SGEMM, TF32 off", 1.0),
                ("v0", "global memory", 8.0),
                ("v1", "whole panels in shared memory", 500.0),
                ("v8", "double buffering", 1.3),
            ] {
                let mut r = Record::new(rung, idea, &shape, "Test GPU", 1, 5);
                if rung == "v1" && size == 4096 {
                    r.skipped = Some("too much shared memory".to_string());
                } else {
                    r.set_time(ms, &shape);
                    r.set_reference_time(1.0);
                }
                records.push(r);
            }
        }
        records
    }

    #[test]
    fn plots_name_each_rung_with_its_idea_and_say_what_is_missing() {
        let dir = std::env::temp_dir().join(format!("plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let records = ladder_records();
        let lines = dir.join("plot.svg");
        assert!(write_plot(&lines, &records, "Test", "Test GPU").unwrap());
        let svg = std::fs::read_to_string(&lines).unwrap();
        assert!(svg.contains("v8 double buffering"));
        assert!(svg.contains("v1 is not drawn at 4096³: too much shared memory."));
        let bars = dir.join(PERCENT_PLOT);
        assert!(write_percent_plot(&bars, &records, "Test GPU").unwrap());
        let svg = std::fs::read_to_string(&bars).unwrap();
        assert!(svg.contains("at 4096³"));
        assert!(svg.contains("12.5%"));
        assert!(svg.contains("not run at this size"));
        // Nothing to plot: no file.
        let none = dir.join("none.svg");
        assert!(!write_percent_plot(&none, &[], "Test GPU").unwrap());
        assert!(!none.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lines_wrap_at_spaces() {
        assert_eq!(wrap("a bb ccc dd", 6), vec!["a bb", "ccc dd"]);
        assert_eq!(wrap("", 6), Vec::<String>::new());
    }
}
