//! Builds the `kernels-gpu` crate to PTX with rustc's nvptx64 backend, once per architecture,
//! and hands the texts to the library through `OUT_DIR`. No CUDA toolkit is needed: the driver
//! compiles the PTX when the host loads it.
//!
//! The kernel crate needs the nightly pinned in `rust-toolchain.toml` (build-std for nvptx64,
//! the bitcode linker), whatever toolchain builds the crate that depends on this one: a user
//! crate on stable Rust included. So this script runs that nightly explicitly through rustup
//! (`rustup run <channel> cargo build ...`), installing it with the components it needs when
//! missing, and strips the outer cargo's description of the host build from the environment.
//! It writes nothing into the source folder, which may be read-only (a git or registry
//! checkout). The nested cargo's target directories lie in the outer build's target directory,
//! in `rust-gemm-kernels/` (see [`kernels_target_root`]): shared by every profile and command
//! (`check`, `clippy`, `test`, `doc`, `--release`), which each run this script with an `OUT_DIR`
//! of their own, so that the kernels, minutes of fat-LTO codegen per architecture, are built
//! once and the nested cargo finds them fresh afterwards.
//!
//! Outputs, in `OUT_DIR`:
//! - `kernels_<arch>.ptx`: the PTX of each [`BUILDS`] entry, launch bounds applied (what the
//!   library embeds, see `src/ptx.rs`, and what `scripts/ptxas-check.sh` assembles);
//! - `entries_<arch>.rs`: the sorted list of the `.entry` names that PTX defines, as a Rust
//!   array expression for `include!`.

use std::collections::HashMap;
use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, exit};

/// One PTX build of the kernel crate.
struct Build {
    /// Names the output files (`kernels_<arch>.ptx`, `entries_<arch>.rs`) and the nested target
    /// directory.
    arch: &'static str,
    /// The rustc flags that select the architecture and the PTX ISA version.
    rustflags: &'static [&'static str],
}

/// The PTX builds. `.cargo/config.toml` of the kernel crate gives developers sm_90a by default;
/// these flags replace it (`CARGO_ENCODED_RUSTFLAGS` outranks every `rustflags` in config).
const BUILDS: [Build; 2] = [
    // Portable: the driver JIT-compiles sm_80 PTX for every GPU of compute capability 8.0 or
    // newer. PTX ISA 7.5 (CUDA 11.5 drivers and newer) is the lowest that assembles: v13's
    // `cp.async` with an ignore-src predicate needs it (LLVM's default for sm_80 is 7.0).
    // Code gated on `target_feature = "sm_90a"` is left out.
    Build {
        arch: "sm80",
        rustflags: &["-C", "target-cpu=sm_80", "-C", "target-feature=+ptx75"],
    },
    // Hopper (compute capability 9.0 only: sm_90a PTX is not forward-compatible): everything,
    // wgmma and TMA included. PTX ISA 8.0 (CUDA 12.0 drivers and newer) is the first with sm_90a.
    Build {
        arch: "sm90a",
        rustflags: &["-C", "target-cpu=sm_90a", "-C", "target-feature=+ptx80"],
    },
];

/// What the nvptx64 build needs besides rustc and cargo: `core`'s source for build-std, and
/// the bitcode linker that links the crate into one PTX module.
const COMPONENTS: [&str; 3] = ["rust-src", "llvm-tools", "llvm-bitcode-linker"];

