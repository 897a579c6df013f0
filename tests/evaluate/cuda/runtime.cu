// Runtime API, launch validation, templates, dim3 grids, vector and half types, math intrinsics.
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <typename T, int UNROLL>
__global__ void scale2d(T* m, int rows, int cols, T f) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    #pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (r < rows && c < cols) m[r * cols + c] = m[r * cols + c] * f;
}
__global__ void vec_half(const float4* in, __half* hout, __nv_bfloat16* bout, float* fout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = in[i];
    __half h = __hadd(__float2half(v.x), __float2half(v.y));
    hout[i] = __hmul(h, __float2half(2.0f));
    bout[i] = __float2bfloat16(v.z + v.w);
    fout[i] = __expf(0.f) + rsqrtf(4.f) + __saturatef(3.f) + fmaxf(v.x, v.y) + min(2, 3) + __popc(0xF) + __int_as_float(__float_as_int(1.5f));
}
__global__ void big_smem(float* out) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}
int main() {
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
    int dev_count; cudaGetDeviceCount(&dev_count);
    printf("device=%s count=%d warp=%d maxthreads=%d smem=%zu cc=%d.%d\n", p.name, dev_count, p.warpSize, p.maxThreadsPerBlock, p.sharedMemPerBlock, p.major, p.minor);
    const int R = 5, C = 7;
    float h[R * C]; for (int i = 0; i < R * C; ++i) h[i] = i;
    float* m; cudaMalloc(&m, sizeof h);
    cudaStream_t s; cudaStreamCreate(&s);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventRecord(e0, s);
    cudaMemcpyAsync(m, h, sizeof h, cudaMemcpyHostToDevice, s);
    dim3 block(4, 2), grid((C + 3) / 4, (R + 1) / 2);
    scale2d<float, 2><<<grid, block, 0, s>>>(m, R, C, 3.0f);
    cudaEventRecord(e1, s);
    cudaStreamSynchronize(s);
    float ms = -1; cudaEventElapsedTime(&ms, e0, e1);
    cudaMemcpy(h, m, sizeof h, cudaMemcpyDeviceToHost);
    printf("scaled[34]=%.0f scaled[8]=%.0f elapsed_ok=%d\n", h[34], h[8], ms >= 0);
    float4 hv[3] = {{1, 2, 3, 4}, {0.5f, 0.25f, 1, 1}, {-1, 1, 0, 0}};
    float4* dv; __half* dh; __nv_bfloat16* db; float* df;
    cudaMalloc(&dv, sizeof hv); cudaMalloc(&dh, 3 * sizeof(__half)); cudaMalloc(&db, 3 * sizeof(__nv_bfloat16)); cudaMalloc(&df, 3 * sizeof(float));
    cudaMemcpy(dv, hv, sizeof hv, cudaMemcpyHostToDevice);
    vec_half<<<1, 32>>>(dv, dh, db, df, 3);
    __half oh[3]; __nv_bfloat16 ob[3]; float of[3];
    cudaMemcpy(oh, dh, sizeof oh, cudaMemcpyDeviceToHost); cudaMemcpy(ob, db, sizeof ob, cudaMemcpyDeviceToHost); cudaMemcpy(of, df, sizeof of, cudaMemcpyDeviceToHost);
    printf("half=%.2f,%.2f bf16=%.1f intrinsics=%.2f\n", __half2float(oh[0]), __half2float(oh[1]), __bfloat162float(ob[0]), of[0]);
    printf("ok_so_far=%s\n", cudaGetErrorName(cudaGetLastError()));
    scale2d<float, 1><<<1, 1025>>>(m, R, C, 1.f);
    printf("1025 threads: %s\n", cudaGetErrorName(cudaGetLastError()));
    scale2d<float, 1><<<0, 32>>>(m, R, C, 1.f);
    printf("zero grid: %s\n", cudaGetErrorName(cudaGetLastError()));
    scale2d<float, 1><<<dim3(1, 65536), 32>>>(m, R, C, 1.f);
    printf("grid y 65536: %s\n", cudaGetErrorName(cudaGetLastError()));
    float* out; cudaMalloc(&out, 256 * sizeof(float));
    big_smem<<<1, 256, 64 * 1024>>>(out);
    printf("64 KiB dynamic smem: %s\n", cudaGetErrorName(cudaGetLastError()));
    cudaFuncSetAttribute(big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    big_smem<<<1, 256, 64 * 1024>>>(out);
    float o[256]; cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
    printf("after opt-in: %s out[0]=%.0f\n", cudaGetErrorName(cudaGetLastError()), o[0]);
    printf("peek after get: %s\n", cudaGetErrorName(cudaPeekAtLastError()));
    cudaFree(m); cudaStreamDestroy(s); cudaEventDestroy(e0); cudaEventDestroy(e1);
    return 0;
}
