#!/usr/bin/env bash
# Device run 4 of docs/results/gemv-in-flight, the same kernels as runs 1-3: the portable
# module's thin kernels (run 3 cut it at 60 s while the driver compiled that module; now its
# sm_90 cubin travels too), and the fp16 16-row [k, n] layers through the kernels that could
# serve them (run 3's 16x4096x4096 kn fell below 0.75 on v18 in fp16 and bf16).
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
cp .carry/cubin80/*.cubin .carry/cubin/
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run4}
O=$OUT/$R; mkdir -p $O/tests $O/probe
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
cp "$0" $O/run.sh
start=$(date +%s)
deadline=${DEADLINE:-200}
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
step tests/thin_kernels_on_the_portable_module 60 $T --ignored --exact thin_kernels_on_the_portable_module --nocapture
F=$(for nk in 4096x4096 11008x4096 4096x11008 14336x4096 4096x14336 8192x8192 28672x8192 8192x28672 57344x8192; do echo -n "16x$nk,"; done | sed 's/,$//')
C="shapes --precision f16 --layout kn --filter $F --reps 20 --max-ms 30 --seed 20261223"
step probe/m16-auto 20 $L $C --report-dir $O/probe/m16-auto
for k in v18_m64 v18_n128 v15; do
  step probe/m16-$k 20 $L $C --kernel $k --report-dir $O/probe/m16-$k
done
for s in 2 4; do
  step probe/m16-v18-split$s 20 $L $C --kernel v18 --split-k $s --report-dir $O/probe/m16-v18-split$s
done
step probe/m16-v18-stream-k 20 $L $C --kernel v18 --stream-k true --report-dir $O/probe/m16-v18-stream-k
cd $OUT && tar czf $R.tgz $R && rm -rf $R
