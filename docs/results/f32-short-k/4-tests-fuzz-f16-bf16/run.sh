#!/usr/bin/env bash
# Device run 4 for docs/results/f32-persistent: the rest of the tests, the fuzzer and compute-sanitizer.
set -u
cd "$(dirname "$0")/.."
tar xJf .carry/bundle.tar.xz -C .carry
export RUST_GEMM_CUBIN_DIR=$PWD/.carry/cubin
R=${RUN:-run4}
O=$OUT/$R; mkdir -p $O/tests $O/sanitizer
nvidia-smi > $O/gpu.txt
cp .carry/ptx.sha256 $O/
start=$(date +%s)
step() { local name=$1 t=$2; shift 2; timeout $t "$@" > $O/$name.log 2>&1; echo "$name rc=$? at $(( $(date +%s) - start ))s" >> $O/summary.txt; }
T=.carry/test-api_gpu
for t in v13_k_major_f32 split_k_f32 f32_exact f32_tf32; do
  step tests/$t 120 $T --ignored --exact $t --nocapture
done
step tests/fuzz 120 env FUZZ_CASES=3000 .carry/test-api_fuzz_gpu --ignored --nocapture
step sanitizer/memcheck-short-m 60 compute-sanitizer --tool memcheck --kernel-name kns=gemm_v1 $T --ignored --exact v13_short_m_sanitizer_subset
step sanitizer/memcheck-k-major 60 compute-sanitizer --tool memcheck --kernel-name kns=gemm_v1 $T --ignored --exact k_major_sanitizer_subset
step sanitizer/memcheck-fuzz 150 env FUZZ_CASES=300 compute-sanitizer --tool memcheck .carry/test-api_fuzz_gpu --ignored --nocapture
L=.carry/sgemm-ladder
step suite-f16 120 $L shapes --precision f16 --reps 20 --max-ms 30 --seed 20261208 --report-dir $O/suite-f16
step suite-bf16 120 $L shapes --precision bf16 --reps 20 --max-ms 30 --seed 20261209 --report-dir $O/suite-bf16
cd $OUT && tar czf $R.tgz $R && rm -rf $R
