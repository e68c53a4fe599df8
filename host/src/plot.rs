//! The ladder's plot: GFLOP/s against matrix size, one line per rung plus cuBLAS, drawn as
//! SVG by the plotters crate (like the Triton tutorial's benchmark figure).

use crate::report::Record;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Square shapes smaller than this are left out of the plot: they measure launch latency.
pub const MIN_PLOTTED_SIZE: usize = 256;

/// Draws GFLOP/s against size for the square shapes (m = n = k ≥ [`MIN_PLOTTED_SIZE`]) in
/// `records` into an SVG file.
/// Returns `Ok(false)` without writing anything when fewer than two square sizes were measured.
pub fn write_plot(path: &Path, records: &[Record], device: &str) -> Result<bool, String> {
    // rung → (size → GFLOP/s), rungs in the order they first appear.
    let mut order: Vec<String> = Vec::new();
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.m == r.n && r.n == r.k && r.m >= MIN_PLOTTED_SIZE)
    {
        if let Some(gflops) = r.gflops {
            if !series.contains_key(&r.rung) {
                order.push(r.rung.clone());
            }
            series
                .entry(r.rung.clone())
                .or_default()
                .push((r.m as f64, gflops / 1000.0));
        }
    }
    let sizes: Vec<f64> = {
        let mut s: Vec<f64> = series.values().flatten().map(|p| p.0).collect();
        s.sort_by(f64::total_cmp);
        s.dedup();
        s
    };
    if sizes.len() < 2 {
        return Ok(false);
    }
    let (lo, hi) = (sizes[0], sizes[sizes.len() - 1]);
    let top = series.values().flatten().map(|p| p.1).fold(0.0, f64::max) * 1.1;

    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("SGEMM ladder, fp32, {device}"), ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((lo * 0.9..hi * 1.1).log_scale(), 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("M = N = K")
        .y_desc("TFLOP/s")
        .x_labels(sizes.len())
        .x_label_formatter(&|x| format!("{:.0}", x))
        .draw()
        .map_err(err)?;
    for (i, rung) in order.iter().enumerate() {
        let mut points = series[rung].clone();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = if rung == "cublas" {
            BLACK.to_rgba()
        } else {
            Palette99::pick(i).to_rgba()
        };
        let width = if rung == "cublas" { 3 } else { 2 };
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(width)))
            .map_err(err)?
            .label(rung.clone())
            .legend(move |(x, y)| {
                PathElement::new([(x, y), (x + 20, y)], color.stroke_width(width))
            });
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(true)
}
