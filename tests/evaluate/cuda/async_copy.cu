// Asynchronous copies into shared memory, arrive/wait barriers and pipelines on the CPU backend
// (tests/evaluate/test_cpu_graphs.py checks the printed values against hand computations).
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>
#include <cstdio>
namespace cg = cooperative_groups;

// 1. a two-stage thread-scope pipeline: each thread copies its element of tile t+1 while the
// block sums tile t; out[b] = sum of the block's 4 tiles of 64.
__global__ void tile_sum(const int* in, int* out) {
  __shared__ int tile[2][64];
  __shared__ int acc;
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const int* base = in + blockIdx.x * 256;
  if (threadIdx.x == 0) acc = 0;
  pipe.producer_acquire();
  cuda::memcpy_async(&tile[0][threadIdx.x], &base[threadIdx.x], cuda::aligned_size_t<4>(sizeof(int)), pipe);
  pipe.producer_commit();
  for (int t = 0; t < 4; ++t) {
    if (t + 1 < 4) {
      pipe.producer_acquire();
      cuda::memcpy_async(&tile[(t + 1) % 2][threadIdx.x], &base[(t + 1) * 64 + threadIdx.x], sizeof(int), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    __syncthreads();
    atomicAdd(&acc, tile[t % 2][threadIdx.x]);
    pipe.consumer_release();
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

// 2. a barrier of the first 48 of 64 threads (partial): they exchange values through shared
// memory, the other 16 never touch the barrier; then a group copy with cg::memcpy_async.
__global__ void partial_barrier(const int* in, int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int s[64], copy[64];
  if (threadIdx.x == 0) init(&bar, 48);
  __syncthreads();
  if (threadIdx.x < 48) {
    s[threadIdx.x] = in[threadIdx.x] * 10;
    auto token = bar.arrive();
    bar.wait(std::move(token));
    out[threadIdx.x] = s[47 - threadIdx.x];  // written by another thread before the barrier
    bar.arrive_and_wait();                  // phase 2 of the same barrier
  } else {
    out[threadIdx.x] = -1;
  }
  auto block = cg::this_thread_block();
  cg::memcpy_async(block, copy, in, sizeof(int) * 64);
  cg::wait(block);
  out[64 + threadIdx.x] = copy[63 - threadIdx.x];
}

// 3. producer/consumer through pipeline_shared_state: warp 1 produces 6 stages of 32 values into
// a 2-stage ring, warp 0 consumes; each consumer adds up what it saw in its lane.
__global__ void producer_consumer(const int* in, int* out) {
  __shared__ int ring[2][32];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
  auto block = cg::this_thread_block();
  const bool producer = threadIdx.x >= 32;
  auto pipe = cuda::make_pipeline(block, &state, producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
  const int lane = threadIdx.x % 32;
  int seen = 0;
  for (int stage = 0; stage < 6; ++stage) {
    if (producer) {
      pipe.producer_acquire();
      cuda::memcpy_async(&ring[stage % 2][lane], &in[stage * 32 + lane], sizeof(int), pipe);
      pipe.producer_commit();
    } else {
      pipe.consumer_wait();
      seen += ring[stage % 2][lane];
      pipe.consumer_release();
    }
  }
  if (!producer) out[lane] = seen;
}

// 4. the __pipeline primitives, with zero fill: 8 bytes copied, the last 4 zeroed.
__global__ void primitives(const int* in, int* out) {
  __shared__ int s[2 * 64];
  __pipeline_memcpy_async(&s[2 * threadIdx.x], &in[2 * threadIdx.x], 8, 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  out[threadIdx.x] = s[2 * threadIdx.x] + 1000 * s[2 * threadIdx.x + 1];
}

// 5. a barrier expecting more arrivals than ever come: a deadlock, reported (not a hang).
__global__ void never_completes(int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, 33);
  __syncthreads();
  bar.arrive_and_wait();
  out[threadIdx.x] = 1;
}

int main(int argc, char** argv) {
  int h[512], *in, *out, r[256];
  for (int i = 0; i < 512; ++i) h[i] = i;
  cudaMalloc(&in, sizeof h);
  cudaMalloc(&out, sizeof r);
  cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
  if (argc > 1) {
    never_completes<<<1, 32>>>(out);
    cudaDeviceSynchronize();
    return 0;
  }
  tile_sum<<<2, 64>>>(in, out);
  cudaMemcpy(r, out, 2 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("tile_sum %d %d\n", r[0], r[1]);
  partial_barrier<<<1, 64>>>(in, out);
  cudaMemcpy(r, out, 128 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("partial %d %d %d %d copy %d %d\n", r[0], r[47], r[48], r[63], r[64], r[127]);
  producer_consumer<<<1, 64>>>(in, out);
  cudaMemcpy(r, out, 32 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("pipeline %d %d\n", r[0], r[31]);
  primitives<<<1, 64>>>(in, out);
  cudaMemcpy(r, out, 64 * sizeof(int), cudaMemcpyDeviceToHost);
  printf("primitives %d %d %s\n", r[0], r[63], cudaGetErrorString(cudaGetLastError()));
  return 0;
}
