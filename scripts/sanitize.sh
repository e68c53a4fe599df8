#!/usr/bin/env bash
# compute-sanitizer sweep: memcheck, racecheck, synccheck and initcheck over every kernel of the
# ladder (each rung and each v11 candidate, through the autotuner's search) at aligned and
# ragged shapes, plus a short randomized sweep. Runs on a GPU machine with the CUDA toolkit.
#
#   scripts/sanitize.sh [path/to/sgemm-ladder] [output folder] [path/to/gpu_dequant_fast]
#                       [path/to/api_fuzz_gpu] [path/to/api_quantized_fuzz_gpu]
#
# The dequant kernels (decode, expand) are checked by every tool over the test binary's
# `sanitizer_subset` test (run "dequant"; --kernel-regex kns=dequant_). The library's API is
# checked by every tool over the API fuzzer (run "fuzz": SANITIZER_FUZZ_CASES generated calls,
# default 600, 150 under racecheck; every kernel dispatch can pick, forced or chosen) and by
# memcheck and initcheck over the quantized fuzzer (run "qfuzz": SANITIZER_QFUZZ_CASES weight
# matrices, default 150). Neither calls cuBLAS, so no kernel filter is needed there.
#
# Writes <output>/sanitizer.md (a summary table) and one log per tool; exits non-zero if any
# tool reports an error. Only this project's kernels are checked (--kernel-regex kns=gemm_v),
# not cuBLAS's.
set -uo pipefail

bin=${1:-.carry/sgemm-ladder}
out=${2:-sanitizer-report}
dequant_bin=${3:-.carry/gpu_dequant_fast}
fuzz_bin=${4:-.carry/test-api_fuzz_gpu}
qfuzz_bin=${5:-.carry/test-api_quantized_fuzz_gpu}
mkdir -p "$out"
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# Aligned (64, 256) and ragged (1, primes, 4097×31×513) shapes; --autotune makes v11 time, and
# so launch, every candidate at every shape. Small sizes keep racecheck's run time bounded.
ladder_args=(--sizes 64,256 --shapes 1x1x1,127x129x131,4097x31x513,33x4x1029,127x136x264 --reps 1 --warmup 0
    --reference cpu --autotune --seed 1 --report-dir "$out/ladder")
verify_args=(verify --count 12 --max-dim 300 --seed 2)
# SANITIZER_RUNGS=v11 (comma-separated) limits both runs to those rungs.
if [ -n "${SANITIZER_RUNGS:-}" ]; then
    ladder_args+=(--rungs "$SANITIZER_RUNGS")
    verify_args+=(--rungs "$SANITIZER_RUNGS")
fi

status=0
{
    echo "# compute-sanitizer sweep"
    echo
    echo "- Device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
    echo "- Sanitizer: $("$sanitizer" --version | tail -n 1)"
    echo "- Commands: \`scripts/sanitize.sh\`, which runs memcheck, synccheck and initcheck over"
    echo "  \`sgemm-ladder ${ladder_args[*]}\` (run \"ladder\"), and memcheck and racecheck over"
    echo "  \`sgemm-ladder ${verify_args[*]}\` (run \"verify\"), and every tool over"
    echo "  \`gpu_dequant_fast --ignored --exact sanitizer_subset\` (run \"dequant\", dequant kernels only),"
    echo "  every tool over \`api_fuzz_gpu --ignored\` with FUZZ_CASES=${SANITIZER_FUZZ_CASES:-600} (racecheck: 150)"
    echo "  (run \"fuzz\"), and memcheck and initcheck over \`api_quantized_fuzz_gpu --ignored\` with"
    echo "  FUZZ_CASES=${SANITIZER_QFUZZ_CASES:-150} (run \"qfuzz\")"
    echo
    echo "| tool | run | result |"
    echo "|---|---|---|"
} >"$out/sanitizer.md"

# racecheck instruments every shared-memory access and runs about 100× slower. It runs over the
# randomized sweep rather than the ladder: the ladder also launches cuBLAS's fp16 GEMM, which
# racecheck (CUDA 13.0) cannot run ("Internal Sanitizer Error: The Sanitizer failed to handle a
# hardware exception", even with every kernel of ours excluded by name).
# SANITIZER_TOOLS="synccheck initcheck" runs a subset.
read -r -a tools <<<"${SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}"
for tool in "${tools[@]}"; do
    runs=(ladder dequant fuzz)
    if [ "$tool" = memcheck ]; then runs=(ladder verify dequant fuzz qfuzz); fi
    if [ "$tool" = racecheck ]; then runs=(verify dequant fuzz); fi
    if [ "$tool" = initcheck ]; then runs=(ladder dequant fuzz qfuzz); fi
    for run in "${runs[@]}"; do
        # SANITIZER_RUNS="dequant" (space-separated) limits the runs.
        if [ -n "${SANITIZER_RUNS:-}" ] && [[ " $SANITIZER_RUNS " != *" $run "* ]]; then continue; fi
        log="$out/$tool-$run.log"
        if [ "$run" = dequant ]; then
            "$sanitizer" --tool "$tool" --kernel-regex kns=dequant_ --error-exitcode 99 \
                "$dequant_bin" --ignored --exact sanitizer_subset >"$log" 2>&1
        elif [ "$run" = fuzz ]; then
            cases=${SANITIZER_FUZZ_CASES:-600}
            if [ "$tool" = racecheck ]; then cases=$((cases / 4)); fi
            FUZZ_CASES=$cases "$sanitizer" --tool "$tool" --error-exitcode 99 \
                "$fuzz_bin" --ignored --nocapture >"$log" 2>&1
        elif [ "$run" = qfuzz ]; then
            FUZZ_CASES=${SANITIZER_QFUZZ_CASES:-150} "$sanitizer" --tool "$tool" --error-exitcode 99 \
                "$qfuzz_bin" --ignored --nocapture >"$log" 2>&1
        else
            if [ "$run" = ladder ]; then args=("${ladder_args[@]}"); else args=("${verify_args[@]}"); fi
            "$sanitizer" --tool "$tool" --kernel-regex kns=gemm_v --error-exitcode 99 "$bin" "${args[@]}" >"$log" 2>&1
        fi
        code=$?
        summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n 1)
        if [ "$code" -ne 0 ]; then status=1; fi
        echo "| $tool | $run | ${summary:-no summary} (exit $code) |" >>"$out/sanitizer.md"
        echo "$tool $run: ${summary:-no summary} (exit $code)"
    done
done
exit $status
