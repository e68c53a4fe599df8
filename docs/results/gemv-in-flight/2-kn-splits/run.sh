#!/usr/bin/env bash
# Device run 2 of docs/results/gemv-in-flight: thin_m with B [k, n] at the m = 1 and m = 8 LLM
# layers, k forced into 1, 2, 3, 4, 6 slices and dispatch's own choice (f32 and TF32 on the
# column-slices body, fp16 on thin_m_mma), to choose a last-wave-aware split from measurements.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run2}
O=$OUT/$R; mkdir -p $O/probe
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
cp "$0" $O/run.sh
start=$(date +%s)
deadline=${DEADLINE:-420}
step() {
  local name=$1 t=$2; shift 2
  local left=$(( deadline - ($(date +%s) - start) ))
  if (( left < 10 )); then echo "$name skipped (deadline) at $(( $(date +%s) - start ))s" >> $O/summary.txt; return; fi
  (( t > left )) && t=$left
  timeout $t "$@" > $O/$name.log 2>&1
  echo "$name rc=$? at $(( $(date +%s) - start ))s" >> $O/summary.txt
}
L=.carry/sgemm-ladder
F=$(for nk in 4096x4096 11008x4096 4096x11008 14336x4096 4096x14336 8192x8192 28672x8192 8192x28672 57344x8192; do echo -n "1x$nk,8x$nk,"; done | sed 's/,$//')
C="shapes --layout kn --filter $F --reps 20 --max-ms 30"
step probe/f32-auto 40 $L $C --precision f32,tf32 --seed 20261220 --report-dir $O/probe/f32-auto
step probe/f16-auto 30 $L $C --precision f16 --seed 20261220 --report-dir $O/probe/f16-auto
for s in 1 2 3 4 6; do
  step probe/f32-split$s 40 $L $C --precision f32,tf32 --kernel thin_m --split-k $s --seed 20261220 --report-dir $O/probe/f32-split$s
  step probe/f16-split$s 30 $L $C --precision f16 --kernel thin_m_mma --split-k $s --seed 20261220 --report-dir $O/probe/f16-split$s
done
cd $OUT && tar czf $R.tgz $R && rm -rf $R
