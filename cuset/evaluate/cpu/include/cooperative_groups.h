// cooperative_groups.h for the CuSeT CPU emulator: the common subset of CUDA's cooperative
// groups (thread_block, tiled_partition with shuffles, votes and reduce). Grid groups need a
// cooperative launch and are refused by the translator.
#pragma once

namespace cooperative_groups {

class thread_block {
 public:
  void sync(const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { __syncthreads(f, l); }
  unsigned thread_rank() const { return cuset::cur_thread->linear; }
  unsigned size() const { return cuset::cur_block->nthreads; }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block& g, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { g.sync(f, l); }

template <unsigned N>
class thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tiled_partition size must be a power of two up to 32");

 public:
  static constexpr unsigned num = N;
  unsigned tile_mask() const {
    unsigned lane = cuset::cur_thread->lane;
    unsigned base = lane & ~(N - 1);
    return (N == 32 ? 0xffffffffu : ((1u << N) - 1)) << base;
  }
  void sync(const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { __syncwarp(tile_mask(), f, l); }
  unsigned thread_rank() const { return cuset::cur_thread->linear % N; }
  unsigned size() const { return N; }
  unsigned num_threads() const { return N; }
  unsigned meta_group_rank() const { return cuset::cur_thread->linear / N; }
  unsigned meta_group_size() const { return (cuset::cur_block->nthreads + N - 1) / N; }
  template <class T> T shfl(T v, int src, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return __shfl_sync(tile_mask(), v, src, N, f, l); }
  template <class T> T shfl_down(T v, unsigned d, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return __shfl_down_sync(tile_mask(), v, d, N, f, l); }
  template <class T> T shfl_up(T v, unsigned d, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return __shfl_up_sync(tile_mask(), v, d, N, f, l); }
  template <class T> T shfl_xor(T v, unsigned m, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return __shfl_xor_sync(tile_mask(), v, (int)m, N, f, l); }
  unsigned ballot(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    unsigned lane = cuset::cur_thread->lane;
    return (__ballot_sync(tile_mask(), p, f, l) >> (lane & ~(N - 1))) & (N == 32 ? 0xffffffffu : ((1u << N) - 1));
  }
  int any(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return ballot(p, f, l) != 0; }
  int all(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return ballot(p, f, l) == (N == 32 ? 0xffffffffu : ((1u << N) - 1)); }
};

template <unsigned N, class Parent>
thread_block_tile<N> tiled_partition(const Parent&) { return thread_block_tile<N>(); }

template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return a < b ? a : b; } };
template <class T> struct greater { T operator()(T a, T b) const { return a > b ? a : b; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

// Butterfly reduction over the tile: every lane gets the result, as in CUDA.
template <unsigned N, class T, class Op>
T reduce(const thread_block_tile<N>& g, T v, Op op, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  for (unsigned o = N / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, o, f, l));
  return v;
}

}  // namespace cooperative_groups
