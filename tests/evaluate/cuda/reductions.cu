#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__constant__ float scale[2];
__device__ int counter;

template <int BS>
__global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float s[BS];
    int t = threadIdx.x;
    int i = blockIdx.x * BS + t;
    s[t] = i < n ? x[i] * scale[0] : 0.f;
    __syncthreads();
    for (int k = BS / 2; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
    if (t == 0) { atomicAdd(out, s[0]); atomicAdd(&counter, 1); }
}

__global__ void warp_sum(const float* x, float* out, int n) {
    extern __shared__ float partial[];
    float v = 0.f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    if (lane == 0) partial[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < blockDim.x / 32 ? partial[lane] : 0.f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        if (lane == 0) atomicAdd(out, v);
    }
}

__global__ void cg_sum(const float* x, float* out, int n) {
    cg::thread_block b = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(b);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.f;
    for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
    if (tile.thread_rank() == 0) atomicAdd(out, v);
    b.sync();
}

int main() {
    const int n = 10000;
    float* h = new float[n];
    for (int i = 0; i < n; ++i) h[i] = (i % 7) * 0.5f;
    double want = 0; for (int i = 0; i < n; ++i) want += h[i];
    float *x, *o;
    cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&o, 3 * sizeof(float));
    cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(o, 0, 3 * sizeof(float));
    float sc[2] = {1.f, 2.f};
    cudaMemcpyToSymbol(scale, sc, sizeof sc);
    block_sum<256><<<(n + 255) / 256, 256>>>(x, o, n);
    warp_sum<<<8, 128, 4 * sizeof(float)>>>(x, o + 1, n);
    cg_sum<<<(n + 127) / 128, 128>>>(x, o + 2, n);
    cudaError_t e = cudaDeviceSynchronize();
    float r[3]; cudaMemcpy(r, o, sizeof r, cudaMemcpyDeviceToHost);
    int c; cudaMemcpyFromSymbol(&c, counter, sizeof c);
    printf("%s want=%.1f block=%.1f warp=%.1f cg=%.1f blocks=%d\n", cudaGetErrorString(e), want, r[0], r[1], r[2], c);
    return 0;
}
