// Atomics from many blocks at once (blocks run in parallel on the CPU): results must be exact.
#include <cstdio>
struct Acc { int add, sub, mx, mn, andv, orv, xorv, exch; unsigned inc, dec; unsigned long long big; float f; double d; int cas_hits; };
__global__ void hammer(Acc* a, int* shared_count) {
    __shared__ int local;
    if (threadIdx.x == 0) local = 0;
    __syncthreads();
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&a->add, 1);
    atomicSub(&a->sub, 2);
    atomicMax(&a->mx, g);
    atomicMin(&a->mn, -g);
    atomicAnd(&a->andv, ~(1 << (g % 8)));
    atomicOr(&a->orv, 1 << (g % 16));
    atomicXor(&a->xorv, 1);
    atomicExch(&a->exch, 7);
    atomicInc(&a->inc, 9);
    atomicDec(&a->dec, 1000000);
    atomicAdd(&a->big, 1ull << 33);
    atomicAdd(&a->f, 0.5f);
    atomicAdd(&a->d, 0.25);
    if (atomicCAS(&a->cas_hits, 0, 1) == 0) atomicAdd(&a->cas_hits, 10);
    atomicAdd(&local, 1);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(shared_count, local);
}
int main() {
    Acc h = {0, 0, -1, 1, -1, 0, 0, 0, 0, 0, 0, 0.f, 0.0, 0};
    Acc* d; int* c;
    cudaMalloc(&d, sizeof(Acc)); cudaMalloc(&c, sizeof(int));
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    cudaMemset(c, 0, sizeof(int));
    hammer<<<64, 128>>>(d, c);
    cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    int count; cudaMemcpy(&count, c, sizeof count, cudaMemcpyDeviceToHost);
    printf("add=%d sub=%d max=%d min=%d and=%d or=%d xor=%d exch=%d inc=%u dec=%u big=%llu f=%.1f d=%.2f cas=%d shared=%d\n",
           h.add, h.sub, h.mx, h.mn, h.andv, h.orv, h.xorv, h.exch, h.inc, h.dec, h.big, h.f, h.d, h.cas_hits, count);
    return 0;
}
