// cooperative_groups.h for the CuSeT CPU emulator: CUDA's cooperative groups as device code
// uses them, on the emulator's fibers.
//
//   thread_block            this_thread_block(); sync, thread_rank, size, group_index, ...
//   thread_block_tile<N>    tiled_partition<N>(parent): N <= 32 works through warp collectives
//                           (shfl*, ballot, any, all, match_*); N = 64..1024 (block_tile_memory
//                           in CUDA) syncs through a barrier of the tile's threads only
//   coalesced_group         coalesced_threads(): the lanes of the warp that reach the same call
//                           together (the emulator releases it once every other live lane of
//                           the warp is blocked elsewhere); labeled_partition, binary_partition
//   thread_group            the type-erased group any of the above converts to
//   grid_group              this_grid(): ranks and sizes; sync() is a barrier over every thread
//                           of every block, valid in a cooperative launch (cuset_cooperative.h);
//                           elsewhere is_valid() is false and sync() is a device error
//   reduce, inclusive_scan, exclusive_scan over any group, with plus/less/greater/bit_* ops
//
// Results are computed in rank order, so they do not depend on the thread schedule.
#pragma once

namespace cooperative_groups {

namespace details {
inline unsigned lane() { return cuset::cur_thread->lane; }
inline unsigned linear() { return cuset::cur_thread->linear; }
inline unsigned lanemask_lt() { return (1u << lane()) - 1; }
// The lane holding rank `r` of a warp-level group with lanes `mask`.
inline unsigned lane_of_rank(unsigned mask, unsigned r) {
  for (unsigned l = 0; l < 32; ++l)
    if ((mask >> l & 1) && r-- == 0) return l;
  return lane();
}
inline unsigned compress(unsigned bits, unsigned mask) {  // bits of `bits` at mask's lanes, by rank
  unsigned out = 0, k = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (mask >> l & 1) out |= ((bits >> l) & 1u) << k++;
  return out;
}
}  // namespace details

// How a group is made up: the whole block, a run of `size` consecutive threads (a tile), or an
// arbitrary set of lanes of one warp (coalesced).
enum class group_kind : unsigned char { block, tile, coalesced };

class thread_group {
 public:
  group_kind kind;
  unsigned tile_size;  // tile: threads per tile
  unsigned mask;       // tile <= 32 or coalesced: the warp lanes in the group

