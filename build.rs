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

    let ptx = target_dir.join("nvptx64-nvidia-cuda/release/kernels_gpu.ptx");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("kernels.ptx");
    if let Err(err) = std::fs::copy(&ptx, &out) {
        eprintln!(
            "error: kernels-gpu built, but {} is missing: {err}",
            ptx.display()
        );
        exit(1);
    }
}
