//! Builds the `kernels-gpu` crate to PTX with rustc's nvptx64 backend and hands the file to the
//! library through `OUT_DIR`. No CUDA toolkit is needed: the driver compiles the PTX at load.

use std::env;
use std::path::PathBuf;
use std::process::{Command, exit};

fn main() {
    let root =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let kernels = root.join("kernels-gpu");
    for watched in ["src", "Cargo.toml", ".cargo/config.toml"] {
        println!("cargo:rerun-if-changed={}", kernels.join(watched).display());
    }

    // A target directory of its own, so that the nested cargo never waits on the lock the
    // outer build holds, and is shared by build, test, clippy and doc.
    let target_dir = root.join("target").join("kernels-gpu");
    let mut cargo = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(&kernels)
        .args(["build", "--release", "--target-dir"])
        .arg(&target_dir);
    // The outer cargo describes the *host* build in these variables (target, flags, clippy as
    // a rustc wrapper...). The device build must see none of them: kernels-gpu/.cargo/config.toml
    // says everything it needs.
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        let host_only = (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || key.starts_with("RUSTC")
            || key.starts_with("RUSTDOC")
            || matches!(
                key.as_ref(),
                "RUSTFLAGS"
                    | "TARGET"
                    | "HOST"
                    | "OUT_DIR"
                    | "OPT_LEVEL"
                    | "PROFILE"
                    | "DEBUG"
                    | "NUM_JOBS"
            );
        if host_only {
            cargo.env_remove(key.as_ref());
        }
    }

    let output = cargo.output().unwrap_or_else(|err| {
        eprintln!("error: could not run cargo to build kernels-gpu: {err}");
        exit(1);
    });
    if !output.status.success() {
        // rustc's own diagnostics for the device code, as the user would see them building it.
        eprintln!("error: building kernels-gpu for nvptx64-nvidia-cuda failed:");
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        exit(1);
    }

    let ptx_path = target_dir.join("nvptx64-nvidia-cuda/release/kernels_gpu.ptx");
    let ptx = std::fs::read_to_string(&ptx_path).unwrap_or_else(|err| {
        eprintln!(
            "error: kernels-gpu built, but {} is missing: {err}",
            ptx_path.display()
        );
        exit(1);
    });
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let ptx = apply_launch_bounds(&ptx);
    // Also beside the target folder, so `ptxas -v` checks exactly what the driver will compile.
    for path in [out_dir.join("kernels.ptx"), target_dir.join("kernels.ptx")] {
        if let Err(err) = std::fs::write(&path, &ptx) {
            eprintln!("error: could not write {}: {err}", path.display());
            exit(1);
        }
    }
}

/// Turns each `launch_bounds!(entry, max_threads, min_blocks)` of the kernel crate (exported
/// as an 8-byte constant `launch_bounds__<entry>`) into the PTX directives `.maxntid` and
/// `.minnctapersm` on that entry, placed between its parameter list and its body: what CUDA's
/// `__launch_bounds__` produces.
fn apply_launch_bounds(ptx: &str) -> String {
    let mut bounds = std::collections::HashMap::new();
    for line in ptx.lines() {
        if let Some((entry, value)) = parse_bounds(line) {
            bounds.insert(entry.to_string(), value);
        }
    }
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut header_of: Option<&str> = None;
    for line in ptx.lines() {
        out.push_str(line);
        out.push('\n');
        if let Some(rest) = line.split(".entry ").nth(1) {
            header_of = rest.split('(').next();
        } else if line.starts_with(')') {
            if let Some((threads, blocks)) = header_of.and_then(|entry| bounds.get(entry)) {
                out.push_str(&format!(
                    ".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"
                ));
            }
            header_of = None;
        }
    }
    out
}

/// Reads `.visible .global .align 4 .b8 launch_bounds__NAME[8] = {b0, b1, ...};` (LLVM drops
/// trailing zero bytes) as NAME and two little-endian u32s.
fn parse_bounds(line: &str) -> Option<(&str, (u32, u32))> {
    let rest = line.split("launch_bounds__").nth(1)?;
    let entry = rest.split('[').next()?;
    let body = rest.split('{').nth(1)?.split('}').next()?;
    let mut bytes = [0u8; 8];
    for (slot, text) in bytes.iter_mut().zip(body.split(',')) {
        *slot = text.trim().parse().ok()?;
    }
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    Some((entry, (word(0), word(4))))
}
