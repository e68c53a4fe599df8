// The ceiling of `mma.sync.m16n8k16.f32.f16.f16.f32` on this GPU, with nothing else in the
// loop: every warp issues CHAINS independent accumulations back to back from registers (no
// shared memory, no loads). A throwaway measurement probe for docs/ladder.md, not part of the
// library (the library is pure Rust); built and run on the GPU machine with
//   nvcc -O3 -arch=sm_90a -o probe mma_sync_probe.cu && ./probe
#include <cstdio>
#include <cuda_runtime.h>

template <int CHAINS>
__global__ void probe(float *out, int iters) {
    float acc[CHAINS][4] = {};
    unsigned a0 = threadIdx.x * 0x00010001u, a1 = a0 ^ 0x3c003c00u, a2 = a0 + 1, a3 = a1 + 1;
    unsigned b0 = a0 ^ 0x1234u, b1 = a1 ^ 0x4321u;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) {
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
    }
    float s = 0;
    for (int c = 0; c < CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int CHAINS>
void run(int warps_per_block, int blocks_per_sm, int sms) {
    int blocks = sms * blocks_per_sm, threads = warps_per_block * 32, iters = 20000;
    float *out;
    cudaMalloc(&out, sizeof(float) * blocks * threads);
    probe<CHAINS><<<blocks, threads>>>(out, 100);  // warm-up
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    probe<CHAINS><<<blocks, threads>>>(out, iters);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);
    double flops = 2.0 * 16 * 8 * 16 * CHAINS * (double)iters * blocks * warps_per_block;
    printf("chains %2d, %2d warps/block, %d blocks/SM: %7.1f TFLOP/s\n", CHAINS,
           warps_per_block, blocks_per_sm, flops / (ms * 1e-3) / 1e12);
    cudaFree(out);
}

int main() {
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    run<4>(4, 1, sms);
    run<8>(4, 1, sms);
    run<8>(8, 1, sms);
    run<8>(8, 2, sms);
    run<16>(8, 1, sms);
    run<16>(8, 2, sms);
    run<32>(8, 1, sms);
    run<8>(16, 2, sms);
    return 0;
}
