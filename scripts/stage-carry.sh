#!/usr/bin/env bash
# Copies the release binaries (sgemm-ladder, the examples and the test binaries) into
# .carry/bundle.tar.xz, in the git-ignored folder handed to the GPU machine, which has no Rust
# toolchain (unpack there with `tar xJf .carry/bundle.tar.xz -C .carry`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --bin sgemm-ladder --examples
rm -rf .carry
mkdir -p .carry
cp target/release/sgemm-ladder .carry/
for example in target/release/examples/*; do
    if [[ -f "$example" && -x "$example" && "$example" != *-* ]]; then
        cp "$example" .carry/example-"$(basename "$example")"
    fi
done
cargo test --workspace --release --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys, shutil
for line in sys.stdin:
    msg = json.loads(line)
    exe = msg.get("executable")
    if msg.get("reason") == "compiler-artifact" and exe and msg["target"]["kind"] == ["test"]:
        shutil.copy(exe, ".carry/test-" + msg["target"]["name"])
        print("staged", msg["target"]["name"])
'
strip .carry/* 2>/dev/null || true
# The binaries are mostly embedded PTX: xz makes them fit the 64 MiB a device call carries.
(cd .carry && tar cf - -- * | xz -T0 -6 > ../target/carry-bundle.tar.xz && rm -f -- * && mv ../target/carry-bundle.tar.xz bundle.tar.xz)
# The PTX modules the binaries embed, to name in the results.
out_dir="$(scripts/ptx-out-dir.sh --release)"
(cd "$out_dir" && sha256sum kernels_sm80.ptx kernels_sm90a.ptx) | tee .carry/ptx.sha256
du -sh .carry
