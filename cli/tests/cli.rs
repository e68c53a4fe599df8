//! The `sgemm-ladder` binary as a user runs it: listing, help, refusals of bad arguments (each
//! subcommand takes only the options it uses, each bad value names its flag), the report folder
//! checked before any GPU work, a closed standard output, and a clear message (not a panic) on a
//! machine without a GPU.

use rust_gemm::GemmShape;
use rust_gemm::RUNGS;
use rust_gemm::harness::report::Record;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_sgemm-ladder");

/// A scratch folder of one test, removed when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "sgemm-ladder-cli-test-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("NVIDIA_TF32_OVERRIDE");
    command
}

/// Runs `sgemm-ladder args` as given (for commands that write no report).
fn ladder(args: &[&str]) -> Output {
    command(args).output().expect("run sgemm-ladder")
}

/// Runs `sgemm-ladder args --report-dir <scratch>`: any report goes to a scratch folder, never
/// into the work tree.
fn ladder_reporting(args: &[&str], scratch: &Scratch) -> Output {
    command(args)
        .arg("--report-dir")
        .arg(&scratch.0)
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

/// A usage error: status 2, a message naming `expected`, nothing on stdout, no GPU touched.
fn assert_refused(args: &[&str], output: &Output, expected: &str) {
    let (stdout, stderr) = text(output);
    assert_no_panic(&stdout, &stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?} was not refused:\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stderr.contains(expected),
        "{args:?}: the message does not name {expected:?}:\n{stderr}"
    );
    assert!(
        !stderr.contains("no CUDA GPU"),
        "{args:?}: refused only after looking for a GPU:\n{stderr}"
    );
    assert!(stdout.trim().is_empty(), "{args:?}: stdout:\n{stdout}");
}

#[test]
fn list_shows_every_rung() {
    let output = ladder(&["--list"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "--list failed: {stderr}");
    // A header, then one unindented line per rung, in order (candidates of autotuned rungs
    // may follow, indented), each naming the architecture the rung needs.
    assert!(stdout.starts_with("rung needs"), "{stdout}");
    let rung_lines: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with(char::is_whitespace))
        .collect();
    assert_eq!(rung_lines.len(), RUNGS.len(), "{stdout}");
    for (line, rung) in rung_lines.iter().zip(RUNGS) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.first(), Some(&rung.name), "{line}");
        assert_eq!(words.get(1), Some(&rung.arch.label()), "{line}");
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
    let scratch = Scratch::new("zero-dimension");
    let output = ladder_reporting(&["--shapes", "0x5x5"], &scratch);
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
        let scratch = Scratch::new("malformed");
        let output = ladder_reporting(args, &scratch);
        let (stdout, stderr) = text(&output);
        assert!(!output.status.success(), "{args:?} was accepted:\n{stdout}");
        assert!(!stderr.trim().is_empty(), "{args:?}: no message");
        assert!(!stderr.contains("no CUDA GPU"), "{args:?}:\n{stderr}");
        assert_no_panic(&stdout, &stderr);
    }
}

#[test]
fn unknown_rung_is_named() {
    let scratch = Scratch::new("unknown-rung");
    let output = ladder_reporting(
        &["--rungs", "nope", "--sizes", "64", "--shapes", ""],
        &scratch,
    );
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

/// Every GPU subcommand, on a machine without a GPU, says so in one line and exits with 2; on
/// a machine with one, the same small runs succeed.
#[test]
fn no_gpu_gives_one_clear_line() {
    for args in [
        &[
            "--sizes", "64", "--shapes", "", "--reps", "2", "--warmup", "1",
        ][..],
        &["verify", "--count", "1", "--max-dim", "16", "--seed", "1"],
        &[
            "dequant", "--m", "1", "--k", "256", "--n", "256", "--reps", "2", "--warmup", "1",
        ],
        &[
            "dequant-layers",
            "--m",
            "1",
            "--layers",
            "256x512,512x256",
            "--reps",
            "2",
            "--warmup",
            "1",
        ],
        &[
            "shapes",
            "--group",
            "ragged",
            "--filter",
            "3x5x7",
            "--precision",
            "f16",
            "--reps",
            "2",
            "--warmup",
            "1",
        ],
    ] {
        let scratch = Scratch::new("no-gpu");
        let output = if args[0] == "verify" {
            ladder(args)
        } else {
            ladder_reporting(args, &scratch)
        };
        let (stdout, stderr) = text(&output);
        assert_no_panic(&stdout, &stderr);
        let all = format!("{stdout}{stderr}");
        if !all.contains("no CUDA GPU") {
            // A GPU is present: the run must simply succeed.
            assert_eq!(
                output.status.code(),
                Some(0),
                "{args:?} on a GPU failed:\nstdout:\n{stdout}\nstderr:\n{stderr}"
            );
            eprintln!("no_gpu_gives_one_clear_line: a GPU is present, {args:?} ran on it");
            continue;
        }
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}:\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: expected one line:\n{stderr}");
        assert!(
            lines[0].starts_with("sgemm-ladder: error: no CUDA GPU"),
            "{args:?}: {stderr}"
        );
        assert!(
            stdout.trim().is_empty(),
            "{args:?}: nothing on stdout:\n{stdout}"
        );
    }
}

