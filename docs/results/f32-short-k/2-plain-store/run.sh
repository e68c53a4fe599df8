#!/usr/bin/env bash
# Device run 2 for docs/results/f32-persistent: v13's plain-store path; tests, sanitizer, probe, suite.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run2}
O=$OUT/$R; mkdir -p $O/tests $O/probe $O/sanitizer
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
start=$(date +%s)
step() { local name=$1 t=$2; shift 2; timeout $t "$@" > $O/$name.log 2>&1; echo "$name rc=$? at $(( $(date +%s) - start ))s" >> $O/summary.txt; }
S=docs/results/f32-persistent/probe-suite.txt
L=.carry/sgemm-ladder
T=.carry/test-api_gpu
for kernel in dispatch v13 v13_persistent v13_m64; do
  args=(); [ $kernel != dispatch ] && args=(--kernel $kernel)
  step probe/$kernel 60 $L shapes --suite $S --precision f32 --reps 20 --max-ms 30 --seed 20261202 "${args[@]}" --report-dir $O/probe/$kernel
done
for t in v13_persistent_f32 v13_m64_f32 v13_m32_f32 v13_k_major_f32 beta_zero_never_reads_c nan_inputs_propagate split_k_f32 f32_exact; do
  step tests/$t 100 $T --ignored --exact $t --nocapture
done
step sanitizer/memcheck 60 compute-sanitizer --tool memcheck --kernel-name kns=gemm_v13 $T --ignored --exact v13_persistent_sanitizer_subset
step sanitizer/racecheck 80 compute-sanitizer --tool racecheck --kernel-name kns=gemm_v13_persistent $T --ignored --exact v13_persistent_sanitizer_subset
step sanitizer/memcheck-short-m 60 compute-sanitizer --tool memcheck --kernel-name kns=gemm_v13 $T --ignored --exact v13_short_m_sanitizer_subset
mkdir -p $O/ncu
for kernel in v13 v13_persistent; do
  step ncu/$kernel 60 ncu --kernel-name regex:gemm_v13 --launch-skip 6 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --print-details all $L shapes --suite docs/results/f32-persistent/ncu-suite.txt --precision f32 --reps 2 --max-ms 1 --seed 1 --kernel $kernel
done
cd $OUT && tar czf $R.tgz $R && rm -rf $R
