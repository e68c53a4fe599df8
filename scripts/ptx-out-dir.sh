#!/usr/bin/env bash
# Prints the OUT_DIR of rust-gemm's build script: the folder holding the PTX the library embeds
# (kernels_sm80.ptx, kernels_sm90a.ptx; see build.rs). Asks cargo, whose `build-script-executed`
# JSON message names it, rather than guessing a path: the layout of cargo's build directory is
# not stable across versions. Runs `cargo check --lib -p rust-gemm` (plus any arguments given,
# such as --release), which builds the PTX when it is missing or stale; the kernels are the same
# in every profile.
#
# Usage: scripts/ptx-out-dir.sh [CARGO-ARGS...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo check --lib -p rust-gemm --message-format=json --quiet "$@" |
    python3 -c '
import json, sys
out_dir = None
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if message.get("reason") != "build-script-executed":
        continue
    # "path+file:///dir#rust-gemm@0.1.0", or "path+file:///dir/rust-gemm#0.1.0"
    location, _, fragment = message.get("package_id", "").partition("#")
    name = fragment.split("@")[0] if "@" in fragment else location.rstrip("/").split("/")[-1]
    if name == "rust-gemm":
        out_dir = message["out_dir"]
if out_dir is None:
    sys.exit("ptx-out-dir: error: cargo reported no build-script run for rust-gemm")
print(out_dir)
'
