// A cooperative launch: per-block sums, grid.sync(), then thread 0 of the grid adds them up;
// a grid too large to be resident; and grid.sync() in an ordinary launch (a device error).
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void sums(const int* in, int* partial, int* total, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  extern __shared__ int s[];
  int v = 0;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
  s[block.thread_rank()] = v;
  block.sync();
  if (block.thread_rank() == 0) {
    int acc = 0;
    for (unsigned t = 0; t < block.size(); ++t) acc += s[t];
    partial[blockIdx.x] = acc;
  }
  grid.sync();
  if (grid.thread_rank() == 0) {
    int acc = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) acc += partial[b];
    *total = acc;
  }
}
int main() {
  const int n = 1000, blocks = 4, threads = 64;
  int h[n]; for (int i = 0; i < n; ++i) h[i] = i;
  int *d, *p, *t;
  cudaMalloc(&d, n * sizeof(int)); cudaMalloc(&p, blocks * sizeof(int)); cudaMalloc(&t, sizeof(int));
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  int nn = n;
  void* args[] = {&d, &p, &t, &nn};
  cudaError_t e = cudaLaunchCooperativeKernel((void*)sums, dim3(blocks), dim3(threads), args, threads * sizeof(int), 0);
  int total = -1, part[blocks];
  cudaMemcpy(&total, t, sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(part, p, sizeof part, cudaMemcpyDeviceToHost);
  printf("launch %s total %d parts %d %d %d %d\n", cudaGetErrorName(e), total, part[0], part[1], part[2], part[3]);
  int per_sm = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sums, threads, threads * sizeof(int));
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  e = cudaLaunchCooperativeKernel((void*)sums, dim3(per_sm * sms + 1), dim3(threads), args, threads * sizeof(int), 0);
  printf("too large: %s\n", cudaGetErrorName(e));
  sums<<<2, 32, 32 * sizeof(int)>>>(d, p, t, nn);
  cudaDeviceSynchronize();
  printf("unreachable\n");
}
