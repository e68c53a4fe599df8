#!/usr/bin/env bash
# Device run 1 for docs/results/f32-persistent (v13_persistent): tests, sanitizer, probe, ncu.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run1}
O=$OUT/$R; mkdir -p $O/tests $O/probe $O/sanitizer $O/ncu
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
start=$(date +%s)
step() { local name=$1 t=$2; shift 2; timeout $t "$@" > $O/$name.log 2>&1; echo "$name rc=$? at $(( $(date +%s) - start ))s" >> $O/summary.txt; }
S=docs/results/f32-persistent/probe-suite.txt
L=.carry/sgemm-ladder
T=.carry/test-api_gpu
step tests/v13_persistent_f32 150 $T --ignored --exact v13_persistent_f32 --nocapture
step sanitizer/memcheck 120 compute-sanitizer --tool memcheck --kernel-name regex:gemm_v13_persistent $T --ignored --exact v13_persistent_sanitizer_subset
step sanitizer/racecheck 150 compute-sanitizer --tool racecheck --kernel-name regex:gemm_v13_persistent $T --ignored --exact v13_persistent_sanitizer_subset
for kernel in dispatch v13 v13_persistent; do
  args=(); [ $kernel != dispatch ] && args=(--kernel $kernel)
  step probe/$kernel 150 $L shapes --suite $S --precision f32 --reps 20 --max-ms 30 --seed 20261201 "${args[@]}" --report-dir $O/probe/$kernel
done
for kernel in v13 v13_persistent; do
  step ncu/$kernel 120 ncu --kernel-name regex:gemm --launch-skip 6 --launch-count 2 --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy $L shapes --suite docs/results/f32-persistent/ncu-suite.txt --precision f32 --reps 2 --max-ms 1 --seed 1 --kernel $kernel
done
cd $OUT && tar czf $R.tgz $R && rm -rf $R
