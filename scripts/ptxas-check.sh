#!/usr/bin/env bash
# Assembles the kernels' PTX with NVIDIA's ptxas for sm_90a and prints, per kernel, the registers,
# static shared memory, stack frame and spills. Fails if ptxas rejects the PTX, or if any kernel
# has a stack frame or spills registers (local-memory traffic in a GEMM inner loop), or if ptxas
# warns of a performance loss (such as serialized wgmma).
#
# Usage: scripts/ptxas-check.sh [PTX]
#   default: target/kernels-gpu/kernels.ptx, the PTX exactly as the library embeds it (written by
#   build.rs when it post-processes the kernels), else the raw release build of kernels-gpu,
#   target/kernels-gpu/nvptx64-nvidia-cuda/release/kernels_gpu.ptx.
#
# ptxas comes from $PTXAS if set, else from PyPI's nvidia-cuda-nvcc, installed into .tools/nvcc.
# No GPU is needed.
set -euo pipefail

# A PTX path given on the command line is taken relative to where the script was called from.
if [[ $# -ge 1 && "$1" != /* ]]; then
    set -- "$PWD/$1"
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

nvcc_version="13.0.88"
tools="$root/.tools/nvcc"
embedded_ptx="target/kernels-gpu/kernels.ptx"
raw_ptx="target/kernels-gpu/nvptx64-nvidia-cuda/release/kernels_gpu.ptx"

if [[ -n "${PTXAS:-}" ]]; then
    ptxas="$PTXAS"
else
    ptxas="$tools/nvidia/cu13/bin/ptxas"
    if [[ ! -x "$ptxas" ]]; then
        echo "ptxas-check: installing ptxas (PyPI nvidia-cuda-nvcc==$nvcc_version) into .tools/nvcc" >&2
        python3 -m pip install --quiet --disable-pip-version-check --target "$tools" \
            "nvidia-cuda-nvcc==$nvcc_version"
    fi
fi
if [[ ! -x "$ptxas" ]]; then
    echo "ptxas-check: error: no executable ptxas at $ptxas" >&2
    exit 1
fi

default_ptx() {
    if [[ -f "$embedded_ptx" ]]; then echo "$embedded_ptx"; else echo "$raw_ptx"; fi
}
if [[ $# -ge 1 ]]; then
    ptx="$1"
else
    ptx="$(default_ptx)"
    if [[ ! -f "$ptx" ]]; then
        # The root build script builds kernels-gpu into target/kernels-gpu.
        echo "ptxas-check: $ptx is missing, building it with cargo build --release" >&2
        cargo build --release
        ptx="$(default_ptx)"
    fi
fi
if [[ ! -f "$ptx" ]]; then
    echo "ptxas-check: error: no PTX at $ptx" >&2
    exit 1
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

echo "ptxas-check: $("$ptxas" --version | tail -n 1)"
echo "ptxas-check: $ptx"
if ! "$ptxas" -arch=sm_90a -v "$ptx" -o "$scratch/kernels.cubin" >"$scratch/log" 2>&1; then
    cat "$scratch/log" >&2
    echo "ptxas-check: error: ptxas rejected $ptx" >&2
    exit 1
fi

# ptxas -v prints, per entry function:
#   ptxas info    : Compiling entry function 'NAME' for 'sm_90a'
#   ptxas info    : Function properties for NAME
#       S bytes stack frame, T bytes spill stores, L bytes spill loads
#   ptxas info    : Used R registers, used 1 barriers, X bytes smem, ...
# followed by a "Function properties" block (no "Used" line) for each device function the entry
# calls that was not inlined. Kernels go to $scratch/table, callees to $scratch/callees.
awk -v table="$scratch/table" -v callees="$scratch/callees" '
    function flush() {
        if (kind == "entry")
            printf "%s|%s|%s|%s|%s|%s\n", name, regs, smem, stack, stores, loads > table
        else if (kind == "callee")
            printf "%s|%s|%s|%s|%s\n", name, entry, stack, stores, loads > callees
        kind = ""
    }
    /Compiling entry function/ {
        flush()
        match($0, /\047[^\047]+\047/)
        entry = name = substr($0, RSTART + 1, RLENGTH - 2)
        kind = "entry"; regs = "?"; smem = 0; stack = "?"; stores = "?"; loads = "?"
        next
    }
    /Function properties for/ {
        fn = $0
        sub(/.*Function properties for /, "", fn)
        gsub(/[ \t]+$/, "", fn)
        if (fn != name) {
            flush()
            kind = "callee"; name = fn; stack = "?"; stores = "?"; loads = "?"
        }
        next
    }
    /bytes stack frame/ {
        for (i = 1; i <= NF; i++) {
            if ($(i + 1) == "bytes" && $(i + 2) == "stack") stack = $i
            if ($(i + 1) == "bytes" && $(i + 2) == "spill" && $(i + 3) ~ /^stores/) stores = $i
            if ($(i + 1) == "bytes" && $(i + 2) == "spill" && $(i + 3) ~ /^loads/) loads = $i
        }
        next
    }
    /Used [0-9]+ registers/ {
        for (i = 1; i <= NF; i++) {
            if ($(i + 1) ~ /^registers/) regs = $i
            if ($(i + 1) == "bytes" && $(i + 2) ~ /^smem/) smem = $i
        }
        next
    }
    END { flush() }
' "$scratch/log"
touch "$scratch/table" "$scratch/callees"

if [[ ! -s "$scratch/table" ]]; then
    cat "$scratch/log" >&2
    echo "ptxas-check: error: found no kernels in the ptxas output" >&2
    exit 1
fi

bad=0
{
    echo "kernel|registers|shared|stack|spill stores|spill loads"
    LC_ALL=C sort -t"|" -k1,1 "$scratch/table"
} | awk -F'|' '{ for (i = 1; i <= NF; i++) if (length($i) > w[i]) w[i] = length($i); row[NR] = $0 }
    END {
        for (r = 1; r <= NR; r++) {
            n = split(row[r], c, "|")
            line = ""
            for (i = 1; i <= n; i++) {
                if (i == 1) line = sprintf("%-" w[i] "s", c[i])
                else line = line sprintf(" | %" w[i] "s", c[i])
            }
            print line
            if (r == 1) {
                sep = ""
                for (i = 1; i <= n; i++) {
                    dashes = sprintf("%" w[i] "s", "")
                    gsub(/ /, "-", dashes)
                    sep = sep (i == 1 ? "" : "-+-") dashes
                }
                print sep
            }
        }
    }'

while IFS='|' read -r name regs smem stack stores loads; do
    if [[ "$stack" != "0" || "$stores" != "0" || "$loads" != "0" ]]; then
        echo "ptxas-check: error: kernel $name has a ${stack}-byte stack frame, ${stores} bytes of spill stores and ${loads} bytes of spill loads" >&2
        bad=1
    fi
done <"$scratch/table"

# Device functions left as calls (panic paths of core, typically): listed, and held to the same
# rule, since their frames and spills are paid by the kernels that call them.
if [[ -s "$scratch/callees" ]]; then
    echo
    echo "device functions called (not inlined):"
    cut -d'|' -f1 "$scratch/callees" | LC_ALL=C sort -u | while read -r fn; do
        callers="$(awk -F'|' -v fn="$fn" '$1 == fn { print $2 }' "$scratch/callees" | sort -u | paste -sd, - | sed 's/,/, /g')"
        echo "  $fn  (from $callers)"
    done
fi
while IFS='|' read -r name entry stack stores loads; do
    if [[ "$stack" != "0" || "$stores" != "0" || "$loads" != "0" ]]; then
        echo "ptxas-check: error: $name (called from $entry) has a ${stack}-byte stack frame, ${stores} bytes of spill stores and ${loads} bytes of spill loads" >&2
        bad=1
    fi
done <"$scratch/callees"

# ptxas's performance warnings, e.g. C7515: wgmma serialized because ordinary instructions
# write its accumulators inside the pipeline, which silently costs a rung a large share of its
# speed.
if grep -q "Potential Performance Loss" "$scratch/log"; then
    grep "Potential Performance Loss" "$scratch/log" >&2
    echo "ptxas-check: error: ptxas reports a performance loss (above)" >&2
    bad=1
fi

if [[ "$bad" != 0 ]]; then
    exit 1
fi
echo
echo "ptxas-check: $(wc -l <"$scratch/table") kernels, no stack frames, no spills, no performance warnings"
echo "(shared: static shared memory in bytes; dynamic shared memory is set at launch by host/src/rungs.rs)"
