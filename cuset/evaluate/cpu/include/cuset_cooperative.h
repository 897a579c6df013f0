// cuset_cooperative.h: cooperative launches and grid-wide barriers for the CPU emulator
// (included by cuset_cuda.h, after the block scheduler; see there for fibers and blocks).
//
// A cooperative launch (cudaLaunchCooperativeKernel, or cudaLaunchKernelEx with
// cudaLaunchAttributeCooperative) guarantees every block is resident at once, which is what
// makes cooperative_groups::this_grid().sync() possible. Here each pool worker owns the blocks
// k = worker, worker + W, ... and keeps all of their threads alive as fibers in one scheduler:
// it runs its blocks until every live thread of each waits at grid.sync() (or has exited), then
// waits for the other workers at an OS-level barrier; when all have arrived the grid barrier
// opens. Block-level barriers and warp collectives work as in an ordinary launch.
//
// As on a GPU, a cooperative launch of more blocks than can be co-resident fails with
// cudaErrorCooperativeLaunchTooLarge: the limit is what cudaOccupancyMaxActiveBlocksPerMultiprocessor
// reports times the multiprocessor count. A grid.sync() in a kernel that was launched without
// the cooperative guarantee is undefined on a GPU (it hangs or corrupts); here it is a device
// error naming the call. A block that exits while others wait at grid.sync() would hang a GPU:
// it is reported as a deadlock.
#pragma once

namespace cuset {

// Blocks of `threads` threads using `smem` bytes of dynamic shared memory that one emulated
// multiprocessor holds at once (2048 threads, 32 blocks and 164 KiB of shared memory per SM, as
// an sm_80 part): what the occupancy API reports, and the per-SM cooperative limit.
inline int max_active_blocks(int threads, size_t smem) {
  if (threads <= 0 || threads > (int)kMaxThreads) return 0;
  int n = std::min(32, 2048 / threads);
  if (smem > 0) n = std::min<long long>(n, (long long)(164 * 1024 / smem));
  return n;
}

// The barrier the workers of one cooperative launch meet at, once per grid.sync() round.
struct CoopGrid {
  std::mutex mu;
  std::condition_variable cv;
  const char* kernel = "";
  unsigned workers = 0, arrived = 0;
  unsigned long long generation = 0;
  unsigned long long parked = 0, done = 0;  // this round: blocks waiting at grid.sync(), blocks finished
  uint3 done_block{};
  const char* file = nullptr;
  int line = 0;
  bool finished = false;

