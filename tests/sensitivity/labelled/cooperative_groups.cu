// Cooperative-groups reduction: tile shuffles, block sync, then a grid-wide sync.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void cg_sum(const float* in, float* block_sums, float* total, int n) {
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    __shared__ float warp_sums[32];

    float v = 0.0f;
    for (int i = grid.thread_rank(); i < n; i += grid.size()) {
        v += in[i];
    }
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) {
        v += warp.shfl_down(v, offset);
    }
    if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
    block.sync();

    if (block.thread_rank() == 0) {
        float s = 0.0f;
        for (int w = 0; w < warp.meta_group_size(); ++w) s += warp_sums[w];
        block_sums[blockIdx.x] = s;
    }
    grid.sync();
    if (grid.thread_rank() == 0) {
        float t = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) t += block_sums[b];
        *total = t;
    }
}
