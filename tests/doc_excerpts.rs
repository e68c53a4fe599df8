//! The code shown in the docs is the code in the repository: every ```rust block of the
//! walk-throughs must be marked as an excerpt of a source file, and its lines must appear in
//! that file, in order, so that the text cannot drift from the kernels.
//!
//! The convention, in `docs/ladder.md` and `docs/dequant.md`: the line right before the block is
//!
//! ```text
//! <!-- excerpt: kernels-gpu/src/sgemm/v13_async_copies.rs -->
//! ```
//!
//! (a path from the repository root). Lines are compared with their leading and trailing
//! whitespace removed, blank lines are ignored, and a line that is exactly `// …` marks an
//! elision: the lines between two elisions must be consecutive lines of the file (blank lines
//! aside), and each such run must come after the one before it.

use std::path::Path;

/// The documents whose Rust blocks are checked.
const DOCUMENTS: [&str; 2] = ["docs/ladder.md", "docs/dequant.md"];

/// What a document line before a ```rust block must say for the block to be an excerpt.
const MARKER_PREFIX: &str = "<!-- excerpt:";
const ELISION: &str = "// …";

/// One ```rust block: its first line in the document (1-based), the file it claims to come
/// from, and its lines.
struct Excerpt {
    line: usize,
    source: Option<String>,
    lines: Vec<String>,
}

fn excerpts(document: &str) -> Vec<Excerpt> {
    let lines: Vec<&str> = document.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let fence = lines[i].trim();
        if fence.starts_with("```") {
            let is_rust = fence == "```rust";
            let source = i
                .checked_sub(1)
                .map(|before| lines[before].trim())
                .and_then(|before| before.strip_prefix(MARKER_PREFIX))
                .and_then(|rest| rest.strip_suffix("-->"))
                .map(|path| path.trim().to_string());
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && lines[end].trim() != "```" {
                end += 1;
            }
            if is_rust {
                found.push(Excerpt {
                    line: start,
                    source,
                    lines: lines[start..end].iter().map(|l| l.to_string()).collect(),
                });
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    found
}

/// Checks that `excerpt`'s runs (split at elisions) appear in `source` as consecutive lines,
/// each run after the previous one. Returns the first line that could not be placed.
fn check(excerpt: &[String], source: &str) -> Result<(), String> {
    let source: Vec<&str> = source
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut runs: Vec<Vec<&str>> = vec![Vec::new()];
    for line in excerpt.iter().map(|l| l.trim()) {
        if line == ELISION {
            runs.push(Vec::new());
        } else if !line.is_empty() {
            runs.last_mut().expect("one run at least").push(line);
        }
    }
    let mut from = 0;
    for run in runs.iter().filter(|r| !r.is_empty()) {
        let place = (from..=source.len().saturating_sub(run.len()))
            .find(|&at| source[at..at + run.len()] == run[..]);
        match place {
            Some(at) => from = at + run.len(),
            None => {
                // Name the first line of the run that breaks the match, for the message.
                let longest = (from..source.len())
                    .map(|at| {
                        run.iter()
                            .zip(&source[at..])
                            .take_while(|(a, b)| a == b)
                            .count()
                    })
                    .max()
                    .unwrap_or(0);
                return Err(format!(
                    "`{}` is not in the file where the excerpt needs it (after the previous lines)",
                    run[longest.min(run.len() - 1)]
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_rust_block_in_the_docs_is_an_excerpt_of_its_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut failures = Vec::new();
    let mut checked = 0;
    for document in DOCUMENTS {
        let text = std::fs::read_to_string(root.join(document))
            .unwrap_or_else(|e| panic!("read {document}: {e}"));
        for excerpt in excerpts(&text) {
            let at = format!("{document}:{}", excerpt.line);
            let Some(path) = &excerpt.source else {
                failures.push(format!(
                    "{at}: a ```rust block without `{MARKER_PREFIX} path -->` on the line before it \
                     (mark it, or use another fence language for code that is not an excerpt)"
                ));
                continue;
            };
            let source = match std::fs::read_to_string(root.join(path)) {
                Ok(source) => source,
                Err(e) => {
                    failures.push(format!(
                        "{at}: excerpt of {path}, which cannot be read: {e}"
                    ));
                    continue;
                }
            };
            if excerpt.lines.iter().all(|l| l.trim().is_empty()) {
                failures.push(format!("{at}: empty excerpt of {path}"));
                continue;
            }
            if let Err(why) = check(&excerpt.lines, &source) {
                failures.push(format!("{at}: excerpt of {path}: {why}"));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "docs drifted from the code:\n{}",
        failures.join("\n")
    );
    assert!(checked > 0, "no excerpts found in {DOCUMENTS:?}");
}

#[test]
fn the_excerpt_check_rejects_what_it_should() {
    let source = "fn f() {\n    let a = 1;\n\n    let b = 2;\n    let c = 3;\n}\n";
    let lines = |text: &str| text.lines().map(str::to_string).collect::<Vec<_>>();
    // Consecutive lines, blank lines and indentation aside.
    assert!(check(&lines("let a = 1;\nlet b = 2;"), source).is_ok());
    // An elision lets lines be skipped, in order.
    assert!(check(&lines("fn f() {\n// …\nlet c = 3;"), source).is_ok());
    // Skipping without saying so, going backwards, and invented lines all fail.
    assert!(check(&lines("let a = 1;\nlet c = 3;"), source).is_err());
    assert!(check(&lines("let c = 3;\n// …\nlet a = 1;"), source).is_err());
    assert!(check(&lines("let d = 4;"), source).is_err());
    // Markers are read from the line before the fence only.
    let doc = "<!-- excerpt: a.rs -->\n```rust\nx\n```\n\n```rust\ny\n```\n```sh\nz\n```\n";
    let found = excerpts(doc);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].source.as_deref(), Some("a.rs"));
    assert_eq!(found[0].lines, vec!["x".to_string()]);
    assert_eq!(found[1].source, None);
}