  thread_group(group_kind k, unsigned n, unsigned m) : kind(k), tile_size(n), mask(m) {}
  unsigned long long thread_rank() const {
    switch (kind) {
      case group_kind::block: return details::linear();
      case group_kind::tile: return details::linear() % tile_size;
      default: return (unsigned)__builtin_popcount(mask & details::lanemask_lt());
    }
  }
  unsigned long long size() const {
    switch (kind) {
      case group_kind::block: return cuset::cur_block->nthreads;
      case group_kind::tile: return tile_size;
      default: return (unsigned)__builtin_popcount(mask);
    }
  }
  unsigned long long num_threads() const { return size(); }
  void sync(const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    if (kind == group_kind::block) __syncthreads(f, l);
    else if (kind == group_kind::tile && tile_size > 32) cuset::tile_barrier(details::linear() / tile_size * tile_size, tile_size, f, l);
    else __syncwarp(mask, f, l);
  }
};

class thread_block : public thread_group {
 public:
  thread_block() : thread_group(group_kind::block, 0, 0xffffffffu) {}
  unsigned thread_rank() const { return details::linear(); }
  unsigned size() const { return cuset::cur_block->nthreads; }
  unsigned num_threads() const { return size(); }
  void sync(const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { __syncthreads(f, l); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

// Scratch for tiles of more than 32 threads in CUDA; the emulator needs none.
template <unsigned MaxBlockSize = 1024, unsigned TileCommSize = 0>
struct block_tile_memory {
  alignas(16) unsigned char unused[16];
};

inline thread_block this_thread_block() { return thread_block(); }
template <unsigned N, unsigned M>
inline thread_block this_thread_block(block_tile_memory<N, M>&) { return thread_block(); }

template <unsigned N, class Parent = void>
class thread_block_tile : public thread_group {
  static_assert(N >= 1 && N <= 1024 && (N & (N - 1)) == 0, "tiled_partition size must be a power of two up to 1024");
  static constexpr unsigned full = N >= 32 ? 0xffffffffu : ((1u << N) - 1);

 public:
  static constexpr unsigned num = N;
  static constexpr unsigned long long num_threads_value = N;
  thread_block_tile() : thread_group(group_kind::tile, N, N >= 32 ? 0xffffffffu : full << (details::lane() & ~(N - 1))) {}
  template <class P>
  thread_block_tile(const thread_block_tile<N, P>&) : thread_block_tile() {}
  unsigned tile_mask() const { return mask; }
  void sync(const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    if constexpr (N > 32) cuset::tile_barrier(details::linear() / N * N, N, f, l);
    else __syncwarp(mask, f, l);
  }
  unsigned thread_rank() const { return details::linear() % N; }
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  unsigned meta_group_rank() const { return details::linear() / N; }
  unsigned meta_group_size() const { return (cuset::cur_block->nthreads + N - 1) / N; }
  template <class T> T shfl(T v, int src, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    static_assert(N <= 32, "shfl on a tile of more than 32 threads");
    return __shfl_sync(mask, v, src, N, f, l);
  }
  template <class T> T shfl_down(T v, unsigned d, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    static_assert(N <= 32, "shfl_down on a tile of more than 32 threads");
    return __shfl_down_sync(mask, v, d, N, f, l);
  }
  template <class T> T shfl_up(T v, unsigned d, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    static_assert(N <= 32, "shfl_up on a tile of more than 32 threads");
    return __shfl_up_sync(mask, v, d, N, f, l);
  }
  template <class T> T shfl_xor(T v, unsigned m, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    static_assert(N <= 32, "shfl_xor on a tile of more than 32 threads");
    return __shfl_xor_sync(mask, v, (int)m, N, f, l);
  }
  unsigned ballot(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    static_assert(N <= 32, "ballot on a tile of more than 32 threads");
    return (__ballot_sync(mask, p, f, l) >> (details::lane() & ~(N - 1))) & full;
  }
  int any(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return ballot(p, f, l) != 0; }
  int all(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return ballot(p, f, l) == full; }
  template <class T> unsigned match_any(T v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    return (__match_any_sync(mask, v, f, l) >> (details::lane() & ~(N - 1))) & full;
  }
  template <class T> unsigned match_all(T v, int& pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    unsigned m = match_any(v, f, l);
    pred = m == full;
    return pred ? full : 0;
  }
};

template <unsigned N, class Parent>
thread_block_tile<N, Parent> tiled_partition(const Parent&) { return thread_block_tile<N, Parent>(); }

// tiled_partition(parent, n): the run-time form, a thread_group.
inline thread_group tiled_partition(const thread_group& parent, unsigned n) {
  if (n == 0 || n > 1024 || (n & (n - 1))) cuset::fault("tiled_partition(group, " + std::to_string(n) + "): the size must be a power of two up to 1024");
  (void)parent;
  unsigned m = n >= 32 ? 0xffffffffu : ((1u << n) - 1) << (details::lane() & ~(n - 1));
  return thread_group(group_kind::tile, n, m);
}

class coalesced_group : public thread_group {
 public:
  explicit coalesced_group(unsigned m) : thread_group(group_kind::coalesced, 0, m) {}
  unsigned thread_rank() const { return (unsigned)__builtin_popcount(mask & details::lanemask_lt()); }
  unsigned size() const { return (unsigned)__builtin_popcount(mask); }
  unsigned num_threads() const { return size(); }
  unsigned meta_group_rank() const { return 0; }
  unsigned meta_group_size() const { return 1; }
  void sync(const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { __syncwarp(mask, f, l); }
  template <class T> T shfl(T v, unsigned rank, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    return __shfl_sync(mask, v, (int)details::lane_of_rank(mask, rank % size()), 32, f, l);
  }
  template <class T> T shfl_down(T v, unsigned d, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    unsigned r = thread_rank() + d;
    return __shfl_sync(mask, v, (int)(r < size() ? details::lane_of_rank(mask, r) : details::lane()), 32, f, l);
  }
  template <class T> T shfl_up(T v, unsigned d, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    unsigned r = thread_rank();
    return __shfl_sync(mask, v, (int)(r >= d ? details::lane_of_rank(mask, r - d) : details::lane()), 32, f, l);
  }
  unsigned ballot(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    return details::compress(__ballot_sync(mask, p, f, l), mask);
  }
  int any(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return ballot(p, f, l) != 0; }
  int all(int p, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { return ballot(p, f, l) == (size() >= 32 ? 0xffffffffu : (1u << size()) - 1); }
  template <class T> unsigned match_any(T v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) const {
    return details::compress(__match_any_sync(mask, v, f, l), mask);
  }
};

inline coalesced_group coalesced_threads(const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return coalesced_group(cuset::coalesce(f, l)); }

template <class Group, class Label>
coalesced_group labeled_partition(const Group& g, Label label, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return coalesced_group(__match_any_sync(g.mask, label, f, l) & g.mask);
}
template <class Group>
coalesced_group binary_partition(const Group& g, bool pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return labeled_partition(g, (int)pred, f, l);
}

class grid_group {
 public:
  unsigned long long thread_rank() const { return block_rank() * (unsigned long long)cuset::cur_block->nthreads + details::linear(); }
  unsigned long long size() const { return num_blocks() * (unsigned long long)cuset::cur_block->nthreads; }
  unsigned long long num_threads() const { return size(); }
  unsigned long long block_rank() const { return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z); }
  unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
  dim3 group_dim() const { return gridDim; }
  dim3 dim_blocks() const { return gridDim; }
  dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  bool is_valid() const { return cuset_grid_valid(); }
  void sync(const char* f = __builtin_FILE(), int l = __builtin_LINE()) const { cuset_grid_sync(f, l); }
};
inline grid_group this_grid() { return grid_group(); }

template <class Group>
void sync(const Group& g, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { g.sync(f, l); }
inline void sync(const grid_group& g, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { g.sync(f, l); }

template <class T = void> struct plus { T operator()(const T& a, const T& b) const { return a + b; } };
template <class T = void> struct less { T operator()(const T& a, const T& b) const { return a < b ? a : b; } };
template <class T = void> struct greater { T operator()(const T& a, const T& b) const { return a > b ? a : b; } };
template <class T = void> struct bit_and { T operator()(const T& a, const T& b) const { return a & b; } };
template <class T = void> struct bit_or { T operator()(const T& a, const T& b) const { return a | b; } };
template <class T = void> struct bit_xor { T operator()(const T& a, const T& b) const { return a ^ b; } };
template <> struct plus<void> { template <class T> T operator()(const T& a, const T& b) const { return a + b; } };
template <> struct less<void> { template <class T> T operator()(const T& a, const T& b) const { return a < b ? a : b; } };
template <> struct greater<void> { template <class T> T operator()(const T& a, const T& b) const { return a > b ? a : b; } };

namespace details {
// Every member's value, in rank order, into `vals` (each member gets the whole array): through
// shuffles for a warp-level group, through the block's scratch and a group barrier otherwise.
template <class T>
unsigned gather(const thread_group& g, T v, T* vals, const char* f, int l) {
  static_assert(sizeof(T) <= 16, "cooperative_groups collective on a type larger than 16 bytes");
  unsigned n = (unsigned)g.size();
  if (g.kind == group_kind::coalesced || (g.kind == group_kind::tile && g.tile_size <= 32)) {
    for (unsigned r = 0; r < n; ++r) vals[r] = __shfl_sync(g.mask, v, (int)lane_of_rank(g.mask, r), 32, f, l);
    return n;
  }
  unsigned base = g.kind == group_kind::block ? 0 : linear() / n * n;
  T* slots = reinterpret_cast<T*>(cuset::cur_block->scratch.data());
  slots[linear()] = v;
  g.sync(f, l);
  for (unsigned r = 0; r < n; ++r) vals[r] = slots[base + r];
  g.sync(f, l);
  return n;
}
}  // namespace details

template <class Group, class T, class Op>
T reduce(const Group& g, T v, Op op, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  std::vector<T> vals(g.size());
  unsigned n = details::gather<T>(g, v, vals.data(), f, l);
  T acc = vals[0];
  for (unsigned r = 1; r < n; ++r) acc = op(acc, vals[r]);
  return acc;
}

template <class Group, class T, class Op = plus<T>>
T inclusive_scan(const Group& g, T v, Op op = Op(), const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  std::vector<T> vals(g.size());
  details::gather<T>(g, v, vals.data(), f, l);
  unsigned me = (unsigned)g.thread_rank();
  T acc = vals[0];
  for (unsigned r = 1; r <= me; ++r) acc = op(acc, vals[r]);
  return acc;
}

// Rank 0 gets T() (CUDA leaves it undefined for ops other than plus).
template <class Group, class T, class Op = plus<T>>
T exclusive_scan(const Group& g, T v, Op op = Op(), const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  std::vector<T> vals(g.size());
  details::gather<T>(g, v, vals.data(), f, l);
  unsigned me = (unsigned)g.thread_rank();
  if (me == 0) return T();
  T acc = vals[0];
  for (unsigned r = 1; r < me; ++r) acc = op(acc, vals[r]);
  return acc;
}

}  // namespace cooperative_groups