#[test]
fn dequant_refuses_bad_formats_and_groups_before_any_gpu_work() {
    for (args, expected) in [
        (&["dequant", "--format", "u9"][..], "u9"),
        (&["dequant", "--format", "e9m2"][..], "e9m2"),
        (&["dequant", "--group", "twelve"][..], "--group twelve"),
        (&["dequant", "--m", "0"][..], "at least 1"),
        (&["dequant", "--format", "u4,u9"][..], "--format u9"),
        (&["dequant", "--group", "100"][..], "group size 100"),
        (
            &["dequant", "--group", "48", "--k", "4800"][..],
            "group size 48",
        ),
        (&["dequant", "--activation", "f32"][..], "f32"),
    ] {
        let scratch = Scratch::new("dequant-refusals");
        assert_refused(args, &ladder_reporting(args, &scratch), expected);
    }
}

#[test]
fn dequant_layers_refuses_bad_sequences_before_any_gpu_work() {
    for (args, expected) in [
        (
            &["dequant-layers", "--layers", "4096x14336,4096x4096"][..],
            "is the next one's input",
        ),
        (
            &["dequant-layers", "--layers", "4096"][..],
            "each layer is KxN",
        ),
        (&["dequant-layers", "--layers", "0x128"][..], "at least 1"),
        (&["dequant-layers", "--m", "0"][..], "at least 1"),
        (&["dequant-layers", "--format", "u9"][..], "u9"),
        (&["dequant-layers", "--group", "100"][..], "group size 100"),
        (&["dequant-layers", "--activation", "f32"][..], "f32"),
    ] {
        let scratch = Scratch::new("dequant-layers-refusals");
        assert_refused(args, &ladder_reporting(args, &scratch), expected);
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
        "--activation",
    ] {
        assert!(stdout.contains(option), "{option} missing from:\n{stdout}");
    }
}

/// Options of one subcommand given to another, options that exist nowhere, and the ladder
/// run's options before a subcommand are all usage errors that name the option.
#[test]
fn each_subcommand_refuses_options_it_does_not_use() {
    let report = ["report", "--from", "results.json", "--command", "x"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // `report` reads files: nothing to time, seed or select.
        ([&report[..], &["--rungs", "v99"]].concat(), "--rungs"),
        ([&report[..], &["--reps", "3"]].concat(), "--reps"),
        ([&report[..], &["--warmup", "1"]].concat(), "--warmup"),
        ([&report[..], &["--seed", "1"]].concat(), "--seed"),
        ([&report[..], &["--sizes", "64"]].concat(), "--sizes"),
        ([&report[..], &["--nope"]].concat(), "--nope"),
        // `verify` checks results and writes no report: nothing to time or write.
        (vec!["verify", "--reps", "3"], "--reps"),
        (vec!["verify", "--warmup", "1"], "--warmup"),
        (vec!["verify", "--report-dir", "x"], "--report-dir"),
        (vec!["verify", "--sizes", "64"], "--sizes"),
        (vec!["verify", "--reference", "cpu"], "--reference"),
        (vec!["verify", "--autotune"], "--autotune"),
        (vec!["verify", "--nope"], "--nope"),
        // `dequant` runs no rungs.
        (vec!["dequant", "--rungs", "v1"], "--rungs"),
        (vec!["dequant", "--sizes", "64"], "--sizes"),
        (vec!["dequant", "--count", "3"], "--count"),
        (vec!["dequant", "--nope"], "--nope"),
        // `shapes` runs the library's dispatch: no rungs, no dequant, no random shapes.
        (vec!["shapes", "--rungs", "v1"], "--rungs"),
        (vec!["shapes", "--sizes", "64"], "--sizes"),
        (vec!["shapes", "--count", "3"], "--count"),
        (vec!["shapes", "--format", "u4"], "--format"),
        (vec!["shapes", "--nope"], "--nope"),
        // `dequant-layers` times one sequence: no rungs, no single-layer shape, no sweep.
        (vec!["dequant-layers", "--rungs", "v1"], "--rungs"),
        (vec!["dequant-layers", "--k", "256"], "--k"),
        (vec!["dequant-layers", "--sweep"], "--sweep"),
        (vec!["dequant-layers", "--nope"], "--nope"),
        // The ladder run's options belong to it, not to the subcommands after them.
        (vec!["--reps", "3", "verify"], "--reps"),
        (vec!["--seed", "1", "dequant"], "--seed"),
        (vec!["--rungs", "v1", "report"], "--rungs"),
        (vec!["--list", "verify"], "--list"),
        // ... and the subcommands' options are not the run's.
        (vec!["--count", "3"], "--count"),
        (vec!["--format", "u4"], "--format"),
        (vec!["--from", "results.json"], "--from"),
        (vec!["--precision", "f16"], "--precision"),
        (vec!["--max-flops", "1e9"], "--max-flops"),
        (vec!["--nope"], "--nope"),
    ];
    for (args, option) in cases {
        assert_refused(&args, &ladder(&args), option);
    }
}

