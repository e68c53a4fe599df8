//! The ladder's plot: GFLOP/s against matrix size, one line per rung plus cuBLAS, drawn as
//! SVG by the plotters crate (like the Triton tutorial's benchmark figure).

use crate::harness::report::Record;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Line colours for the rungs, distinguishable on white (cuBLAS is black).
const COLORS: [RGBColor; 15] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 139),
    RGBColor(139, 0, 0),
    RGBColor(0, 100, 0),
    RGBColor(255, 0, 255),
    RGBColor(184, 134, 11),
];

/// Square shapes smaller than this are left out of the plot: they measure launch latency.
pub const MIN_PLOTTED_SIZE: usize = 256;

/// The report's plots: file name, title, and the record precisions each shows. The tensor-core
/// rungs run an order of magnitude faster than the fp32 ladder, so they get their own axes.
pub const PLOTS: [(&str, &str, &[&str]); 2] = [
    ("plot.svg", "SGEMM ladder, fp32", &["fp32"]),
    (
        "plot-tensor-cores.svg",
        "Tensor-core rungs, TF32 and FP16",
        &["tf32", "fp16"],
    ),
];

/// Draws GFLOP/s against size for the square shapes (m = n = k ≥ [`MIN_PLOTTED_SIZE`]) in
/// `records` into an SVG file titled `title`.
/// Returns `Ok(false)` without writing anything when fewer than two square sizes were measured.
pub fn write_plot(
    path: &Path,
    records: &[Record],
    title: &str,
    device: &str,
) -> Result<bool, String> {
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
    let top = series.values().flatten().map(|p| p.1).fold(0.0, f64::max) * 1.1;
    // One evenly spaced slot per measured size, labelled with the size itself.
    let slot = |size: f64| sizes.iter().position(|&s| s == size).unwrap_or(0) as f64;
    let labels = sizes.clone();

    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{title}, {device}"), ("sans-serif", 24))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.3..(sizes.len() as f64 - 0.7), 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("M = N = K")
        .y_desc("TFLOP/s")
        .x_labels(sizes.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                format!("{:.0}", labels[i as usize])
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(err)?;
    for (i, rung) in order.iter().enumerate() {
        let mut points: Vec<(f64, f64)> = series[rung]
            .iter()
            .map(|&(size, t)| (slot(size), t))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let baseline = rung.starts_with("cublas");
        let color = if rung == "cublas" {
            BLACK
        } else if baseline {
            // The TF32 and fp16 baselines: dark grey and black, thick.
            if rung.ends_with("tf32") {
                RGBColor(90, 90, 90)
            } else {
                BLACK
            }
        } else {
            COLORS[i % COLORS.len()]
        };
        let width = if baseline { 3 } else { 2 };
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

/// Draws the dequant GEMM's speedup over cuBLAS fp16 against the weights' bit width: one line
/// per shape for m = 1 and for m = 16, for the unsigned formats with the most common group (and
/// fp16 weights at 16 bits), and dashed the ideal speedup at the same bandwidth. Returns `Ok(false)`
/// when fewer than two widths were measured.
pub fn write_dequant_plot(path: &Path, records: &[Record], device: &str) -> Result<bool, String> {
    // (n, k, m) → (bits → speedup); (n, k) → (bits → ideal).
    let mut measured: BTreeMap<(usize, usize, usize), BTreeMap<u32, f64>> = BTreeMap::new();
    let mut ideal: BTreeMap<(usize, usize), BTreeMap<u32, f64>> = BTreeMap::new();
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
            .entry((r.n, r.k, r.m))
            .or_default()
            .insert(bits, d.speedup);
        ideal
            .entry((r.n, r.k))
            .or_default()
            .insert(bits, d.ideal_speedup);
    }
    if measured.values().all(|series| series.len() < 2) {
        return Ok(false);
    }
    let top = measured
        .values()
        .chain(ideal.values())
        .flat_map(|s| s.values())
        .fold(1.0f64, |a, &b| a.max(b))
        * 1.1;
    let root = SVGBackend::new(path, (1000, 650)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<_>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Dequant GEMM (u1–u8, group {group}; f16 at 16) vs cuBLAS fp16, {device}"),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5f64..16.5, 0.0..top)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("bits per weight")
        .y_desc("speedup over cuBLAS fp16")
        .x_labels(17)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()
        .map_err(err)?;
    // The ideal barely depends on the shape (A and C are small next to W): draw the largest's.
    if let Some((&(n, k), series)) = ideal.iter().max_by_key(|((n, k), _)| n * k) {
        let points: Vec<(f64, f64)> = series.iter().map(|(&b, &s)| (b as f64, s)).collect();
        chart
            .draw_series(DashedLineSeries::new(points, 6, 4, BLACK.stroke_width(1)))
            .map_err(err)?
            .label(format!("ideal: fp16 bytes / these bytes (k={k} n={n})"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK));
    }
    let shapes: Vec<(usize, usize)> = ideal.keys().copied().collect();
    for (&(n, k, m), series) in measured.iter() {
        let shape_index = shapes.iter().position(|&s| s == (n, k)).unwrap_or(0);
        let color = COLORS[(2 * shape_index + usize::from(m > 1)) % COLORS.len()];
        let points: Vec<(f64, f64)> = series.iter().map(|(&b, &s)| (b as f64, s)).collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(format!("m={m}, k={k} n={n}"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(true)
}
