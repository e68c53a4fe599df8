//! The shape suite's plot: for each precision, every case's ratio to cuBLAS against the size
//! of its product, so that where the library falls behind (small, thin, long-k products) is
//! seen at a glance.

use super::{
    CENTER, Canvas, GREY, LEFT, Look, MARKERS, Marker, PALETTE, Pixel, SWATCH, draw_marker,
    draw_path, draw_text, err,
};
use crate::harness::report::Record;
use crate::harness::suite_report::summarize;
use plotters::prelude::*;
use std::path::Path;

/// `(group, layout)` of a suite record: what gives a point its colour and marker.
fn series_key(r: &Record) -> (String, String) {
    let s = r.suite.as_ref().expect("a shape-suite record");
    (s.suite_group.clone(), s.b_layout.clone())
}

/// Powers of `base` inside `range`.
fn powers(base: f64, range: &std::ops::Range<f64>) -> Vec<f64> {
    (-40..40)
        .map(|e| base.powi(e))
        .filter(|v| range.contains(v))
        .collect()
}

/// Draws the ratio of our rate to cuBLAS's (log scale) against the product's floating-point
/// operations `2·m·n·k` (log scale), one panel per precision, one colour and marker per suite
/// group and B layout, parity with cuBLAS as a grey line; each panel's title gives the geometric
/// mean and the worst ratio. Only cases that ran and passed verification are drawn. Returns
/// `Ok(false)` without writing anything when no case has a ratio.
pub fn write_suite_plot(path: &Path, records: &[Record], device: &str) -> Result<bool, String> {
    let points: Vec<(&Record, f64, f64)> = records
        .iter()
        .filter(|r| r.passed && r.skipped.is_none())
        .filter_map(|r| {
            let ratio = r.suite.as_ref()?.ratio?;
            (ratio > 0.0 && ratio.is_finite()).then_some((
                r,
                2.0 * (r.m * r.n) as f64 * r.k as f64,
                ratio,
            ))
        })
        .collect();
    if points.is_empty() {
        return Ok(false);
    }
    let summaries: Vec<_> = summarize(records)
        .into_iter()
        .filter(|s| s.geomean.is_some())
        .collect();
    let mut keys: Vec<(String, String)> = Vec::new();
    for (r, _, _) in &points {
        let key = series_key(r);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let look = |key: &(String, String)| {
        let index = keys.iter().position(|k| k == key).unwrap_or(0);
        (
            PALETTE[index % PALETTE.len()],
            MARKERS[index % MARKERS.len()],
        )
    };

    let (flops_lo, flops_hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.1), hi.max(p.1))
    });
    let (ratio_lo, ratio_hi) = points
        .iter()
        .fold((0.5f64, 2.0f64), |(lo, hi), p| (lo.min(p.2), hi.max(p.2)));
    let x_range = (flops_lo / 3.0)..(flops_hi * 3.0);
    let y_range = (ratio_lo / 1.3)..(ratio_hi * 1.3);
    let (x_ticks, y_ticks) = (powers(10.0, &x_range), powers(2.0, &y_range));

    let cols = summaries.len().clamp(1, 2);
    let rows = summaries.len().div_ceil(cols).max(1);
    let width = 1280u32;
    let panel_w = width / cols as u32;
    let (title_h, chart_h) = (48u32, 440u32);
    let legend_rows = keys.len().div_ceil(3) as u32;
    let height = title_h + rows as u32 * chart_h + 24 * legend_rows + 24;

    let root: Canvas = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    draw_text(
        &root,
        &format!("Library dispatch against cuBLAS, same precision and B layout, {device}"),
        (width as i32 / 2, 24),
        21,
        CENTER,
        &BLACK,
    )?;
    for (index, summary) in summaries.iter().enumerate() {
        let (col, row) = ((index % cols) as u32, (index / cols) as u32);
        let area = root
            .clone()
            .shrink((col * panel_w, title_h + row * chart_h), (panel_w, chart_h));
        let caption = format!(
            "{}: geometric mean {:.2}×, worst {}",
            summary.precision,
            summary.geomean.unwrap_or(f64::NAN),
            summary
                .worst
                .as_ref()
                .map_or("-".to_string(), |(label, r)| format!("{r:.2}× ({label})"))
        );
        let mut chart = ChartBuilder::on(&area)
            .caption(caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(56)
            .build_cartesian_2d(
                x_range.clone().log_scale().with_key_points(x_ticks.clone()),
                y_range.clone().log_scale().with_key_points(y_ticks.clone()),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("floating-point operations per product, 2·m·n·k (log scale)")
            .y_desc("our rate / cuBLAS's (log scale)")
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .y_label_formatter(&|y| format!("{y}×"))
            .bold_line_style(RGBColor(215, 215, 215))
            .light_line_style(RGBColor(242, 242, 242))
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(err)?;
        let parity: [Pixel; 2] = [
            chart.backend_coord(&(x_range.start, 1.0)),
            chart.backend_coord(&(x_range.end, 1.0)),
        ];
        draw_path(
            &root,
            &parity,
            &Look {
                color: GREY,
                marker: Marker::None,
                width: 1,
                dash: None,
            },
        )?;
        for (r, flops, ratio) in points.iter().filter(|p| p.0.precision == summary.precision) {
            let (color, marker) = look(&series_key(r));
            draw_marker(&root, chart.backend_coord(&(*flops, *ratio)), marker, color)?;
        }
    }
    let legend_y = (title_h + rows as u32 * chart_h + 16) as i32;
    for (i, key) in keys.iter().enumerate() {
        let (color, marker) = look(key);
        let (col, row) = ((i % 3) as i32, (i / 3) as i32);
        let (x, y) = (120 + col * 380, legend_y + 24 * row);
        draw_marker(&root, (x + SWATCH / 2, y), marker, color)?;
        draw_text(
            &root,
            &format!("{}, B {}", key.0, key.1),
            (x + SWATCH + 8, y),
            14,
            LEFT,
            &BLACK,
        )?;
    }
    root.present().map_err(err)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::suite_report::tests::suite_record;

    #[test]
    fn draws_one_panel_per_precision_and_nothing_without_ratios() {
        let dir = std::env::temp_dir().join(format!("suite-plot-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let records = vec![
            suite_record("square-256", "square", (256, 256, 256), "fp32", "kn", 0.5),
            suite_record("l.m1", "llm", (1, 4096, 4096), "fp16", "nk", 2.0),
            suite_record("l.m1", "llm", (1, 4096, 4096), "fp16", "kn", 0.25),
        ];
        let path = dir.join("plot.svg");
        assert!(write_suite_plot(&path, &records, "Test GPU").unwrap());
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("fp32: geometric mean 0.50×"), "{svg}");
        assert!(svg.contains("worst 0.25× (l.m1 (B kn))"));
        assert!(svg.contains("llm, B nk") && svg.contains("square, B kn"));
        let none = dir.join("none.svg");
        assert!(!write_suite_plot(&none, &[], "Test GPU").unwrap());
        assert!(!none.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