fn main() {
    let root =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let kernels = root.join("kernels-gpu");
    // The kernel crate and what it is built from: its sources, its path dependency on the
    // shared geometry crate, and the toolchain pin.
    for watched in [
        "kernels-gpu/src",
        "kernels-gpu/Cargo.toml",
        "kernels-gpu/Cargo.lock",
        "kernels-gpu/.cargo/config.toml",
        "geometry/src",
        "geometry/Cargo.toml",
        "rust-toolchain.toml",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    let toolchain = pinned_toolchain(&root.join("rust-toolchain.toml"));
    let rustup = find_rustup(&toolchain);
    ensure_toolchain(&rustup, &toolchain);

    let targets = kernels_target_root(&out_dir, &kernels);
    // The two builds are independent (separate target directories): run them side by side.
    let outputs: Vec<(&Build, std::io::Result<Output>)> = std::thread::scope(|scope| {
        let running: Vec<_> = BUILDS
            .iter()
            .map(|build| {
                let target_dir = targets.join(build.arch);
                let mut cargo = nested_cargo(&rustup, &toolchain, &kernels, &target_dir, build);
                (build, scope.spawn(move || cargo.output()))
            })
            .collect();
        running
            .into_iter()
            .map(|(build, thread)| {
                (
                    build,
                    thread.join().expect("the build thread does not panic"),
                )
            })
            .collect()
    });

    for (build, output) in outputs {
        let output = output.unwrap_or_else(|err| {
            fail(&format!(
                "could not run `{} run {toolchain} cargo`: {err}",
                rustup.display()
            ))
        });
        if !output.status.success() {
            // rustc's own diagnostics for the device code, as the user would see them building it.
            fail(&format!(
                "building kernels-gpu for nvptx64-nvidia-cuda ({}, with {toolchain}) failed:\n{}",
                build.rustflags.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let raw = targets
            .join(build.arch)
            .join("nvptx64-nvidia-cuda/release/kernels_gpu.ptx");
        let ptx = std::fs::read_to_string(&raw).unwrap_or_else(|err| {
            fail(&format!(
                "kernels-gpu built, but {} is missing: {err}",
                raw.display()
            ))
        });
        let ptx = apply_launch_bounds(&ptx);
        write(&out_dir.join(format!("kernels_{}.ptx", build.arch)), &ptx);
        write(
            &out_dir.join(format!("entries_{}.rs", build.arch)),
            &entry_list(&ptx),
        );
    }
}

/// Where the nested builds of `kernels` put their target directories (one per [`BUILDS`] entry).
///
/// Cargo runs this script once per profile and command, each time with a new `OUT_DIR`, and
/// the kernel build is the slow part of the whole build. So the nested target directories live
/// beside the outer build's own, in `<target>/rust-gemm-kernels/<key>/`, where every run finds
/// them: the nested cargo then checks its fingerprints and finds the PTX fresh in a second, or
/// rebuilds what changed. Concurrent outer builds are safe: the nested cargo locks its target
/// directory. `<key>` tells apart the kernel crates of different checkouts (two versions of
/// this crate in one dependency graph, say), whose PTX would otherwise overwrite each other's.
///
/// The outer target directory is the nearest ancestor of `OUT_DIR` that holds cargo's
/// `CACHEDIR.TAG`, looked for no higher than [`TARGET_DEPTH`] folders up (cargo's layouts put
/// `OUT_DIR` 4–6 below it), so that a tag far above the build is never taken for it; where
/// none is found (a build directory laid out some other way), the nested builds stay under
/// `OUT_DIR`, private to this run, as slow but as correct.
fn kernels_target_root(out_dir: &Path, kernels: &Path) -> PathBuf {
    let Some(target) = out_dir
        .ancestors()
        .skip(1)
        .take(TARGET_DEPTH)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
    else {
        return out_dir.join("kernels-target");
    };
    let kernels = kernels
        .canonicalize()
        .unwrap_or_else(|_| kernels.to_path_buf());
    target.join("rust-gemm-kernels").join(format!(
        "{:016x}",
        fnv1a(kernels.as_os_str().as_encoded_bytes())
    ))
}

/// How many folders above `OUT_DIR` [`kernels_target_root`] looks for the target directory:
/// `<target>/[<triple>/]<profile>/build/<package>/<hash>/out` (cargo's newer layout) is 6.
const TARGET_DEPTH: usize = 6;

/// The 64-bit FNV-1a hash of `bytes`: a stable, dependency-free key for a path (std's hasher
/// is not promised to be stable across Rust releases, and the key must be).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Prints `message` as the build script's error and stops the build.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    exit(1);
}

fn write(path: &Path, contents: &str) {
    if let Err(err) = std::fs::write(path, contents) {
        fail(&format!("could not write {}: {err}", path.display()));
    }
}

/// The `channel` of `rust-toolchain.toml`'s `[toolchain]` table: the one place the nightly is
/// named. (A line-level read: that file is three keys, and a TOML parser would be a build
/// dependency of every user.)
fn pinned_toolchain(path: &Path) -> String {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| fail(&format!("could not read {}: {err}", path.display())));
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("channel"))
        .filter_map(|rest| rest.trim_start().strip_prefix('='))
        .map(|value| value.trim().trim_matches('"').to_string())
        .find(|channel| !channel.is_empty())
        .unwrap_or_else(|| fail(&format!("{} names no `channel`", path.display())))
}

/// rustup from `PATH`, else where rustup's installer puts it (`$CARGO_HOME/bin`,
/// `~/.cargo/bin`: an IDE may start cargo with neither on `PATH`).
fn find_rustup(toolchain: &str) -> PathBuf {
    let home_bins = [
        env::var_os("CARGO_HOME").map(PathBuf::from),
        env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")),
    ];
    let candidates = std::iter::once(PathBuf::from("rustup")).chain(
        home_bins
            .into_iter()
            .flatten()
            .map(|home| home.join("bin").join("rustup")),
    );
    for candidate in candidates {
        let found = Command::new(&candidate)
            .arg("--version")
            .env_remove("RUSTUP_TOOLCHAIN")
            .output()
            .is_ok_and(|output| output.status.success());
        if found {
            return candidate;
        }
    }
    fail(&format!(
        "rust-gemm compiles its GPU kernels with the Rust toolchain {toolchain} (named in its \
         rust-toolchain.toml), which it runs through rustup, and rustup was not found (not on \
         PATH, not in $CARGO_HOME/bin or ~/.cargo/bin). Install rustup (https://rustup.rs); \
         the build then installs {toolchain} with the components {} by itself.",
        COMPONENTS.join(", ")
    ))
}

/// Installs `toolchain` with [`COMPONENTS`] when it or one of them is missing. Asks rustup what
/// is installed first, so that an up-to-date machine never touches the network.
fn ensure_toolchain(rustup: &Path, toolchain: &str) {
    let listed = Command::new(rustup)
        .args(["component", "list", "--installed", "--toolchain", toolchain])
        .env_remove("RUSTUP_TOOLCHAIN")
        .output();
    let installed: Option<Vec<String>> = match listed {
        Ok(output) if output.status.success() => Some(
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(|line| line.trim().to_string())
                .collect(),
        ),
        _ => None,
    };
    // Installed components are listed as `name` (rust-src) or `name-<host triple>`.
    let host = env::var("HOST").unwrap_or_default();
    let has = |installed: &[String], component: &str| {
        installed
            .iter()
            .any(|line| line == component || *line == format!("{component}-{host}"))
    };
    let mut command = Command::new(rustup);
    command.env_remove("RUSTUP_TOOLCHAIN");
    match installed {
        Some(installed) => {
            let missing: Vec<&str> = COMPONENTS
                .iter()
                .copied()
                .filter(|component| !has(&installed, component))
                .collect();
            if missing.is_empty() {
                return;
            }
            println!(
                "cargo:warning=rust-gemm: adding {} to the toolchain {toolchain} (needed to build the GPU kernels)",
                missing.join(", ")
            );
            command
                .args(["component", "add", "--toolchain", toolchain])
                .args(&missing);
        }
        None => {
            println!(
                "cargo:warning=rust-gemm: installing the Rust toolchain {toolchain} (rust-toolchain.toml) to build the GPU kernels"
            );
            command
                .args([
                    "toolchain",
                    "install",
                    toolchain,
                    "--profile",
                    "minimal",
                    "--component",
                ])
                .arg(COMPONENTS.join(","));
        }
    }
    match command.output() {
        Ok(output) if output.status.success() => {}
        Ok(output) => fail(&format!(
            "could not install the Rust toolchain {toolchain} with {} through rustup:\n{}",
            COMPONENTS.join(", "),
            String::from_utf8_lossy(&output.stderr)
        )),
        Err(err) => fail(&format!("could not run {}: {err}", rustup.display())),
    }
}

/// `rustup run <toolchain> cargo build --release` in `kernels-gpu/`, into `target_dir`, with
/// `build`'s flags and none of the outer build's environment.
fn nested_cargo(
    rustup: &Path,
    toolchain: &str,
    kernels: &Path,
    target_dir: &Path,
    build: &Build,
) -> Command {
    let mut cargo = Command::new(rustup);
    cargo
        .current_dir(kernels)
        .args([
            "run",
            toolchain,
            "cargo",
            "build",
            "--release",
            "--locked",
            "--target-dir",
        ])
        .arg(target_dir);
    // The outer cargo describes the *host* build in these variables (its toolchain, target,
    // flags, clippy as a rustc wrapper, its jobserver...); the device build must see none of
    // them. Kept: where cargo's home is and how it reaches registries (user settings).
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        let user_setting = key == "CARGO_HOME"
            || [
                "CARGO_NET_",
                "CARGO_HTTP_",
                "CARGO_REGISTRIES_",
                "CARGO_REGISTRY_",
            ]
            .iter()
            .any(|prefix| key.starts_with(prefix));
        let host_only = ((key.starts_with("CARGO_") || key.starts_with("__CARGO"))
            && !user_setting)
            || key.starts_with("RUSTC")
            || key.starts_with("RUSTDOC")
            || key.starts_with("RUSTUP_TOOLCHAIN")
            || matches!(
                key.as_ref(),
                "CARGO"
                    | "RUSTFLAGS"
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
    // CARGO_ENCODED_RUSTFLAGS outranks `[target.*] rustflags` in kernels-gpu/.cargo/config.toml.
    let encoded: OsString = build.rustflags.join("\x1f").into();
    cargo.env("CARGO_ENCODED_RUSTFLAGS", encoded);
    cargo
}

/// The `.entry` names of `ptx`, sorted, as a Rust array expression (`&["a", "b"]`).
fn entry_list(ptx: &str) -> String {
    let mut entries: Vec<&str> = ptx
        .lines()
        .filter_map(|line| line.split(".entry ").nth(1))
        .filter_map(|rest| rest.split('(').next())
        .map(str::trim)
        .collect();
    entries.sort_unstable();
    let mut list = String::from("&[\n");
    for entry in entries {
        list.push_str(&format!("    {entry:?},\n"));
    }
    list.push_str("]\n");
    list
}

/// Turns each `launch_bounds!(entry, max_threads, min_blocks[, cluster])` of the kernel crate
/// (exported as a 12-byte constant `launch_bounds__<entry>`) into the PTX directives `.maxntid`
/// and `.minnctapersm` on that entry, placed between its parameter list and its body: what
/// CUDA's `__launch_bounds__` produces; and a cluster size other than 0 into
/// `.reqnctapercluster cluster, 1, 1` (CUDA's `__cluster_dims__`).
fn apply_launch_bounds(ptx: &str) -> String {
    let mut bounds = HashMap::new();
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
            if let Some((threads, blocks, cluster)) = header_of.and_then(|entry| bounds.get(entry))
            {
                out.push_str(&format!(
                    ".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"
                ));
                if *cluster > 0 {
                    out.push_str(&format!(".reqnctapercluster {cluster}, 1, 1\n"));
                }
            }
            header_of = None;
        }
    }
    out
}

/// Reads `.visible .global .align 4 .b8 launch_bounds__NAME[12] = {b0, b1, ...};` (LLVM drops
/// trailing zero bytes) as NAME and three little-endian u32s.
fn parse_bounds(line: &str) -> Option<(&str, (u32, u32, u32))> {
    let rest = line.split("launch_bounds__").nth(1)?;
    let entry = rest.split('[').next()?;
    let body = rest.split('{').nth(1)?.split('}').next()?;
    let mut bytes = [0u8; 12];
    for (slot, text) in bytes.iter_mut().zip(body.split(',')) {
        *slot = text.trim().parse().ok()?;
    }
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    Some((entry, (word(0), word(4), word(8))))
}
