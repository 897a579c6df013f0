// Warp collectives: every shuffle flavour (with width), votes, __activemask, __reduce_*_sync.
#include <cstdio>
__global__ void warp_ops(int* out) {
    int lane = threadIdx.x % 32;
    int w = threadIdx.x / 32;
    int* o = out + w * 16;
    int v = lane * 10;
    int a = __shfl_sync(0xffffffff, v, 3);             // everyone gets lane 3
    int b = __shfl_sync(0xffffffff, v, 1, 8);          // lane 1 of each 8-lane segment
    int c = __shfl_up_sync(0xffffffff, v, 2);          // lane-2, lanes 0,1 keep their own
    int d = __shfl_down_sync(0xffffffff, v, 4, 16);    // lane+4 inside 16-lane halves
    int e = __shfl_xor_sync(0xffffffff, v, 1);         // pair swap
    unsigned ballot = __ballot_sync(0xffffffff, lane % 3 == 0);
    int any = __any_sync(0xffffffff, lane == 31);
    int all = __all_sync(0xffffffff, lane < 31);
    int sum = __reduce_add_sync(0xffffffff, lane);
    int mn = __reduce_min_sync(0xffffffff, 100 - lane);
    int mx = __reduce_max_sync(0xffffffff, lane - 5);
    __syncwarp();
    unsigned active = 0;
    if (lane < 20) active = __activemask();
    if (lane == 9) { o[0] = a; o[1] = b; o[2] = c; o[3] = d; o[4] = e; o[10] = active == 0xffffffffu; }
    if (lane == 0) { o[5] = (int)ballot; o[6] = any; o[7] = all; o[8] = sum; o[9] = mn; o[11] = mx; o[12] = c; }
    if (lane == 13) { o[13] = d; o[14] = b; }
    if (lane == 30) { o[15] = e; }
}
int main() {
    int* d; cudaMalloc(&d, 2 * 16 * sizeof(int));
    warp_ops<<<1, 64>>>(d);
    int h[32]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int w = 0; w < 2; ++w) {
        int* o = h + w * 16;
        printf("shfl=%d width8=%d up=%d down16=%d xor=%d ballot=%08x any=%d all=%d sum=%d min=%d max=%d up0=%d down13=%d width8_13=%d xor30=%d\n",
               o[0], o[1], o[2], o[3], o[4], (unsigned)o[5], o[6], o[7], o[8], o[9], o[11], o[12], o[13], o[14], o[15]);
    }
    return 0;
}
