#!/usr/bin/env bash
# Device run 3 for docs/results/f32-persistent: v13 and v14 plain-store paths, dispatch's new v13_m64 rule.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run3}
O=$OUT/$R; mkdir -p $O/tests $O/probe
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
start=$(date +%s)
step() { local name=$1 t=$2; shift 2; timeout $t "$@" > $O/$name.log 2>&1; echo "$name rc=$? at $(( $(date +%s) - start ))s" >> $O/summary.txt; }
S=docs/results/f32-persistent/probe-suite.txt
L=.carry/sgemm-ladder
T=.carry/test-api_gpu
step probe/dispatch 60 $L shapes --suite $S --precision f32 --reps 20 --max-ms 30 --seed 20261204 --report-dir $O/probe/dispatch
for kernel in v13 v13_m64_kmajor; do
  step probe/$kernel-nk 60 $L shapes --suite $S --layout nk --precision f32 --reps 20 --max-ms 30 --seed 20261204 --kernel $kernel --report-dir $O/probe/$kernel-nk
done
step probe/tf32-dispatch 60 $L shapes --suite $S --precision tf32 --reps 20 --max-ms 30 --seed 20261204 --report-dir $O/probe/tf32-dispatch
step suite-f32-a 120 $L shapes --precision f32 --reps 20 --max-ms 30 --seed 20261205 --report-dir $O/suite-f32-a
step suite-f32-b 120 $L shapes --precision f32 --reps 20 --max-ms 30 --seed 20261206 --report-dir $O/suite-f32-b
step suite-tf32 120 $L shapes --precision tf32 --reps 20 --max-ms 30 --seed 20261207 --report-dir $O/suite-tf32
for t in v13_m64_f32 v13_m32_f32 beta_zero_never_reads_c nan_inputs_propagate tf32_kernels_never_read_c_at_beta_zero_and_propagate_nan; do
  step tests/$t 60 $T --ignored --exact $t --nocapture
done
cd $OUT && tar czf $R.tgz $R && rm -rf $R
