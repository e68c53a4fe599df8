//! The `sgemm-ladder` binary as a user runs it: listing, help, refusals of bad arguments, and a
//! clear message (not a panic) on a machine without a GPU.

use rust_gemm::RUNGS;
use std::process::{Command, Output};

fn ladder(args: &[&str]) -> Output {
    let dir = std::env::temp_dir().join(format!("sgemm-ladder-cli-test-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_sgemm-ladder"))
        .args(args)
        // Any report goes to a scratch folder, never into the work tree.
        .arg("--report-dir")
        .arg(&dir)
        .env_remove("NVIDIA_TF32_OVERRIDE")
        .output()
        .expect("run sgemm-ladder")
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_no_panic(stdout: &str, stderr: &str) {
    for needle in ["panicked", "stack backtrace", "RUST_BACKTRACE"] {
        assert!(
            !stdout.contains(needle) && !stderr.contains(needle),
            "output mentions {needle:?}:\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}

#[test]
fn list_shows_every_rung() {
    let output = ladder(&["--list"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "--list failed: {stderr}");
    // One unindented line per rung, in order (candidates of autotuned rungs may follow, indented).
    let rung_lines: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with(char::is_whitespace))
        .collect();
    assert_eq!(rung_lines.len(), RUNGS.len(), "{stdout}");
    for (line, rung) in rung_lines.iter().zip(RUNGS) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.first(), Some(&rung.name), "{line}");
        assert_eq!(words.last(), Some(&rung.entry), "{line}");
        assert!(line.contains(rung.idea), "{line}");
        for candidate in rung.candidates {
            assert!(
                stdout.lines().any(|l| {
                    let words: Vec<&str> = l.split_whitespace().collect();
                    words.contains(&candidate.name) && words.last() == Some(&candidate.entry)
                }),
                "candidate {} of {} is not listed:\n{stdout}",
                candidate.name,
                rung.name
            );
        }
    }
}

#[test]
fn help_describes_the_main_options() {
    let output = ladder(&["--help"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "--help failed: {stderr}");
    for option in [
        "--sizes", "--shapes", "--rungs", "--reps", "--list", "--seed",
    ] {
        assert!(
            stdout.contains(option),
            "--help does not mention {option}:\n{stdout}"
        );
    }
}

#[test]
fn zero_dimension_is_refused_before_any_gpu_work() {
    let output = ladder(&["--shapes", "0x5x5"]);
    let (stdout, stderr) = text(&output);
    assert!(!output.status.success(), "0x5x5 was accepted:\n{stdout}");
    assert!(
        stderr.contains("0×5×5") || stderr.contains("0x5x5"),
        "the message should name the shape:\n{stderr}"
    );
    assert!(stderr.contains("at least 1"), "{stderr}");
    assert!(
        !stderr.contains("no CUDA GPU"),
        "shapes are checked first:\n{stderr}"
    );
    assert_no_panic(&stdout, &stderr);
}

#[test]
fn malformed_shape_and_size_are_refused() {
    for args in [
        &["--shapes", "12x"][..],
        &["--shapes", "axbxc"],
        &["--sizes", "0", "--shapes", ""],
        &["--sizes", "-4"],
        &["--reps", "0"],
    ] {
        let output = ladder(args);
        let (stdout, stderr) = text(&output);
        assert!(!output.status.success(), "{args:?} was accepted:\n{stdout}");
        assert!(!stderr.trim().is_empty(), "{args:?}: no message");
        assert!(!stderr.contains("no CUDA GPU"), "{args:?}:\n{stderr}");
        assert_no_panic(&stdout, &stderr);
    }
}

#[test]
fn unknown_rung_is_named() {
    let output = ladder(&["--rungs", "nope", "--sizes", "64", "--shapes", ""]);
    let (stdout, stderr) = text(&output);
    assert!(
        !output.status.success(),
        "--rungs nope was accepted:\n{stdout}"
    );
    assert!(stderr.contains("nope"), "{stderr}");
    for rung in RUNGS {
        assert!(
            stderr.contains(rung.name),
            "known rungs not listed:\n{stderr}"
        );
    }
    assert_no_panic(&stdout, &stderr);
}

#[test]
fn no_gpu_gives_one_clear_line() {
    let output = ladder(&[
        "--sizes", "64", "--shapes", "", "--reps", "2", "--warmup", "1",
    ]);
    let (stdout, stderr) = text(&output);
    let all = format!("{stdout}{stderr}");
    if !all.contains("no CUDA GPU") {
        // A GPU is present: the run must simply succeed.
        assert_eq!(
            output.status.code(),
            Some(0),
            "run on a GPU failed:\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        eprintln!("no_gpu_gives_one_clear_line: a GPU is present, the no-GPU check is skipped");
        return;
    }
    assert_eq!(
        output.status.code(),
        Some(2),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line:\n{stderr}");
    assert!(
        lines[0].starts_with("sgemm-ladder: error: no CUDA GPU"),
        "{stderr}"
    );
    assert!(stdout.trim().is_empty(), "nothing on stdout:\n{stdout}");
    assert_no_panic(&stdout, &stderr);
}

#[test]
fn dequant_refuses_bad_formats_and_groups_before_any_gpu_work() {
    for (args, expected) in [
        (&["dequant", "--format", "u9"][..], "u9"),
        (&["dequant", "--format", "e9m2"][..], "e9m2"),
        (&["dequant", "--group", "twelve"][..], "--group twelve"),
        (&["dequant", "--m", "0"][..], "at least 1"),
        (&["dequant", "--group", "100"][..], "group size 100"),
        (
            &["dequant", "--group", "48", "--k", "4800"][..],
            "group size 48",
        ),
    ] {
        let output = ladder(args);
        let (stdout, stderr) = text(&output);
        assert_no_panic(&stdout, &stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn dequant_help_names_the_sweep_and_the_shape_options() {
    let output = ladder(&["dequant", "--help"]);
    let (stdout, _) = text(&output);
    for option in [
        "--format",
        "--group",
        "--zero-points",
        "--m",
        "--k",
        "--n",
        "--sweep",
        "--blocks",
        "--path",
    ] {
        assert!(stdout.contains(option), "{option} missing from:\n{stdout}");
    }
}
