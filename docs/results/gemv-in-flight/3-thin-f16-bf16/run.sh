#!/usr/bin/env bash
# Device run 3 of docs/results/gemv-in-flight, the same kernels as runs 1 and 2: the thin_m
# sweep (run 1 cut it at 90 s), the portable module's thin kernels (m = 1, n = 2 added), and
# the fp16 and bf16 suites.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run3}
O=$OUT/$R; mkdir -p $O/tests
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
cp "$0" $O/run.sh
start=$(date +%s)
deadline=${DEADLINE:-450}
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
step tests/thin_m_f32 200 $T --ignored --exact thin_m_f32 --nocapture
step tests/thin_kernels_on_the_portable_module 60 $T --ignored --exact thin_kernels_on_the_portable_module --nocapture
step suite-f16 100 $L shapes --precision f16 --reps 20 --max-ms 30 --seed 20261221 --report-dir $O/suite-f16
step suite-bf16 100 $L shapes --precision bf16 --reps 20 --max-ms 30 --seed 20261222 --report-dir $O/suite-bf16
cd $OUT && tar czf $R.tgz $R && rm -rf $R
