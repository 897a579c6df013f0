// Cooperative groups as CUDA samples use them: tiles of 16, 32 and 64 threads, the type-erased
// thread_group, coalesced and labeled groups, reduce and scans with cg ops, grid ranks. One
// block of 128 threads, v = thread rank; expected values in test_cpu_conformance.py.
#include <cstdio>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

// sum over any group through shared memory and g.sync() (the sample's own pattern)
__device__ int group_sum(cg::thread_group g, int* x, int val) {
  int lane = g.thread_rank();
  for (int i = g.size() / 2; i > 0; i /= 2) {
    x[lane] = val;
    g.sync();
    if (lane < i) val += x[lane + i];
    g.sync();
  }
  return g.thread_rank() == 0 ? val : -1;
}

__global__ void groups(int* out, int scale = 2, int* unused = NULL) {
  __shared__ int work[128];
  __shared__ cg::block_tile_memory<128> scratch;
  cg::thread_block cta = cg::this_thread_block(scratch);
  int v = cta.thread_rank();
  int block = group_sum(cta, work, v);
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(cta);
  int tile16 = group_sum(t16, work + (v - t16.thread_rank()), v);
  cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(cta);
  int red = cg::reduce(t32, v, cg::plus<int>());
  int mx = cg::reduce(t32, v, cg::greater<int>());
  int mn = cg::reduce(t32, v, cg::less<int>());
  int inc = cg::inclusive_scan(t32, v);
  int exc = cg::exclusive_scan(t32, 1, cg::plus<int>());
  cg::thread_block_tile<64> t64 = cg::tiled_partition<64>(cta);
  int red64 = cg::reduce(t64, v, cg::plus<int>());
  int all = cg::reduce(cta, 1, cg::plus<int>());
  int shfl = t16.shfl_down(v, 1);
  int coalesced = -1, crank = -1;
  if (v % 4 == 1) {
    cg::coalesced_group odd = cg::coalesced_threads();
    coalesced = cg::reduce(odd, v, cg::plus<int>());
    crank = odd.thread_rank() * 100 + odd.size();
  }
  cg::coalesced_group active = cg::coalesced_threads();
  auto label = cg::labeled_partition(active, v % 3);
  int labeled = cg::reduce(label, v, cg::greater<int>());
  auto half = cg::binary_partition(t32, v % 2 == 0);
  int evens = cg::inclusive_scan(half, 1);
  cg::grid_group grid = cg::this_grid();
  int* o = out + 16 * v;
  int r[16] = {block, tile16, red, mx, mn, inc, exc, red64, all, shfl, coalesced, crank, labeled, evens,
               (int)grid.thread_rank() * scale, (int)t64.meta_group_rank() + (unused == NULL)};
  for (int k = 0; k < 16; ++k) o[k] = r[k];
}

int main() {
  int* d;
  cudaMalloc(&d, 128 * 16 * sizeof(int));
  groups<<<1, 128>>>(d);
  int h[128 * 16];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int t : {0, 5, 37, 70}) {
    printf("t%d:", t);
    for (int k = 0; k < 16; ++k) printf(" %d", h[16 * t + k]);
    printf("\n");
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
