#!/usr/bin/env bash
# Assembles the kernels' PTX with NVIDIA's ptxas for every architecture it is meant for and
# prints, per kernel and architecture, the registers and static shared memory. Fails if ptxas
# rejects a PTX for one of them, if any kernel (or device function it calls) has a stack frame
# or spills registers (local-memory traffic in a GEMM inner loop), or if ptxas warns of a
# performance loss (such as serialized wgmma).
#
# Usage: scripts/ptxas-check.sh [PTX...]
#   default: the two PTX modules the library embeds (src/ptx.rs), exactly as build.rs wrote them
#   into its OUT_DIR: kernels_sm80.ptx and kernels_sm90a.ptx. scripts/ptx-out-dir.sh finds that
#   OUT_DIR by asking cargo (and builds the PTX when it is missing or stale).
#   With PTX files given, each is checked for the architectures its `.target` line implies.
#
# Architectures per `.target`: sm_80 (portable, forward-compatible) is assembled for sm_80
# (A100), sm_86 (RTX 30), sm_89 (RTX 40, L4), sm_90 (H100) and sm_120 (RTX 50); sm_90a
# (Hopper-only instructions) for sm_90a; any other sm_XY for itself.
#
# ptxas comes from $PTXAS if set, else from PyPI's nvidia-cuda-nvcc, installed into .tools/nvcc.
# No GPU is needed.
set -euo pipefail

# PTX paths given on the command line are taken relative to where the script was called from.
args=()
for arg in "$@"; do
    if [[ "$arg" != /* ]]; then arg="$PWD/$arg"; fi
    args+=("$arg")
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

nvcc_version="13.0.88"
tools="$root/.tools/nvcc"
portable_archs=(sm_80 sm_86 sm_89 sm_90 sm_120)

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

if [[ ${#args[@]} -eq 0 ]]; then
    echo "ptxas-check: locating the embedded PTX (scripts/ptx-out-dir.sh)" >&2
    out_dir="$(scripts/ptx-out-dir.sh)"
    args=("$out_dir/kernels_sm80.ptx" "$out_dir/kernels_sm90a.ptx")
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
: >"$scratch/table"
: >"$scratch/callees"

echo "ptxas-check: $("$ptxas" --version | tail -n 1)"
bad=0
columns=()
# First every (PTX, architecture) pair, in report order: jobs[i] = "ptx|arch".
jobs=()
for ptx in "${args[@]}"; do
    if [[ ! -f "$ptx" ]]; then
        echo "ptxas-check: error: no PTX at $ptx" >&2
        exit 1
    fi
    target="$(awk '$1 == ".target" { sub(/,.*/, "", $2); print $2; exit }' "$ptx")"
    version="$(awk '$1 == ".version" { print $2; exit }' "$ptx")"
    case "$target" in
        sm_80) archs=("${portable_archs[@]}") ;;
        sm_*) archs=("$target") ;;
        *)
            echo "ptxas-check: error: $ptx has no .target sm_XY line" >&2
            exit 1
            ;;
    esac
    echo "ptxas-check: $ptx (.target $target, PTX $version): ${archs[*]}"
    for arch in "${archs[@]}"; do
        columns+=("$arch")
        jobs+=("$ptx|$arch")
    done
done

