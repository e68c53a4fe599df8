#!/usr/bin/env bash
# Copies the release binaries (sgemm-ladder, the examples and the test binaries) into
# .carry/bundle.tar.xz, in the git-ignored folder handed to the GPU machine, which has no Rust
# toolchain (unpack there with `tar xJf .carry/bundle.tar.xz -C .carry`).
#
# With STAGE_CUBIN=1 it also assembles the sm_90a module for the H100 with ptxas (about 4 minutes
# on two cores) into .carry/cubin/, named as src/runtime/prebuilt.rs looks for it: on the GPU
# machine, `RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin` spares each fresh machine the driver's own
# compilation of the module (minutes of device time), and a changed module is never mistaken
# for it (the name carries the PTX's CRC-32 and length).
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
# With STAGE_ONLY="sgemm-ladder test-api_gpu" (names as staged), only those binaries travel.
if [[ -n "${STAGE_ONLY:-}" ]]; then
    for file in .carry/*; do
        name=$(basename "$file")
        if [[ -f "$file" && " $STAGE_ONLY " != *" $name "* ]]; then
            rm -f "$file"
        fi
    done
fi
# The PTX the staged binaries embed. Each profile and feature set has its own OUT_DIR with its
# own copy of the modules, refreshed only when its build script reruns, so the check profile's
# (ptx-out-dir.sh) can lag behind the release build's: a cubin assembled from a stale copy
# matches no binary, and the GPU machine's driver then compiles the module in every process.
# So the copy is the one found whole in every staged binary that embeds an sm_90a module, and
# binaries that embed different copies are refused.
out_dir=$(python3 - "$(scripts/ptx-out-dir.sh --release)" .carry/* <<'PY'
import glob, mmap, os, sys
# Cargo's layouts: build/rust-gemm-<hash>/out, or build/rust-gemm/<hash>/out.
folders = set(glob.glob("target/release/build/rust-gemm-*/out"))
folders |= set(glob.glob("target/release/build/rust-gemm/*/out")) | {sys.argv[1]}
modules = {}  # the modules' contents -> the first folder holding them
for folder in sorted(folders):
    try:
        ptx = tuple(open(os.path.join(folder, name), "rb").read()
                    for name in ("kernels_sm80.ptx", "kernels_sm90a.ptx"))
    except OSError:
        continue
    modules.setdefault(ptx, folder)
chosen = set()
for binary in sys.argv[2:]:
    if not os.path.isfile(binary) or os.path.getsize(binary) == 0:
        continue
    with open(binary, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data.find(b".target sm_90a") < 0:
            continue
        found = [folder for ptx, folder in modules.items() if all(data.find(p) >= 0 for p in ptx)]
    if len(found) != 1:
        sys.exit(f"stage-carry: {binary} embeds PTX that {len(found)} OUT_DIRs hold; rebuild")
    chosen.add(found[0])
if len(chosen) != 1:
    sys.exit(f"stage-carry: the binaries embed {len(chosen)} different PTX builds: {sorted(chosen)}")
print(chosen.pop())
PY
)
echo "PTX of the staged binaries: $out_dir"
if [[ "${STAGE_CUBIN:-0}" == 1 ]]; then
    ptxas="${PTXAS:-.tools/nvcc/nvidia/cu13/bin/ptxas}"
    if [[ ! -x "$ptxas" ]]; then
        # As scripts/ptxas-check.sh installs it.
        python3 -m pip install --quiet --disable-pip-version-check --target .tools/nvcc \
            "nvidia-cuda-nvcc==13.0.88"
    fi
    ptx="$out_dir/kernels_sm90a.ptx"
    name=$(python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); print("%08x-%d-sm_90.cubin" % (zlib.crc32(d), len(d)))' "$ptx")
    mkdir -p .carry/cubin
    "$ptxas" -arch=sm_90a "$ptx" -o ".carry/cubin/$name"
    echo "staged cubin/$name"
fi
strip .carry/sgemm-ladder .carry/example-* .carry/test-* 2>/dev/null || true
# The binaries are mostly the same embedded PTX (~140 MB each). xz's window must span whole
# binaries for it to be stored once: with preset 6's 8 MiB window every binary carried its own
# compressed copy and the bundle passed 130 MB; a 1 GiB window (about 7 GB of memory to
# compress) brings sgemm-ladder, a test binary and the cubin to 14 MB in 18 s.
(cd .carry && tar cf - -- * | xz -T1 --lzma2=preset=1,dict=1GiB > ../target/carry-bundle.tar.xz && rm -rf -- * && mv ../target/carry-bundle.tar.xz bundle.tar.xz)
# The PTX modules the binaries embed, to name in the results.
(cd "$out_dir" && sha256sum kernels_sm80.ptx kernels_sm90a.ptx) | tee .carry/ptx.sha256
du -sh .carry
