#!/usr/bin/env bash
# Device run 1 of docs/results/gemv-in-flight: the f32 matrix–vector path's tests, sanitizer,
# fuzzer, the f32 suite twice, fp16/bf16 probes at the two shapes nearest 0.75, the TF32 suite.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run1}
O=$OUT/$R; mkdir -p $O/tests $O/sanitizer $O/probe
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
cp "$0" $O/run.sh
start=$(date +%s)
# Each step gets at most what is left before the deadline (the results are packed after it).
deadline=${DEADLINE:-500}
step() {
  local name=$1 t=$2; shift 2
  local left=$(( deadline - ($(date +%s) - start) ))
  if (( left < 10 )); then echo "$name skipped (deadline) at $(( $(date +%s) - start ))s" >> $O/summary.txt; return; fi
  (( t > left )) && t=$left
  timeout $t "$@" > $O/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - start ))s" >> $O/summary.txt
}
T=.carry/test-api_gpu
L=.carry/sgemm-ladder
for t in thin_m_f32 thin_n_f32 thin_runs_are_bit_identical thin_beta_zero_never_reads_c_and_nan_inputs_propagate thin_sanitizer_subset; do
  step tests/$t 90 $T --ignored --exact $t --nocapture
done
step sanitizer/memcheck-thin 60 compute-sanitizer --tool memcheck --kernel-name kns=gemm_thin $T --ignored --exact thin_sanitizer_subset
step sanitizer/racecheck-thin 60 compute-sanitizer --tool racecheck --kernel-name kns=gemm_thin $T --ignored --exact thin_sanitizer_subset
step suite-f32-a 110 $L shapes --precision f32 --reps 20 --max-ms 30 --seed 20261210 --report-dir $O/suite-f32-a
step tests/fuzz 60 .carry/test-api_fuzz_gpu --ignored --nocapture
step suite-f32-b 110 $L shapes --precision f32 --reps 20 --max-ms 30 --seed 20261211 --report-dir $O/suite-f32-b
for k in v18 v18_m64 v18_n128 v15; do
  step probe/k64-$k 20 $L shapes --precision f16,bf16 --filter ragged-8192x8192x64 --kernel $k --reps 20 --max-ms 30 --seed 20261212 --report-dir $O/probe/k64-$k
done
step probe/k64-stream-k 20 $L shapes --precision f16,bf16 --filter ragged-8192x8192x64 --stream-k true --reps 20 --max-ms 30 --seed 20261212 --report-dir $O/probe/k64-stream-k
for s in 1 2 3 4 6; do
  step probe/4097-split$s 20 $L shapes --precision f16,bf16 --filter ragged-4097x31x513 --kernel general_mma --split-k $s --reps 20 --max-ms 30 --seed 20261213 --report-dir $O/probe/4097-split$s
done
step suite-tf32 100 $L shapes --precision tf32 --reps 20 --max-ms 30 --seed 20261214 --report-dir $O/suite-tf32
cd $OUT && tar czf $R.tgz $R && rm -rf $R