# Then the assemblies, as many at a time as there are cores (each is single-threaded and takes
# a minute or more on the full modules): job i writes log-i and, on failure, a mark failed-i.
# Started from the last job: by default that is the sm_90a module, the slowest to assemble
# (2.7 min against 1.1 for each portable architecture here), which should not run alone at the end.
parallel="$(nproc 2>/dev/null || echo 1)"
running=0
for ((i = ${#jobs[@]} - 1; i >= 0; i--)); do
    ptx="${jobs[$i]%|*}"
    arch="${jobs[$i]##*|}"
    if ((running >= parallel)); then
        wait -n || true
        running=$((running - 1))
    fi
    (
        if ! "$ptxas" -arch="$arch" -v "$ptx" -o "$scratch/$i.cubin" >"$scratch/log-$i" 2>&1; then
            : >"$scratch/failed-$i"
        fi
        rm -f "$scratch/$i.cubin"
    ) &
    running=$((running + 1))
done
wait

# Last, each log in report order.
for i in "${!jobs[@]}"; do
    ptx="${jobs[$i]%|*}"
    arch="${jobs[$i]##*|}"
    log="$scratch/log-$i"
    if [[ -e "$scratch/failed-$i" ]]; then
        cat "$log" >&2
        echo "ptxas-check: error: ptxas rejected $ptx for $arch" >&2
        bad=1
        continue
    fi
    # ptxas -v prints, per entry function:
    #   ptxas info    : Compiling entry function 'NAME' for 'sm_90a'
    #   ptxas info    : Function properties for NAME
    #       S bytes stack frame, T bytes spill stores, L bytes spill loads
    #   ptxas info    : Used R registers, used 1 barriers, X bytes smem, ...
    # followed by a "Function properties" block (no "Used" line) for each device function
    # the entry calls that was not inlined. Kernels go to the table, callees to callees.
    awk -v arch="$arch" -v table="$scratch/table" -v callees="$scratch/callees" '
        function flush() {
            if (kind == "entry")
                printf "%s|%s|%s|%s|%s|%s|%s\n", arch, name, regs, smem, stack, stores, loads >> table
            else if (kind == "callee")
                printf "%s|%s|%s|%s|%s|%s\n", arch, name, entry, stack, stores, loads >> callees
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
    ' "$log"
    if ! grep -q "^$arch|" "$scratch/table"; then
        cat "$log" >&2
        echo "ptxas-check: error: found no kernels in the ptxas output for $arch" >&2
        bad=1
    fi
    # ptxas's performance warnings, e.g. C7515: wgmma serialized because ordinary
    # instructions write its accumulators inside the pipeline, which silently costs a rung
    # a large share of its speed.
    if grep -q "Potential Performance Loss" "$log"; then
        sed "s/^/$arch: /" <(grep "Potential Performance Loss" "$log") >&2
        echo "ptxas-check: error: ptxas reports a performance loss for $arch (above)" >&2
        bad=1
    fi
done

# One row per kernel, one column per architecture: "registers/static shared bytes", "-" where
# the kernel is not in that architecture's PTX.
echo
echo "registers / static shared memory (bytes) per kernel and architecture:"
LC_ALL=C sort -t'|' -k2,2 -k1,1 "$scratch/table" | awk -F'|' -v order="${columns[*]}" '
    BEGIN { n = split(order, arch, " ") }
    {
        if (!($2 in seen)) { seen[$2] = 1; kernels[++rows] = $2 }
        cell[$2, $1] = $3 "/" $4
    }
    END {
        width[0] = length("kernel")
        for (r = 1; r <= rows; r++) if (length(kernels[r]) > width[0]) width[0] = length(kernels[r])
        for (c = 1; c <= n; c++) {
            width[c] = length(arch[c])
            for (r = 1; r <= rows; r++) {
                value = ((kernels[r], arch[c]) in cell) ? cell[kernels[r], arch[c]] : "-"
                if (length(value) > width[c]) width[c] = length(value)
            }
        }
        line = sprintf("%-" width[0] "s", "kernel")
        for (c = 1; c <= n; c++) line = line sprintf(" | %" width[c] "s", arch[c])
        print line
        line = sprintf("%" width[0] "s", ""); gsub(/ /, "-", line)
        for (c = 1; c <= n; c++) { dashes = sprintf("%" width[c] "s", ""); gsub(/ /, "-", dashes); line = line "-+-" dashes }
        print line
        for (r = 1; r <= rows; r++) {
            line = sprintf("%-" width[0] "s", kernels[r])
            for (c = 1; c <= n; c++) {
                value = ((kernels[r], arch[c]) in cell) ? cell[kernels[r], arch[c]] : "-"
                line = line sprintf(" | %" width[c] "s", value)
            }
            print line
        }
    }'

while IFS='|' read -r arch name regs smem stack stores loads; do
    if [[ "$stack" != "0" || "$stores" != "0" || "$loads" != "0" ]]; then
        echo "ptxas-check: error: $arch: kernel $name has a ${stack}-byte stack frame, ${stores} bytes of spill stores and ${loads} bytes of spill loads" >&2
        bad=1
    fi
done <"$scratch/table"

# Device functions left as calls (panic paths of core, typically): listed, and held to the same
# rule, since their frames and spills are paid by the kernels that call them.
if [[ -s "$scratch/callees" ]]; then
    echo
    echo "device functions called (not inlined):"
    cut -d'|' -f2 "$scratch/callees" | LC_ALL=C sort -u | while read -r fn; do
        callers="$(awk -F'|' -v fn="$fn" '$2 == fn { print $3 }' "$scratch/callees" | sort -u | paste -sd, - | sed 's/,/, /g')"
        echo "  $fn  (from $callers)"
    done
fi
while IFS='|' read -r arch name entry stack stores loads; do
    if [[ "$stack" != "0" || "$stores" != "0" || "$loads" != "0" ]]; then
        echo "ptxas-check: error: $arch: $name (called from $entry) has a ${stack}-byte stack frame, ${stores} bytes of spill stores and ${loads} bytes of spill loads" >&2
        bad=1
    fi
done <"$scratch/callees"

if [[ "$bad" != 0 ]]; then
    exit 1
fi
echo
kernels="$(cut -d'|' -f2 "$scratch/table" | sort -u | wc -l)"
echo "ptxas-check: $kernels kernels over ${#columns[@]} architectures (${columns[*]}): no stack frames, no spills, no performance warnings"
echo "(static shared memory only; dynamic shared memory is set at launch by the host)"
