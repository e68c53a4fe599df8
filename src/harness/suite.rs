//! The shape suite's file format: one shape a line, `group name m n k layouts`.
//!
//! ```text
//! # comments start with '#'; blank lines are skipped
//! square  square-4096          4096  4096  4096  kn
//! llm     llama-70b.mlp-up.m16 16    28672 8192  kn,nk
//! ```
//!
//! `layouts` lists B's layouts, comma-separated: `kn` (B stored `[k, n]`) and `nk` (stored
//! `[n, k]`, C = A·Bᵀ). `sgemm-ladder shapes` embeds `cli/shapes/suite.txt` and reads other
//! files in this format with `--suite`.

use crate::{BLayout, GemmShape};

/// One shape of the suite.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteShape {
    /// The group it belongs to (`square`, `llm`, `ragged`).
    pub group: String,
    /// Its name, unique in the suite.
    pub name: String,
    /// m, n and k.
    pub shape: GemmShape,
    /// B's layouts to run it in, each once, in the file's order.
    pub layouts: Vec<BLayout>,
}

impl SuiteShape {
    /// Whether `pattern` occurs in the name or in the shape written `MxNxK` (`16x28672x8192`),
    /// ignoring case.
    pub fn matches(&self, pattern: &str) -> bool {
        let pattern = pattern.to_lowercase();
        let dims = format!("{}x{}x{}", self.shape.m, self.shape.n, self.shape.k);
        self.name.to_lowercase().contains(&pattern) || dims.contains(&pattern)
    }
}

/// A layout as the suite writes it: `kn` or `nk`.
pub fn parse_layout(text: &str) -> Option<BLayout> {
    match text {
        "kn" => Some(BLayout::Kn),
        "nk" => Some(BLayout::Nk),
        _ => None,
    }
}

/// Parses a suite; an error names the line (counted from 1) and what is wrong with it.
pub fn parse_suite(text: &str) -> Result<Vec<SuiteShape>, String> {
    let mut shapes: Vec<SuiteShape> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let content = line.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        let [group, name, m, n, k, layouts] = fields[..] else {
            return Err(format!(
                "line {number}: expected 6 fields (group, name, m, n, k, layouts), found {}: {content:?}",
                fields.len()
            ));
        };
        let dimension = |label: &str, value: &str| {
            value
                .parse::<usize>()
                .map_err(|_| format!("line {number}: {label} = {value:?} is not a whole number"))
        };
        let shape = GemmShape::new(dimension("m", m)?, dimension("n", n)?, dimension("k", k)?)
            .map_err(|e| format!("line {number}: {e}"))?;
        let mut parsed = Vec::new();
        for layout in layouts.split(',') {
            let layout = parse_layout(layout)
                .ok_or_else(|| format!("line {number}: layout {layout:?} is neither kn nor nk"))?;
            if parsed.contains(&layout) {
                return Err(format!(
                    "line {number}: layout {} is listed twice",
                    layout.label()
                ));
            }
            parsed.push(layout);
        }
        if let Some(earlier) = shapes.iter().position(|s| s.name == name) {
            return Err(format!(
                "line {number}: the name {name:?} is already taken (shape {} of the suite)",
                earlier + 1
            ));
        }
        shapes.push(SuiteShape {
            group: group.to_string(),
            name: name.to_string(),
            shape,
            layouts: parsed,
        });
    }
    if shapes.is_empty() {
        return Err("the suite lists no shapes".to_string());
    }
    Ok(shapes)
}

/// The groups of `shapes`, in the order they first appear.
pub fn groups(shapes: &[SuiteShape]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for shape in shapes {
        if !out.contains(&shape.group.as_str()) {
            out.push(&shape.group);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_comments_and_layouts() {
        let text =
            "# a comment\n\nsquare sq-64 64 64 64 kn  # trailing\nllm l.m1 1 4096 8192 kn,nk\n";
        let shapes = parse_suite(text).unwrap();
        assert_eq!(shapes.len(), 2);
        assert_eq!(shapes[0].group, "square");
        assert_eq!(shapes[0].shape, GemmShape::square(64).unwrap());
        assert_eq!(shapes[0].layouts, vec![BLayout::Kn]);
        assert_eq!(shapes[1].shape, GemmShape::new(1, 4096, 8192).unwrap());
        assert_eq!(shapes[1].layouts, vec![BLayout::Kn, BLayout::Nk]);
        assert_eq!(groups(&shapes), vec!["square", "llm"]);
        assert!(shapes[1].matches("L.M1") && shapes[1].matches("1x4096x8192"));
        assert!(!shapes[1].matches("square"));
    }

    #[test]
    fn errors_name_the_line() {
        for (text, expected) in [
            ("a b 1 2 3", "line 1: expected 6 fields"),
            ("\na b 1 two 3 kn", "line 2: n = \"two\""),
            ("a b 0 2 3 kn", "line 1:"),
            ("a b 1 2 3 kk", "line 1: layout \"kk\""),
            ("a b 1 2 3 kn,kn", "listed twice"),
            (
                "a b 1 2 3 kn\nc b 4 5 6 nk",
                "line 2: the name \"b\" is already taken",
            ),
            ("# nothing", "no shapes"),
        ] {
            let err = parse_suite(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }
}