  // One worker's arrival: `my_parked` of its blocks wait at grid.sync(), `my_done` have exited.
  // Returns true when the launch is over (every block exited), false when the barrier opened.
  bool arrive(unsigned long long my_parked, unsigned long long my_done, uint3 a_done, const char* f, int l) {
    std::unique_lock<std::mutex> lk(mu);
    parked += my_parked;
    done += my_done;
    if (my_done) done_block = a_done;
    if (f) {
      file = f;
      line = l;
    }
    const unsigned long long gen = generation;
    if (++arrived == workers) {
      if (parked == 0) finished = true;
      else if (done)
        fault("deadlock in kernel " + std::string(kernel) + ": block " + dim_text(done_block) + " exited while other blocks wait at grid.sync() " +
              site(file, line) + " (every block must reach each grid-wide barrier; on a GPU the launch hangs)");
      arrived = 0;
      parked = 0;
      done = 0;
      ++generation;
      cv.notify_all();
      return finished;
    }
    cv.wait(lk, [&] { return generation != gen; });
    return finished;
  }
};

// Runs `b`'s fibers until every live thread waits at grid.sync() (false) or all exited (true).
inline bool schedule_until_grid(Worker& w, Block* b) {
  for (;;) {
    make_order(w, b->nthreads);
    for (unsigned i : w.order) {
      Thread* t = &b->threads[i];
      while (t->state == State::Ready) switch_to_thread(b, t);
    }
    bool all_done = true, parked = true;
    for (unsigned i = 0; i < b->nthreads; ++i) {
      State s = b->threads[i].state;
      all_done &= s == State::Done;
      parked &= s == State::Done || s == State::Grid;
    }
    if (all_done) return true;
    if (parked) return false;
    ++b->phase;
    if (release_warps(b)) continue;
    if (release_barrier(b)) continue;
    report_deadlock(b);
  }
}

inline void enter_block(Block* b) {
  tls_bid = b->idx;
  tls_bdim = b->dim;
  tls_gdim = b->grid;
  cur_block = b;
}

// One pool worker of a cooperative launch: its blocks, all resident, to the end of the kernel.
inline void coop_worker(const KernelInfo& info, const Config& c, Body body, void* payload, size_t static_limit, CoopGrid& g, unsigned wid,
                        unsigned nw) {
  ensure_altstack();
  const Options& o = options();
  Worker& w = worker();
  const unsigned long long nblocks = (unsigned long long)c.grid.x * c.grid.y * c.grid.z;
  const unsigned nthreads = c.block.x * c.block.y * c.block.z;
  std::vector<unsigned long long> mine;
  for (unsigned long long k = wid; k < nblocks; k += nw) mine.push_back(k);
  const size_t nb = mine.size();
  std::vector<std::unique_ptr<Block>> blocks(nb);
  std::vector<std::vector<Thread>> threads(nb);
  std::vector<std::vector<unsigned char>> dyn(nb);
  std::vector<char> done(nb, 0);
  ensure_stacks(w, nb * nthreads);
  if (o.order == Order::Random) w.rng.seed(o.seed * 2654435761u + wid);
  for (size_t j = 0; j < nb; ++j) {
    blocks[j] = std::make_unique<Block>();
    Block& b = *blocks[j];
    const unsigned long long k = mine[j];
    b.idx = block_index(k, c.grid);
    prepare_block(b, info, c, body, payload, static_limit);
    b.fibers = true;
    dyn[j].resize(c.smem);
    b.dyn = c.smem ? dyn[j].data() : nullptr;
    if (c.smem) fill_garbage(b.dyn, c.smem);
    threads[j].resize(nthreads);
    b.threads = threads[j].data();
    b.coop = &g;
    init_threads(&b);
    init_fibers(w, &b, j * nthreads);
  }
  for (;;) {
    const char* f = nullptr;
    int l = 0;
    uint3 done_idx{};
    unsigned long long parked = 0, ndone = 0;
    for (size_t j = 0; j < nb; ++j) {
      Block* b = blocks[j].get();
      if (!done[j]) {
        enter_block(b);
        done[j] = schedule_until_grid(w, b);
        cur_block = nullptr;
      }
      if (done[j]) {
        ++ndone;
        done_idx = b->idx;
        continue;
      }
      ++parked;
      for (unsigned i = 0; i < nthreads && !f; ++i)
        if (b->threads[i].state == State::Grid) {
          f = b->threads[i].file;
          l = b->threads[i].line;
        }
    }
    if (g.arrive(parked, ndone, done_idx, f, l)) break;
    for (size_t j = 0; j < nb; ++j)
      for (unsigned i = 0; i < nthreads && !done[j]; ++i)
        if (blocks[j]->threads[i].state == State::Grid) blocks[j]->threads[i].state = State::Ready;
  }
#ifdef CUSET_ASAN
  for (auto& b : blocks)
    for (void* p : b->heap_blocks) free(p);
#endif
}

inline void run_grid_cooperative(const KernelInfo& info, const Config& c, Body body, void* payload, const void* fn) {
  install_handlers();
  const unsigned long long nblocks = (unsigned long long)c.grid.x * c.grid.y * c.grid.z;
  size_t limit = kDefaultSmem;
  auto it = func_smem_limits().find(fn);
  if (it != func_smem_limits().end()) limit = std::max<size_t>(limit, (size_t)it->second);
  CoopGrid g;
  g.kernel = info.name;
  g.workers = (unsigned)std::min<unsigned long long>(options().workers, nblocks);
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < g.workers; ++i) pool.emplace_back([&, i] { coop_worker(info, c, body, payload, limit, g, i, g.workers); });
  coop_worker(info, c, body, payload, limit, g, 0, g.workers);
  for (auto& t : pool) t.join();
}

// Why a cooperative launch of `c` cannot be made resident ("" when it can).
inline std::string cooperative_problem(const Config& c) {
  const unsigned long long nblocks = (unsigned long long)c.grid.x * c.grid.y * c.grid.z;
  const int per_sm = max_active_blocks((int)(c.block.x * c.block.y * c.block.z), c.smem);
  const unsigned long long most = (unsigned long long)per_sm * options().workers;
  if (nblocks <= most) return "";
  return "cooperative launch of " + std::to_string(nblocks) + " blocks: at most " + std::to_string(most) + " (" + std::to_string(per_sm) +
         " per multiprocessor x " + std::to_string(options().workers) + ") can be resident at once";
}

}  // namespace cuset

// grid_group::sync(): every thread of every block arrives before any goes on.
inline void cuset_grid_sync(const char* file, int line) {
  cuset::Block* b = cuset::cur_block;
  if (!b || !b->coop)
    cuset::fault("grid_group::sync() at " + cuset::site(file, line) + " in " + cuset::where() +
                 ": the kernel was not launched with cudaLaunchCooperativeKernel (or the cooperative launch attribute); "
                 "a grid-wide barrier needs every block resident, without that guarantee it is undefined on a GPU (this_grid().is_valid() is false)");
  cuset::Thread* t = cuset::cur_thread;
  t->state = cuset::State::Grid;
  t->file = file;
  t->line = line;
  t->gsize = 0;
  cuset::yield_to_scheduler();
}

// Whether this launch can use grid_group::sync() (this_grid().is_valid()).
inline bool cuset_grid_valid() { return cuset::cur_block && cuset::cur_block->coop; }