/// The example: `report --rungs v99` used to exit 0, writing a report.
#[test]
fn report_with_rungs_is_refused_and_writes_nothing() {
    let scratch = Scratch::new("report-rungs");
    std::fs::create_dir_all(&scratch.0).unwrap();
    let input = scratch.0.join("in.json");
    std::fs::write(&input, "[]").unwrap();
    let out = scratch.0.join("out");
    let args = [
        "report",
        "--from",
        input.to_str().unwrap(),
        "--command",
        "x",
        "--rungs",
        "v99",
        "--report-dir",
        out.to_str().unwrap(),
    ];
    assert_refused(&args, &ladder(&args), "--rungs");
    assert!(!out.exists(), "a refused command wrote {}", out.display());
}

#[test]
fn verify_help_describes_checking_not_timing() {
    let output = ladder(&["verify", "--help"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "verify --help failed: {stderr}");
    for option in ["--count", "--max-dim", "--rungs", "--seed"] {
        assert!(stdout.contains(option), "{option} missing from:\n{stdout}");
    }
    let lower = stdout.to_lowercase();
    for word in [
        "--reps",
        "--warmup",
        "--report-dir",
        "timing",
        "timed",
        "warm-up",
        "median",
    ] {
        assert!(
            !lower.contains(word),
            "verify --help mentions {word:?}:\n{stdout}"
        );
    }
}

#[test]
fn report_help_names_only_its_options() {
    let output = ladder(&["report", "--help"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "report --help failed: {stderr}");
    for option in ["--from", "--command", "--report-dir"] {
        assert!(stdout.contains(option), "{option} missing from:\n{stdout}");
    }
    for option in ["--rungs", "--reps", "--warmup", "--seed", "--sizes"] {
        assert!(
            !stdout.contains(option),
            "report --help mentions {option}:\n{stdout}"
        );
    }
}

/// Zero points exist for unsigned formats only; they used to be dropped silently.
#[test]
fn dequant_zero_points_with_a_signed_or_float_format_are_refused() {
    for format in ["i4", "e2m1", "e4m3", "f16", "u4,i8"] {
        let scratch = Scratch::new("zero-points");
        let args = ["dequant", "--zero-points", "--format", format];
        let output = ladder_reporting(&args, &scratch);
        assert_refused(&args, &output, "--zero-points");
        let (_, stderr) = text(&output);
        let named = format.rsplit(',').next().unwrap();
        assert!(
            stderr.contains(named),
            "{args:?}: the format is not named:\n{stderr}"
        );
        assert!(
            stderr.contains("unsigned"),
            "{args:?}: says not what takes zero points:\n{stderr}"
        );
    }
}

/// `--group 0`, `--m 0`, ... name the flag the zero came from.
#[test]
fn dequant_zero_values_name_their_flag() {
    for (args, expected) in [
        (&["dequant", "--group", "0"][..], "--group 0"),
        (&["dequant", "--m", "0"], "--m 0"),
        (&["dequant", "--m", "1,0,4"], "--m 0"),
        (&["dequant", "--k", "0"], "--k 0"),
        (&["dequant", "--n", "0"], "--n 0"),
        (&["dequant", "--blocks", "0"], "--blocks 0"),
        (&["dequant", "--group", "100"], "--group 100"),
    ] {
        let scratch = Scratch::new("zero-values");
        assert_refused(args, &ladder_reporting(args, &scratch), expected);
    }
}

#[test]
fn dequant_sweep_refuses_the_options_it_replaces() {
    for option in [
        &["--format", "u4"][..],
        &["--group", "64"],
        &["--zero-points"],
        &["--m", "1"],
        &["--k", "4096"],
        &["--n", "4096"],
    ] {
        let args = [&["dequant", "--sweep"][..], option].concat();
        let scratch = Scratch::new("sweep");
        assert_refused(&args, &ladder_reporting(&args, &scratch), option[0]);
    }
}

/// A report folder that cannot be created is named, before any GPU work (so before the no-GPU
/// message on this machine, and before a long run on a GPU machine).
#[test]
fn unwritable_report_dir_is_named_before_any_gpu_work() {
    let scratch = Scratch::new("unwritable");
    std::fs::create_dir_all(&scratch.0).unwrap();
    // A folder below a plain file cannot be created, whoever runs the test (root included).
    let file = scratch.0.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let input = scratch.0.join("in.json");
    std::fs::write(&input, "[]").unwrap();
    let blocked = file.join("report");
    let blocked_text = blocked.to_str().unwrap();
    for args in [
        &["--sizes", "64", "--shapes", "", "--reps", "1"][..],
        &["dequant", "--m", "1", "--k", "256", "--n", "256"],
        &[
            "report",
            "--from",
            input.to_str().unwrap(),
            "--command",
            "x",
        ],
        &["shapes", "--group", "ragged", "--precision", "f16"],
        &["dequant-layers", "--m", "1", "--layers", "256x256"],
    ] {
        let args = [args, &["--report-dir", blocked_text]].concat();
        let output = ladder(&args);
        assert_refused(&args, &output, blocked_text);
        let (_, stderr) = text(&output);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: expected one line:\n{stderr}");
        assert!(
            lines[0].starts_with("sgemm-ladder: error: report folder"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn shapes_help_lists_its_options() {
    let output = ladder(&["shapes", "--help"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "shapes --help failed: {stderr}");
    for option in [
        "--group",
        "--precision",
        "--layout",
        "--filter",
        "--max-flops",
        "--max-ms",
        "--suite",
        "--list",
        "--reps",
        "--warmup",
        "--seed",
        "--report-dir",
        "--out",
    ] {
        assert!(stdout.contains(option), "{option} missing from:\n{stdout}");
    }
    for value in ["f32", "tf32", "f16", "bf16", "square", "llm", "ragged"] {
        assert!(stdout.contains(value), "{value} missing from:\n{stdout}");
    }
    for option in ["--rungs", "--sizes", "--format"] {
        assert!(
            !stdout.contains(option),
            "shapes --help mentions {option}:\n{stdout}"
        );
    }
}

/// `shapes --list` needs no GPU: the suite's shapes per group and the cases they make.
#[test]
fn shapes_list_counts_the_suite_per_group() {
    for (args, shapes, cases) in [
        (&["shapes", "--list"][..], 107, 720),
        (&["shapes", "--list", "--group", "square"], 34, 136),
        (&["shapes", "--list", "--group", "llm"], 63, 504),
        (&["shapes", "--list", "--group", "ragged"], 10, 80),
        (
            &[
                "shapes",
                "--list",
                "--group",
                "llm",
                "--precision",
                "bf16",
                "--layout",
                "nk",
            ],
            63,
            63,
        ),
        (&["shapes", "--list", "--filter", "70b.mlp-gate-up"], 7, 56),
        (
            &[
                "shapes",
                "--list",
                "--group",
                "square",
                "--max-flops",
                "1e9",
            ],
            5,
            20,
        ),
    ] {
        let output = ladder(args);
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        let last = stdout.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("{shapes} shapes, {cases} cases")),
            "{args:?}: {last}"
        );
        assert_eq!(stdout.lines().count(), shapes + 1, "{args:?}:\n{stdout}");
    }
}

/// Bad values name their flag, before any GPU work (so before the no-GPU message here).
#[test]
fn shapes_refuses_bad_options_naming_the_flag() {
    let scratch = Scratch::new("shapes-suite");
    std::fs::create_dir_all(&scratch.0).unwrap();
    let bad_suite = scratch.0.join("suite.txt");
    std::fs::write(&bad_suite, "square s 1 2\n").unwrap();
    let bad_suite = bad_suite.to_str().unwrap().to_string();
    for (args, expected) in [
        (&["shapes", "--precision", "fp8"][..], "--precision"),
        (&["shapes", "--precision", "f16,f64"], "--precision"),
        (&["shapes", "--layout", "mk"], "--layout"),
        (
            &["shapes", "--filter", "no-such-shape"],
            "--filter no-such-shape",
        ),
        (&["shapes", "--group", "cubes"], "--group cubes"),
        (
            &["shapes", "--group", "ragged", "--filter", "llama"],
            "--filter llama",
        ),
        (&["shapes", "--max-flops", "1"], "--max-flops 1"),
        (&["shapes", "--max-flops", "0"], "--max-flops 0"),
        (&["shapes", "--max-ms", "0"], "--max-ms 0"),
        (&["shapes", "--reps", "0"], "--reps"),
        (
            &["shapes", "--group", "square", "--layout", "nk"],
            "--layout nk",
        ),
        (
            &["shapes", "--suite", "/no/such/suite.txt"],
            "--suite /no/such/suite.txt",
        ),
        (
            &["shapes", "--suite", bad_suite.as_str()],
            "line 1: expected 6 fields",
        ),
    ] {
        let scratch = Scratch::new("shapes-refusals");
        assert_refused(args, &ladder_reporting(args, &scratch), expected);
    }
}

fn record(rung: &str, size: usize) -> Record {
    let shape = GemmShape::square(size).unwrap();
    let mut r = Record::new(rung, "an idea", &shape, "a test device", 7, 3);
    r.passed = true;
    r.set_time(1.0, &shape);
    r
}

/// `report` needs no GPU: it merges files (the first record of a rung and shape wins) and
/// replaces the folder's files, leaving no staging folder behind.
#[test]
fn report_merges_files_and_replaces_the_folder_files() {
    let scratch = Scratch::new("report");
    let out = scratch.0.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("results.json"), "stale").unwrap();
    let first = vec![record("v0", 256), record("v1", 256)];
    let second = vec![record("v0", 256), record("v0", 512)];
    let write = |name: &str, records: &[Record]| -> PathBuf {
        let path = scratch.0.join(name);
        std::fs::write(&path, serde_json::to_string(records).unwrap()).unwrap();
        path
    };
    let (a, b) = (write("a.json", &first), write("b.json", &second));
    let args = [
        "report",
        "--from",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--command",
        "a test",
        "--report-dir",
        out.to_str().unwrap(),
    ];
    let output = ladder(&args);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("1 repeated records"), "{stdout}");
    let written: Vec<Record> =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let keys: Vec<(String, usize)> = written.iter().map(|r| (r.rung.clone(), r.m)).collect();
    assert_eq!(
        keys,
        [("v0".into(), 256), ("v1".into(), 256), ("v0".into(), 512)]
    );
    let markdown = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(markdown.contains("`a test`"), "{markdown}");
    assert_no_leftovers(&out);
}

fn assert_no_leftovers(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            !name.to_string_lossy().starts_with('.'),
            "{name:?} left in {}",
            dir.display()
        );
    }
}

/// What a user tries: `sgemm-ladder --list | head -2` prints the header and the first rung, and
/// no panic.
#[cfg(unix)]
#[test]
fn list_into_head_ends_quietly() {
    let output = Command::new("sh")
        .arg("-c")
        .arg("\"$0\" --list | head -2")
        .arg(BIN)
        .output()
        .expect("run sh");
    let (stdout, stderr) = text(&output);
    assert_no_panic(&stdout, &stderr);
    assert!(stderr.trim().is_empty(), "{stderr}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(
        stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with(RUNGS[0].name)),
        "{stdout}"
    );
}

/// A standard output whose reader is already gone (so the first write fails, every time) ends
/// the program quietly with 141, the status a shell reports for SIGPIPE.
#[test]
fn closed_stdout_ends_quietly() {
    let scratch = Scratch::new("closed-stdout");
    std::fs::create_dir_all(&scratch.0).unwrap();
    let input = scratch.0.join("in.json");
    std::fs::write(&input, serde_json::to_string(&[record("v0", 256)]).unwrap()).unwrap();
    let out = scratch.0.join("out");
    for args in [
        &["--list"][..],
        &[
            "report",
            "--from",
            input.to_str().unwrap(),
            "--command",
            "x",
            "--report-dir",
            out.to_str().unwrap(),
        ],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let output = command(args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("run sgemm-ladder");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_no_panic("", &stderr);
        assert!(stderr.trim().is_empty(), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(141), "{args:?}: {stderr}");
    }
}
