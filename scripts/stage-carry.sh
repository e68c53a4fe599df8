#!/usr/bin/env bash
# Copies the release binaries (sgemm-ladder and the GPU test binaries) into .carry/, the
# git-ignored folder handed to the GPU machine, which has no Rust toolchain.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --bin sgemm-ladder
mkdir -p .carry
cp target/release/sgemm-ladder .carry/
cargo test --release --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys, shutil
for line in sys.stdin:
    msg = json.loads(line)
    exe = msg.get("executable")
    if msg.get("reason") == "compiler-artifact" and exe and msg["target"]["kind"] == ["test"]:
        shutil.copy(exe, ".carry/" + msg["target"]["name"])
        print("staged", msg["target"]["name"])
'
# The PTX modules the binaries embed, to name in the results.
out_dir="$(scripts/ptx-out-dir.sh --release)"
(cd "$out_dir" && sha256sum kernels_sm80.ptx kernels_sm90a.ptx) | tee .carry/ptx.sha256
