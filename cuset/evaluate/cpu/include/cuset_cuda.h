// cuset_cuda.h: the CUDA execution model on a CPU (CuSeT Workbench `cpu` backend).
//
// Included first (g++ -include) in every translation unit that cuset.evaluate.cpu.translate
// produced from CUDA source. The translator rewrites only what C++ cannot express itself
// (`<<<...>>>` launches and `__shared__` declarations); everything else is this header:
//
//   grid       blocks run in parallel on a pool of OS threads (CUSET_WORKERS, default: cores)
//   block      its threads run either as a plain loop (kernels the translator proved free of
//              barriers and warp collectives) or as fibers (ucontext) that yield at every
//              __syncthreads / warp collective; a scheduler releases a barrier when every live
//              thread waits at the same one (exited threads count as arrived) and reports
//              threads waiting at different barriers, or a deadlock, instead of hanging
//   order      threads run forward, reverse or seeded-random between barriers (CUSET_SCHEDULE),
//              so a race shows up as results that change with the order
//   memory     cudaMalloc'd memory and shared memory start filled with a garbage byte
//              (CUSET_FILL, default 0xCD), device allocations sit before a guard page and are
//              inaccessible to host code outside kernels (a host dereference of a device
//              pointer is reported); with -DCUSET_SANITIZE every allocation, shared array
//              included, comes from the heap so AddressSanitizer sees each one alone
//
// Errors the emulated device would raise (illegal address, barrier divergence, deadlock,
// host dereference, bad kernel argument) print one `cuset-cuda: error:` line and end the
// process with exit code 101. Nothing here links libcudart: CUDA's own headers supply the
// types and declarations, this header defines what libcudart would.
#pragma once
#ifndef CUSET_CUDA_H
#define CUSET_CUDA_H

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#define __grid_constant__
#define __CUSET_EMULATOR__ 1

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define CUSET_ASAN 1
#endif

#ifdef CUSET_SHARED_LIBRARY
#include <link.h>  // a shared library (KernelBench mode) finds its static image from its segments
#else
extern "C" char __executable_start;  // NOLINT: linker symbols bounding the static image
extern "C" char _end;
#endif

namespace cuset {

constexpr int kDeviceFault = 101;
constexpr size_t kDefaultSmem = 48 * 1024;
constexpr size_t kOptinSmem = 163 * 1024;
constexpr unsigned kMaxThreads = 1024;

// --- options -----------------------------------------------------------------------------

enum class Order { Forward, Reverse, Random };

struct Options {
  Order order = Order::Forward;
  unsigned seed = 0;
  int fill = 0xCD;      // -1: random bytes from `seed`
  unsigned workers = 1;
  bool always_fibers = false;
  size_t stack_bytes = 64 * 1024;
  bool host_deref_check = true;
  bool pointer_check = true;
};

inline const Options& options() {
  static const Options opts = [] {
    Options o;
    if (const char* s = getenv("CUSET_SCHEDULE")) {
      std::string v(s);
      if (v == "reverse") o.order = Order::Reverse;
      else if (v.rfind("random", 0) == 0) {
        o.order = Order::Random;
        if (v.size() > 7) o.seed = (unsigned)strtoul(v.c_str() + 7, nullptr, 10);
      }
    }
    if (const char* s = getenv("CUSET_FILL")) {
      std::string v(s);
      if (v == "zero") o.fill = 0;
      else if (v == "random") o.fill = -1;
      else o.fill = (int)strtol(s, nullptr, 0) & 0xFF;
    }
    unsigned hw = std::thread::hardware_concurrency();
    o.workers = hw ? hw : 1;
    if (const char* s = getenv("CUSET_WORKERS")) o.workers = std::max(1, atoi(s));
    if (const char* s = getenv("CUSET_FIBERS")) o.always_fibers = std::string(s) == "always";
    if (const char* s = getenv("CUSET_STACK_KB")) o.stack_bytes = std::max(16, atoi(s)) * size_t(1024);
    if (const char* s = getenv("CUSET_HOST_DEREF_CHECK")) o.host_deref_check = std::string(s) != "0";
    if (const char* s = getenv("CUSET_POINTER_CHECK")) o.pointer_check = std::string(s) != "0";
#ifdef CUSET_ASAN
    o.host_deref_check = false;
#endif
    return o;
  }();
  return opts;
}

inline void fill_garbage(void* p, size_t n) {
  const Options& o = options();
  if (o.fill >= 0) {
    memset(p, o.fill, n);
    return;
  }
  std::mt19937 rng(o.seed ^ (unsigned)(uintptr_t)p);
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = (unsigned char)rng();
}

// --- device faults -------------------------------------------------------------------------

[[noreturn]] inline void fault(const std::string& what) {
  fflush(stdout);
  std::string line = "cuset-cuda: error: " + what + "\n";
  (void)!write(2, line.data(), line.size());
  _exit(kDeviceFault);
}

[[noreturn]] inline void unsupported(const std::string& what) {
  fault("unsupported: " + what);
}

// --- per-block and per-thread state --------------------------------------------------------

enum class State : unsigned char { Ready, Barrier, Warp, Done, Grid, Poll };  // Grid: at grid_group::sync(); Poll: see Thread::poll
enum class WarpOp : unsigned char { Sync, Shfl, Ballot, Any, All, RedAdd, RedMin, RedMax, RedAnd, RedOr, RedXor, MatchAny, Coalesce };

struct Thread {
  uint3 idx;
  unsigned linear, lane, warp;
  State state;
  WarpOp op;
  unsigned mask;        // warp collective: lanes named by the caller
  unsigned want;        // shfl: source lane
  const char* file;
  int line;
  alignas(16) unsigned char value[16];
  alignas(16) unsigned char result[16];
  int pred;
  unsigned gbase, gsize;  // barrier of a tile of gsize threads from linear index gbase (0: the block)
  bool (*poll)(const void* arg);  // State::Poll: ready again once poll(poll_arg) is true (cuset_async.h)
  const void* poll_arg;
  ucontext_t ctx;
  void* sp;  // saved stack pointer (x86-64 fast switch)
  char* stack;
#ifdef CUSET_ASAN
  void* fake_stack;
#endif
};

struct Block;
struct CoopGrid;
using Body = void (*)(void* payload);         // one thread's run of the kernel (fibers)
using Loop = void (*)(Block* b, void* payload);  // every thread of a block, one after another

struct Block {
  uint3 idx;
  dim3 dim, grid;
  unsigned nthreads = 0;
  const char* kernel = "";
  Body body = nullptr;
  Loop loop = nullptr;
  void* payload = nullptr;
  bool fibers = false;
  unsigned char* dyn = nullptr;
  size_t dyn_size = 0;
  size_t static_limit = kDefaultSmem;
  std::vector<std::pair<long, void*>> statics;
  std::vector<unsigned char> arena;
  size_t arena_used = 0;
  std::vector<void*> heap_blocks;  // sanitizer mode: one malloc per shared array
  Thread* threads = nullptr;
  ucontext_t sched;
  void* sched_sp = nullptr;
  const void* sched_bottom = nullptr;  // AddressSanitizer: the scheduler's stack
  size_t sched_size = 0;
  int barrier_pred_sum = 0;
  unsigned phase = 0;
  std::vector<unsigned char> scratch;  // 16 bytes per thread: cooperative-groups collectives of large groups
  jmp_buf abort_jmp;  // loop mode: a failed device assert() ends the rest of the block here
  CoopGrid* coop = nullptr;  // a cooperative launch's grid barrier (null: grid.sync() is an error)
};

// A device-side assert() that failed: like CUDA, the launch (and every later call that
// synchronizes) reports cudaErrorAssert; blocks not yet started do not run.
inline std::atomic<int> sticky_error{0};

inline thread_local Thread* cur_thread = nullptr;
inline thread_local Block* cur_block = nullptr;
// threadIdx & co. read these (one TLS load each); the scheduler keeps them current.
inline thread_local uint3 tls_tid;
inline thread_local uint3 tls_bid;
inline thread_local dim3 tls_bdim;
inline thread_local dim3 tls_gdim;

inline std::string dim_text(uint3 d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

inline std::string where() {
  if (!cur_block) return "host code";
  std::string s = std::string("kernel ") + cur_block->kernel + " block " + dim_text(cur_block->idx);
  s += " thread " + dim_text(cur_thread ? cur_thread->idx : tls_tid);
  return s;
}

// --- device memory registry -----------------------------------------------------------------

enum class Space : unsigned char { Device, Managed, PinnedHost, External };

struct Allocation {
  uintptr_t base;
  size_t size;
  void* map_base;
  size_t map_len;
  Space space;
};

struct Registry {
  std::mutex mu;
  std::map<uintptr_t, Allocation> by_base;
  bool protected_now = false;
  int open_count = 0;      // Unprotect scopes open now, on any host thread
  bool reprotect = false;  // the last of them closes device memory again

  const Allocation* find(uintptr_t p) {
    auto it = by_base.upper_bound(p);
    if (it == by_base.begin()) return nullptr;
    --it;
    const Allocation& a = it->second;
    if (p >= a.base && p <= a.base + a.size + 4096) return &a;  // includes the slack before the guard page
    return nullptr;
  }
};

inline Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry();  // never destroyed: kernels may run during exit
    reg->protected_now = options().host_deref_check;
    return reg;
  }();
  return *r;
}

inline size_t page_size() {
  static const size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

[[noreturn]] inline void fault(const std::string& what);

inline void set_protection(Allocation& a, bool accessible) {
  if (a.space != Space::Device || !options().host_deref_check || a.map_base == nullptr) return;
  size_t usable = a.map_len - page_size();
  // A failed mprotect would leave device memory closed to kernels: say so, never report it as
  // the program's illegal access.
  if (mprotect(a.map_base, usable, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) != 0)
    fault(std::string("internal: mprotect of a device allocation failed (") + strerror(errno) +
          "); rerun with CUSET_HOST_DEREF_CHECK=0 and report this");
}

// Device memory is host-inaccessible between launches; kernels, cudaMemcpy and cudaMemset
// open it for their duration.
// Counted: with several host threads launching at once (simpleCallback's workers), the first
// to open opens everything and only the last to finish closes it again. (Each closing what it
// had opened closed memory under another thread's running kernel: a false illegal access.)
struct Unprotect {
  Unprotect() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    if (r.open_count++ == 0 && r.protected_now) {
      for (auto& kv : r.by_base) set_protection(kv.second, true);
      r.protected_now = false;
      r.reprotect = true;
    }
  }
  ~Unprotect() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    if (--r.open_count == 0 && r.reprotect) {
      for (auto& kv : r.by_base) set_protection(kv.second, false);
      r.protected_now = true;
      r.reprotect = false;
    }
  }
};

inline void install_handlers();

inline void* device_alloc(size_t size, Space space) {
  size_t rounded = (std::max<size_t>(size, 1) + 255) & ~size_t(255);
  Allocation a{};
  a.size = size;
  a.space = space;
#ifdef CUSET_ASAN
  void* p = aligned_alloc(256, rounded);
  if (!p) return nullptr;
  a.base = (uintptr_t)p;
  a.map_base = nullptr;
  a.map_len = 0;
#else
  size_t pg = page_size();
  size_t usable = (rounded + pg - 1) & ~(pg - 1);
  size_t map_len = usable + pg;
  void* m = mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  mprotect((char*)m + usable, pg, PROT_NONE);  // guard page right after the allocation
  a.map_base = m;
  a.map_len = map_len;
  a.base = (uintptr_t)m + usable - rounded;
#endif
  fill_garbage((void*)a.base, rounded);
  install_handlers();
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  if (r.protected_now) set_protection(a, false);
  r.by_base[a.base] = a;
  return (void*)a.base;
}

inline bool device_free(void* p) {
  Registry& r = registry();
  Allocation a;
  {
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.by_base.find((uintptr_t)p);
    if (it == r.by_base.end() || it->second.space == Space::External) return false;
    a = it->second;
    r.by_base.erase(it);
  }
#ifdef CUSET_ASAN
  free((void*)a.base);
#else
  munmap(a.map_base, a.map_len);
#endif
  return true;
}

// Memory that something else owns (a torch tensor in KernelBench mode) but kernels may use.
inline void register_external(const void* p, size_t size) {
  if (!p) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.by_base[(uintptr_t)p] = Allocation{(uintptr_t)p, size, nullptr, 0, Space::External};
}

inline void unregister_external(const void* p) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.by_base.find((uintptr_t)p);
  if (it != r.by_base.end() && it->second.space == Space::External) r.by_base.erase(it);
}

// Whether `u` lies in this program's static image (__device__ and __constant__ variables).
__attribute__((visibility("hidden"))) inline bool in_static_image(uintptr_t u) {
#ifdef CUSET_SHARED_LIBRARY
  // No __executable_start in a shared library: the span of its own loaded segments.
  static const std::pair<uintptr_t, uintptr_t> range = [] {
    struct Probe {
      uintptr_t self, lo, hi;
    } probe{(uintptr_t)&in_static_image, 0, 0};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
          auto* p = static_cast<Probe*>(data);
          uintptr_t lo = UINTPTR_MAX, hi = 0;
          for (int k = 0; k < info->dlpi_phnum; ++k) {
            const auto& ph = info->dlpi_phdr[k];
            if (ph.p_type != PT_LOAD) continue;
            lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
            hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
          }
          if (p->self < lo || p->self >= hi) return 0;
          p->lo = lo;
          p->hi = hi;
          return 1;
        },
        &probe);
    return std::make_pair(probe.lo, probe.hi);
  }();
  return u >= range.first && u < range.second;
#else
  return u >= (uintptr_t)&__executable_start && u < (uintptr_t)&_end;
#endif
}

inline bool device_accessible(const void* p) {
  uintptr_t u = (uintptr_t)p;
  if (in_static_image(u)) return true;  // __device__/__constant__ symbols
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.find(u) != nullptr;
}

// --- fault handler -------------------------------------------------------------------------

inline void write_str(const char* s) { (void)!write(2, s, strlen(s)); }

inline void on_segv(int sig, siginfo_t* info, void*) {
  uintptr_t addr = (uintptr_t)info->si_addr;
  char buf[512];
  const Allocation* hit = nullptr;
  Registry& r = registry();
  auto it = r.by_base.upper_bound(addr);  // read without the lock: we are about to exit anyway
  if (it != r.by_base.begin()) {
    --it;
    const Allocation& a = it->second;
    if (a.map_base && addr >= (uintptr_t)a.map_base && addr < (uintptr_t)a.map_base + a.map_len) hit = &a;
  }
  fflush(stdout);
  if (cur_block) {
    if (cur_thread && cur_thread->stack && addr < (uintptr_t)cur_thread->stack && addr + 65536 >= (uintptr_t)cur_thread->stack) {
      snprintf(buf, sizeof buf, "cuset-cuda: error: stack overflow in kernel %s thread (%u,%u,%u): local arrays are larger than CUSET_STACK_KB allows\n",
               cur_block->kernel, cur_thread->idx.x, cur_thread->idx.y, cur_thread->idx.z);
    } else if (hit && addr >= hit->base + hit->size) {
      snprintf(buf, sizeof buf, "cuset-cuda: error: illegal memory access in kernel %s block (%u,%u,%u) thread (%u,%u,%u): address %#lx is %lu bytes past the end of a %lu-byte device allocation\n",
               cur_block->kernel, cur_block->idx.x, cur_block->idx.y, cur_block->idx.z, tls_tid.x,
               tls_tid.y, tls_tid.z, (unsigned long)addr,
               (unsigned long)(addr - hit->base - hit->size), (unsigned long)hit->size);
    } else {
      snprintf(buf, sizeof buf, "cuset-cuda: error: illegal memory access in kernel %s block (%u,%u,%u) thread (%u,%u,%u): address %#lx (%s)\n",
               cur_block->kernel, cur_block->idx.x, cur_block->idx.y, cur_block->idx.z, tls_tid.x,
               tls_tid.y, tls_tid.z, (unsigned long)addr,
               sig == SIGBUS ? "bus error" : "not device memory");
    }
    write_str(buf);
    _exit(kDeviceFault);
  }
  if (hit && addr >= hit->base && addr < hit->base + hit->size) {
    snprintf(buf, sizeof buf, "cuset-cuda: error: host code dereferenced a device pointer: address %#lx lies in a %lu-byte cudaMalloc allocation (copy it to the host with cudaMemcpy first)\n",
             (unsigned long)addr, (unsigned long)hit->size);
    write_str(buf);
    _exit(kDeviceFault);
  }
  signal(sig, SIG_DFL);  // an ordinary crash of host code: let it crash as it would
  raise(sig);
}

inline void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
#ifndef CUSET_ASAN
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
#endif
  });
}

struct AltStack {
  void* mem = nullptr;
  ~AltStack() {  // a pool thread exits: stop using its signal stack, then free it
    if (!mem) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    free(mem);
  }
};

inline void ensure_altstack() {
#ifdef CUSET_ASAN
  return;  // AddressSanitizer keeps its own alternate signal stack
#endif
  static thread_local AltStack alt;
  if (alt.mem) return;
  stack_t ss{};
  ss.ss_size = 64 * 1024;
  ss.ss_sp = alt.mem = malloc(ss.ss_size);
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
}

// --- shared memory -------------------------------------------------------------------------

inline void* shared_static(size_t size, size_t align, long id) {
  Block* b = cur_block;
  if (!b) fault("__shared__ variable used outside a kernel");
  for (auto& e : b->statics)
    if (e.first == id) return e.second;
  if (align < 16) align = 16;
#ifdef CUSET_ASAN
  void* p = aligned_alloc(align, (size + align - 1) / align * align);
  b->heap_blocks.push_back(p);
  b->arena_used += size;
#else
  size_t off = (b->arena_used + align - 1) & ~(align - 1);
  if (off + size > b->arena.size()) b->arena.resize(std::max(off + size, b->arena.size() * 2));  // only before first use
  void* p = b->arena.data() + off;
  b->arena_used = off + size;
#endif
  if (b->arena_used + b->dyn_size > b->static_limit)
    fault("too much shared memory in kernel " + std::string(b->kernel) + ": " + std::to_string(b->arena_used) + " bytes static + " +
          std::to_string(b->dyn_size) + " dynamic exceed the " + std::to_string(b->static_limit) + "-byte limit");
  fill_garbage(p, size);
  b->statics.emplace_back(id, p);
  return p;
}

inline void* shared_dynamic() {
  Block* b = cur_block;
  if (!b) fault("extern __shared__ array used outside a kernel");
  return b->dyn;
}

// --- fibers and the block scheduler ---------------------------------------------------------

struct Worker {
  std::vector<Thread> threads;
  char* stacks = nullptr;
  size_t stack_count = 0;
  Block block;
  std::vector<unsigned char> dyn;
  std::vector<unsigned> order;
  std::mt19937 rng;
  // A launch's pool threads exit when it ends: their fiber stacks go with them. (Kept, each
  // stack's guard page is a mapping of its own; after a few dozen launches the process ran
  // out of mappings, mprotect failed, and device memory stayed closed: a false illegal access.)
  ~Worker() {
    if (stacks) munmap(stacks, stack_count * (options().stack_bytes + page_size()));
  }
};

inline Worker& worker() {
  static thread_local Worker w;
  return w;
}

#if defined(__x86_64__) && !defined(CUSET_ASAN)
#define CUSET_FAST_SWITCH 1
// Saves the callee-saved registers and the FP control words on the current stack, stores the
// stack pointer in *from, and resumes the stack in `to`: ~10 ns instead of swapcontext's
// two signal-mask system calls.
extern "C" void cuset_switch(void** from, void* to);
asm(R"(
  .text
  .weak cuset_switch
  .hidden cuset_switch
  .type cuset_switch,@function
cuset_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cuset_switch, .-cuset_switch
)");
#endif

inline void fiber_main() {
  Block* b = cur_block;
#ifdef CUSET_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &b->sched_bottom, &b->sched_size);
#endif
  b->body(b->payload);
  Thread* t = cur_thread;
  t->state = State::Done;
#ifdef CUSET_FAST_SWITCH
  cuset_switch(&t->sp, b->sched_sp);
#else
#ifdef CUSET_ASAN
  __sanitizer_start_switch_fiber(nullptr, b->sched_bottom, b->sched_size);
#endif
  setcontext(&b->sched);
#endif
}

inline void switch_to_thread(Block* b, Thread* t) {
  cur_thread = t;
  tls_tid = t->idx;
#if defined(CUSET_FAST_SWITCH)
  cuset_switch(&b->sched_sp, t->sp);
#elif defined(CUSET_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, t->stack, options().stack_bytes);
  swapcontext(&b->sched, &t->ctx);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  swapcontext(&b->sched, &t->ctx);
#endif
  cur_thread = nullptr;
}

inline void yield_to_scheduler() {
  Thread* t = cur_thread;
  Block* b = cur_block;
  if (!b->fibers)
    fault("internal: " + where() + " reached a barrier or warp collective in a kernel analysed as free of them; rerun with CUSET_FIBERS=always");
#if defined(CUSET_FAST_SWITCH)
  cuset_switch(&t->sp, b->sched_sp);
#elif defined(CUSET_ASAN)
  __sanitizer_start_switch_fiber(&t->fake_stack, b->sched_bottom, b->sched_size);
  swapcontext(&t->ctx, &b->sched);
  __sanitizer_finish_switch_fiber(t->fake_stack, &b->sched_bottom, &b->sched_size);
#else
  swapcontext(&t->ctx, &b->sched);
#endif
  cur_thread = t;
  tls_tid = t->idx;
}

inline void make_order(Worker& w, unsigned n) {
  w.order.resize(n);
  for (unsigned i = 0; i < n; ++i) w.order[i] = i;
  Order o = options().order;
  if (o == Order::Reverse) std::reverse(w.order.begin(), w.order.end());
  else if (o == Order::Random) std::shuffle(w.order.begin(), w.order.end(), w.rng);
}

inline std::string site(const char* file, int line) { return std::string(file ? file : "?") + ":" + std::to_string(line); }

// Releases every warp whose named live lanes all wait at a collective; computes results.
inline bool release_warps(Block* b) {
  bool any = false;
  unsigned nwarps = (b->nthreads + 31) / 32;
  for (unsigned w = 0; w < nwarps; ++w) {
    Thread* lanes = b->threads + w * 32;
    unsigned n = std::min(32u, b->nthreads - w * 32);
    unsigned live = 0, waiting = 0, named = 0, cwait = 0;
    for (unsigned l = 0; l < n; ++l) {
      if (lanes[l].state != State::Done) live |= 1u << l;
      if (lanes[l].state != State::Warp) continue;
      if (lanes[l].op == WarpOp::Coalesce) {
        cwait |= 1u << l;
      } else {
        waiting |= 1u << l;
        named |= lanes[l].mask;
      }
    }
    // Lanes waiting at the same collective with the same mask form a group; a group goes when
    // every live lane its mask names waits in it. Groups with disjoint masks (labeled or
    // coalesced groups, tiles of a warp) go on their own.
    unsigned chosen = 0, stuck = 0, pending = waiting;
    while (pending && !chosen) {
      Thread& f = lanes[__builtin_ctz(pending)];
      unsigned group = 0;
      for (unsigned k = 0; k < n; ++k)
        if ((pending >> k & 1) && lanes[k].op == f.op && lanes[k].line == f.line && lanes[k].file == f.file && lanes[k].mask == f.mask) group |= 1u << k;
      pending &= ~group;
      unsigned need = (f.mask | group) & live;
      if ((need & group) == need) chosen = group;
      else if (need & waiting & ~group) stuck = stuck ? stuck : group;
    }
    if (!chosen) {
      // coalesced_threads(): released only when nothing else in the warp can move, so the
      // lanes waiting at one call site are the ones that reached it together; they get their
      // mask. Of several sites the earliest line goes first: lanes inside a branch reach the
      // code after it (where the others wait) before that site's group forms, as on a GPU,
      // where the warp reconverges after the branch.
      if (cwait) {
        unsigned first_lane = (unsigned)__builtin_ctz(cwait), co = 0;
        for (unsigned k = 0; k < n; ++k)
          if ((cwait >> k & 1) && lanes[k].line < lanes[first_lane].line) first_lane = k;
        for (unsigned k = 0; k < n; ++k)
          if ((cwait >> k & 1) && lanes[k].line == lanes[first_lane].line && lanes[k].file == lanes[first_lane].file) co |= 1u << k;
        for (unsigned k = 0; k < n; ++k)
          if (co >> k & 1) {
            memcpy(lanes[k].result, &co, 4);
            lanes[k].state = State::Ready;
          }
        any = true;
        continue;
      }
      if (stuck) {  // a lane named by a collective waits at a different one: nothing can move
        Thread& f = lanes[__builtin_ctz(stuck)];
        unsigned other = ((f.mask | stuck) & live & waiting & ~stuck);
        Thread& o = lanes[__builtin_ctz(other)];
        fault("warp collectives out of step in " + std::string("kernel ") + b->kernel + " block " + dim_text(b->idx) + " warp " +
              std::to_string(w) + ": lane " + std::to_string(f.lane) + " waits at " + site(f.file, f.line) + ", lane " +
              std::to_string(o.lane) + " at " + site(o.file, o.line));
      }
      continue;
    }
    waiting = chosen;
    Thread* first = &lanes[__builtin_ctz(chosen)];
    WarpOp op = first->op;
    unsigned ballot = 0;
    long long acc = 0;
    bool acc_set = false;
    for (unsigned l = 0; l < n; ++l) {
      if (!(waiting >> l & 1)) continue;
      if (lanes[l].pred) ballot |= 1u << l;
      int v;
      memcpy(&v, lanes[l].value, sizeof v);
      unsigned uv = (unsigned)v;
      switch (op) {
        case WarpOp::RedAdd: acc += uv; break;
        case WarpOp::RedMin: acc = acc_set ? std::min<long long>(acc, lanes[l].pred ? v : (long long)uv) : (lanes[l].pred ? v : (long long)uv); break;
        case WarpOp::RedMax: acc = acc_set ? std::max<long long>(acc, lanes[l].pred ? v : (long long)uv) : (lanes[l].pred ? v : (long long)uv); break;
        case WarpOp::RedAnd: acc = acc_set ? (acc & uv) : uv; break;
        case WarpOp::RedOr: acc = acc_set ? (acc | uv) : uv; break;
        case WarpOp::RedXor: acc = acc_set ? (acc ^ uv) : uv; break;
        default: break;
      }
      acc_set = true;
    }
    for (unsigned l = 0; l < n; ++l) {
      if (!(waiting >> l & 1)) continue;
      Thread& t = lanes[l];
      switch (op) {
        case WarpOp::Shfl: {
          unsigned src = t.want < n && (waiting >> t.want & 1) ? t.want : l;
          memcpy(t.result, lanes[src].value, 16);
          break;
        }
        case WarpOp::Ballot: memcpy(t.result, &ballot, 4); break;
        case WarpOp::Any: { int r = (ballot & waiting) != 0; memcpy(t.result, &r, 4); break; }
        case WarpOp::All: { int r = (ballot & waiting) == waiting; memcpy(t.result, &r, 4); break; }
        case WarpOp::MatchAny: {
          unsigned m = 0;
          for (unsigned k = 0; k < n; ++k)
            if ((waiting >> k & 1) && memcmp(lanes[k].value, t.value, 16) == 0) m |= 1u << k;
          memcpy(t.result, &m, 4);
          break;
        }
        case WarpOp::RedAdd: case WarpOp::RedMin: case WarpOp::RedMax:
        case WarpOp::RedAnd: case WarpOp::RedOr: case WarpOp::RedXor: {
          unsigned r = (unsigned)acc;
          memcpy(t.result, &r, 4);
          break;
        }
        default: break;
      }
      t.state = State::Ready;
    }
    any = true;
  }
  return any;
}

// Threads waiting for a condition (an arrive/wait barrier's phase, a pipeline stage: cuset_async.h)
// that has come true become ready.
inline bool release_polls(Block* b) {
  bool any = false;
  for (unsigned i = 0; i < b->nthreads; ++i) {
    Thread& t = b->threads[i];
    if (t.state == State::Poll && t.poll(t.poll_arg)) {
      t.state = State::Ready;
      any = true;
    }
  }
  return any;
}

inline bool release_barrier(Block* b) {
  if (release_polls(b)) return true;  // both schedulers call this once nothing else can run
  Thread* first = nullptr;
  int count = 0;
  bool whole = true;
  for (unsigned i = 0; i < b->nthreads && whole; ++i) {
    Thread& t = b->threads[i];
    if (t.state == State::Done) continue;
    if (t.state != State::Barrier || t.gsize) {
      whole = false;
      break;
    }
    if (!first) first = &t;
    else if (t.line != first->line || t.file != first->file)
      fault("__syncthreads divergence in kernel " + std::string(b->kernel) + " block " + dim_text(b->idx) + ": thread " +
            dim_text(first->idx) + " waits at " + site(first->file, first->line) + ", thread " + dim_text(t.idx) + " at " +
            site(t.file, t.line) + " (a barrier in divergent code)");
    count += t.pred != 0;
  }
  if (whole && first) {
    b->barrier_pred_sum = count;
    for (unsigned i = 0; i < b->nthreads; ++i)
      if (b->threads[i].state == State::Barrier) b->threads[i].state = State::Ready;
    return true;
  }
  // barriers of tiles (thread_block_tile<N> with N > 32): each completes on its own
  bool any = false;
  for (unsigned i = 0; i < b->nthreads; ++i) {
    Thread& t = b->threads[i];
    if (t.state != State::Barrier || !t.gsize || t.gbase != i) continue;
    unsigned end = std::min(b->nthreads, t.gbase + t.gsize);
    bool ready = true;
    for (unsigned j = t.gbase; j < end && ready; ++j) {
      Thread& u = b->threads[j];
      ready = u.state == State::Done || (u.state == State::Barrier && u.gsize == t.gsize && u.gbase == t.gbase);
    }
    if (!ready) continue;
    for (unsigned j = t.gbase; j < end; ++j)
      if (b->threads[j].state == State::Barrier) b->threads[j].state = State::Ready;
    any = true;
  }
  if (!any) {  // a tile whose first thread has exited: find it by any waiting member
    for (unsigned i = 0; i < b->nthreads && !any; ++i) {
      Thread& t = b->threads[i];
      if (t.state != State::Barrier || !t.gsize || b->threads[t.gbase].state != State::Done) continue;
      unsigned end = std::min(b->nthreads, t.gbase + t.gsize);
      bool ready = true;
      for (unsigned j = t.gbase; j < end && ready; ++j) {
        Thread& u = b->threads[j];
        ready = u.state == State::Done || (u.state == State::Barrier && u.gsize == t.gsize && u.gbase == t.gbase);
      }
      if (!ready) continue;
      for (unsigned j = t.gbase; j < end; ++j)
        if (b->threads[j].state == State::Barrier) b->threads[j].state = State::Ready;
      any = true;
    }
  }
  return any;
}

[[noreturn]] inline void report_deadlock(Block* b) {
  std::string detail;
  int shown = 0;
  for (unsigned i = 0; i < b->nthreads && shown < 4; ++i) {
    Thread& t = b->threads[i];
    if (t.state == State::Done) continue;
    detail += (shown ? "; " : "") + std::string("thread ") + dim_text(t.idx) +
              (t.state == State::Barrier ? " at __syncthreads " : t.state == State::Grid ? " at grid.sync() " : t.state == State::Poll ? " waiting at a barrier or pipeline " : " at a warp collective ") +
              site(t.file, t.line);
    ++shown;
  }
  fault("deadlock in kernel " + std::string(b->kernel) + " block " + dim_text(b->idx) + ": no barrier can complete (" + detail + ")");
}

// The worker's fiber stacks, at least `n` of them (each after a guard page).
inline void ensure_stacks(Worker& w, size_t n) {
  const size_t ss = options().stack_bytes;
  const size_t pg = page_size();
  if (w.stack_count < n) {
    if (w.stacks) munmap(w.stacks, w.stack_count * (ss + pg));
    w.stack_count = n;
    w.stacks = (char*)mmap(nullptr, w.stack_count * (ss + pg), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (w.stacks == (char*)MAP_FAILED) fault("cannot map fiber stacks for " + std::to_string(n) + " threads");
    for (size_t i = 0; i < w.stack_count; ++i) mprotect(w.stacks + i * (ss + pg), pg, PROT_NONE);
  }
}

// Each thread of `b` a fresh fiber on the worker's stacks from index `first_stack` on.
inline void init_fibers(Worker& w, Block* b, size_t first_stack) {
  const size_t ss = options().stack_bytes;
  const size_t pg = page_size();
  for (unsigned i = 0; i < b->nthreads; ++i) {
    Thread& t = b->threads[i];
    t.stack = w.stacks + (first_stack + i) * (ss + pg) + pg;
#ifdef CUSET_FAST_SWITCH
    // A frame that cuset_switch "returns" into fiber_main from: FP control words, six
    // callee-saved registers, fiber_main's address, and a null return address above it.
    uintptr_t top = ((uintptr_t)t.stack + ss) & ~uintptr_t(15);
    auto* f = reinterpret_cast<uint64_t*>(top - 72);
    f[0] = 0x037F00001F80ull;  // mxcsr 0x1F80, x87 control word 0x037F
    for (int k = 1; k <= 6; ++k) f[k] = 0;
    f[7] = (uint64_t)(uintptr_t)&fiber_main;
    f[8] = 0;
    t.sp = f;
#else
    getcontext(&t.ctx);
    t.ctx.uc_stack.ss_sp = t.stack;
    t.ctx.uc_stack.ss_size = ss;
    t.ctx.uc_link = nullptr;
    makecontext(&t.ctx, (void (*)())fiber_main, 0);
#endif
  }
}

inline void run_block_fibers(Worker& w, Block* b) {
  ensure_stacks(w, b->nthreads);
  init_fibers(w, b, 0);
  for (;;) {
    make_order(w, b->nthreads);
    for (unsigned i : w.order) {
      Thread* t = &b->threads[i];
      while (t->state == State::Ready) switch_to_thread(b, t);
    }
    bool all_done = true;
    for (unsigned i = 0; i < b->nthreads; ++i) all_done &= b->threads[i].state == State::Done;
    if (all_done) return;
    ++b->phase;
    if (release_warps(b)) continue;
    if (release_barrier(b)) continue;
    report_deadlock(b);
  }
}

inline void init_threads(Block* b) {
  for (unsigned i = 0; i < b->nthreads; ++i) {
    Thread& t = b->threads[i];
    t.linear = i;
    t.idx = make_uint3(i % b->dim.x, (i / b->dim.x) % b->dim.y, i / (b->dim.x * b->dim.y));
    t.lane = i % 32;
    t.warp = i / 32;
    t.state = State::Ready;
    t.gsize = 0;
    t.stack = nullptr;
  }
}

inline void run_block(Worker& w, Block* b) {
  tls_bid = b->idx;
  tls_bdim = b->dim;
  tls_gdim = b->grid;
  b->statics.clear();
  b->arena_used = 0;
  if (b->dyn_size) fill_garbage(b->dyn, b->dyn_size);
  cur_block = b;
  if (!b->fibers) {
    if (setjmp(b->abort_jmp) == 0) b->loop(b, b->payload);
    cur_block = nullptr;
#ifdef CUSET_ASAN
    for (void* p : b->heap_blocks) free(p);
    b->heap_blocks.clear();
#endif
    return;
  }
  init_threads(b);
  run_block_fibers(w, b);
  cur_block = nullptr;
#ifdef CUSET_ASAN
  for (void* p : b->heap_blocks) free(p);
  b->heap_blocks.clear();
#endif
}

// --- launches ------------------------------------------------------------------------------

struct KernelInfo {
  const char* name;
  const char* file;
  int line;
  bool needs_sync;  // the translator found barriers or warp collectives reachable from the kernel
};

struct Config {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
  bool cooperative = false;  // cudaLaunchCooperativeKernel: every block resident, grid.sync() allowed
  Config(dim3 g, dim3 b, size_t s = 0, cudaStream_t st = 0) : grid(g), block(b), smem(s), stream(st) {}
};

inline thread_local cudaError_t last_error = cudaSuccess;

inline std::map<const void*, int>& func_smem_limits() {
  static std::map<const void*, int> m;
  return m;
}

inline std::string launch_problem(const Config& c, const void* fn) {
  auto d = [](dim3 v) { return "(" + std::to_string(v.x) + "," + std::to_string(v.y) + "," + std::to_string(v.z) + ")"; };
  unsigned long long threads = (unsigned long long)c.block.x * c.block.y * c.block.z;
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0) return "grid " + d(c.grid) + " has a zero dimension";
  if (c.block.x == 0 || c.block.y == 0 || c.block.z == 0) return "block " + d(c.block) + " has a zero dimension";
  if (threads > kMaxThreads) return "block " + d(c.block) + " has " + std::to_string(threads) + " threads, over the limit of 1024";
  if (c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64) return "block " + d(c.block) + " exceeds the per-dimension limits (1024,1024,64)";
  if (c.grid.x > 2147483647u || c.grid.y > 65535 || c.grid.z > 65535) return "grid " + d(c.grid) + " exceeds the limits (2147483647,65535,65535)";
  size_t limit = kDefaultSmem;
  auto it = func_smem_limits().find(fn);
  if (it != func_smem_limits().end()) limit = std::max<size_t>(limit, (size_t)it->second);
  if (c.smem > limit)
    return std::to_string(c.smem) + " bytes of dynamic shared memory exceed the " + std::to_string(limit) +
           "-byte limit (raise it with cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes))";
  return "";
}

template <class Tuple>
struct Payload {
  void* fn;
  Tuple* args;
};

// Calls `F` with copies of the launch's parameters (the kernel takes them by value).
template <class Fn, class Tuple>
void invoke_kernel(void* p) {
  auto* pl = static_cast<Payload<Tuple>*>(p);
  std::apply(reinterpret_cast<Fn>(pl->fn), *pl->args);
}

template <class Call>
inline void for_each_thread(Block* b, Call&& call) {
  const unsigned bx = b->dim.x, by = b->dim.y, bz = b->dim.z;
  Order o = options().order;
  if (o == Order::Random) {
    Worker& w = worker();
    make_order(w, b->nthreads);
    for (unsigned i : w.order) {
      tls_tid = make_uint3(i % bx, (i / bx) % by, i / (bx * by));
      call();
    }
  } else if (o == Order::Reverse) {
    for (unsigned z = bz; z-- > 0;)
      for (unsigned y = by; y-- > 0;)
        for (unsigned x = bx; x-- > 0;) {
          tls_tid = make_uint3(x, y, z);
          call();
        }
  } else {
    for (unsigned z = 0; z < bz; ++z)
      for (unsigned y = 0; y < by; ++y)
        for (unsigned x = 0; x < bx; ++x) {
          tls_tid = make_uint3(x, y, z);
          call();
        }
  }
}

// Whole block as a loop; with the kernel known at compile time it can be inlined.
template <auto F, class Tuple>
void loop_static(Block* b, void* p) {
  auto* pl = static_cast<Payload<Tuple>*>(p);
  Tuple& args = *pl->args;
  for_each_thread(b, [&] { std::apply(F, args); });
}

template <class Fn, class Tuple>
void loop_dynamic(Block* b, void* p) {
  auto* pl = static_cast<Payload<Tuple>*>(p);
  Fn fn = reinterpret_cast<Fn>(pl->fn);
  Tuple& args = *pl->args;
  for_each_thread(b, [&] { std::apply(fn, args); });
}

// What every launch (ordinary or cooperative) sets on a block before its threads run: the
// shapes, the kernel, the shared-memory sizes and the per-thread scratch. Which memory holds
// the threads and the dynamic shared array, and whether it runs as fibers, the caller sets.
inline void prepare_block(Block& b, const KernelInfo& info, const Config& c, Body body, void* payload, size_t static_limit) {
  b.dim = c.block;
  b.grid = c.grid;
  b.nthreads = c.block.x * c.block.y * c.block.z;
  b.kernel = info.name;
  b.body = body;
  b.payload = payload;
  b.dyn_size = c.smem;
  b.static_limit = static_limit;
  if (b.arena.size() < kOptinSmem) b.arena.resize(kOptinSmem);
  if (b.scratch.size() < 16 * (size_t)b.nthreads) b.scratch.resize(16 * (size_t)b.nthreads);
}

// Block number k of a grid (x fastest), as blockIdx.
inline uint3 block_index(unsigned long long k, dim3 grid) {
  return make_uint3((unsigned)(k % grid.x), (unsigned)((k / grid.x) % grid.y), (unsigned)(k / ((unsigned long long)grid.x * grid.y)));
}

inline void run_grid(const KernelInfo& info, const Config& c, Body body, Loop loop, void* payload, const void* fn) {
  install_handlers();
  const Options& o = options();
  const unsigned long long nblocks = (unsigned long long)c.grid.x * c.grid.y * c.grid.z;
  const unsigned nthreads = c.block.x * c.block.y * c.block.z;
  size_t limit = kDefaultSmem;
  auto it = func_smem_limits().find(fn);
  if (it != func_smem_limits().end()) limit = std::max<size_t>(limit, (size_t)it->second);
  std::atomic<unsigned long long> next{0};
  auto work = [&](unsigned worker_id) {
    ensure_altstack();
    Worker& w = worker();
    w.threads.resize(std::max<size_t>(w.threads.size(), nthreads));
    w.dyn.resize(std::max(w.dyn.size(), c.smem));
    Block& b = w.block;
    prepare_block(b, info, c, body, payload, limit);
    b.loop = loop;
    b.fibers = info.needs_sync || o.always_fibers;
    b.dyn = c.smem ? w.dyn.data() : nullptr;
    b.threads = w.threads.data();
#ifdef CUSET_ASAN
    std::vector<unsigned char> dyn_heap;
#endif
    for (;;) {
      unsigned long long k = next.fetch_add(1);
      if (k >= nblocks || sticky_error.load(std::memory_order_relaxed)) break;
      if (o.order == Order::Random) w.rng.seed(o.seed * 2654435761u + (unsigned)k);
      b.idx = block_index(k, c.grid);
#ifdef CUSET_ASAN
      unsigned char* heap_dyn = c.smem ? (unsigned char*)malloc(c.smem) : nullptr;
      b.dyn = heap_dyn;
#endif
      run_block(w, &b);
#ifdef CUSET_ASAN
      free(heap_dyn);
#endif
    }
    (void)worker_id;
  };
  unsigned nw = (unsigned)std::min<unsigned long long>(o.workers, nblocks);
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < nw; ++i) pool.emplace_back(work, i);
  work(0);
  for (auto& t : pool) t.join();
}

}  // namespace cuset

#include "cuset_cooperative.h"  // cooperative launches: all blocks resident, grid.sync()

namespace cuset {

// A kernel whose parameters travel as `void**` (one pointer per parameter, as cudaLaunchKernel
// and graph kernel nodes pass them), with a function that launches it from such an array.
// Defined in cuset_graph.h, with the stream capture that records launches as graph nodes.
struct ErasedKernel {
  const void* fn = nullptr;
  KernelInfo info{};
  void (*launch)(const void* fn, const KernelInfo& info, Config cfg, void** args) = nullptr;
  unsigned nparams = 0;
  const size_t* sizes = nullptr;  // bytes of each parameter
  const size_t* aligns = nullptr;
};
template <auto F, bool Static, class... P>
ErasedKernel erased_kernel(const void* fn, const KernelInfo& info);
inline std::atomic<int> captures_active{0};  // stream captures in progress, on any host thread
// A launch into a capturing stream becomes a graph node (or is refused: last_error says); false: run it.
inline bool capture_kernel(const ErasedKernel& k, const Config& cfg, void** args);

// One launch argument converted to its parameter's type as a call would (implicitly). A literal
// NULL or 0 for a pointer parameter arrives here as an integer (forwarding drops its
// null-pointer-constant status), so an integral zero becomes nullptr.
template <class P, class A>
P convert_arg(A&& a) {
  if constexpr (std::is_pointer_v<P> && std::is_integral_v<std::decay_t<A>>) {
    if (a != 0) fault("a non-zero integer passed for a pointer parameter of a kernel");
    return nullptr;
  } else {
    P p = std::forward<A>(a);
    return p;
  }
}

template <auto F, bool Static, class... P, class... A>
void launch_impl(void (*fn)(P...), const KernelInfo& info, Config cfg, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "kernel launched with the wrong number of arguments");
  using Tuple = std::tuple<std::decay_t<P>...>;
  if (int e = sticky_error.load()) {  // the device is in an error state (a failed assert): nothing runs
    last_error = (cudaError_t)e;
    return;
  }
  std::string problem = launch_problem(cfg, (const void*)fn);
  if (!problem.empty()) {
    last_error = problem.find("shared memory") != std::string::npos ? cudaErrorInvalidValue : cudaErrorInvalidConfiguration;
    if (getenv("CUSET_VERBOSE")) fprintf(stderr, "cuset-cuda: launch of %s at %s:%d refused: %s\n", info.name, info.file, info.line, problem.c_str());
    return;
  }
  if (cfg.cooperative) {
    std::string too_many = cooperative_problem(cfg);
    if (!too_many.empty()) {
      last_error = cudaErrorCooperativeLaunchTooLarge;
      if (getenv("CUSET_VERBOSE")) fprintf(stderr, "cuset-cuda: launch of %s at %s:%d refused: %s\n", info.name, info.file, info.line, too_many.c_str());
      return;
    }
  }
  Tuple params(convert_arg<std::decay_t<P>>(std::forward<A>(args))...);
  if (captures_active.load(std::memory_order_relaxed)) {  // recorded by a stream capture instead of run?
    void* argv[sizeof...(P) + 1] = {};
    std::apply([&](auto&... p) { unsigned k = 0; ((argv[k++] = (void*)&p), ...); }, params);
    if (capture_kernel(erased_kernel<F, Static, P...>((const void*)fn, info), cfg, argv)) return;
  }
  if (options().pointer_check) {
    int index = 0;
    std::apply([&](auto&... p) {
      ((
           [&] {
             ++index;
             using T = std::decay_t<decltype(p)>;
             if constexpr (std::is_pointer_v<T>) {
               if (p != nullptr && !device_accessible((const void*)p))
                 fault("kernel " + std::string(info.name) + " launched at " + site(info.file, info.line) + ": argument " +
                       std::to_string(index) + " is a host pointer, not device memory (allocate it with cudaMalloc and copy with cudaMemcpy)");
             }
           }()),
       ...);
    }, params);
  }
  Payload<Tuple> pl{(void*)fn, &params};
  Unprotect open;
  Loop loop;
  if constexpr (Static) loop = &loop_static<F, Tuple>;
  else loop = &loop_dynamic<void (*)(P...), Tuple>;
  if (cfg.cooperative) run_grid_cooperative(info, cfg, &invoke_kernel<void (*)(P...), Tuple>, &pl, (const void*)fn);
  else run_grid(info, cfg, &invoke_kernel<void (*)(P...), Tuple>, loop, &pl, (const void*)fn);
}

// `k<<<...>>>(...)` where k names a kernel: the translator passes it as a template argument.
template <auto F, class... A>
void launch(const KernelInfo& info, Config cfg, A&&... args) {
  launch_impl<F, true>(F, info, cfg, std::forward<A>(args)...);
}

// ... and where the kernel is only known at run time (a function pointer variable).
template <class... P, class... A>
void launch(void (*fn)(P...), const KernelInfo& info, Config cfg, A&&... args) {
  launch_impl<(void (*)(P...))nullptr, false>(fn, info, cfg, std::forward<A>(args)...);
}

}  // namespace cuset

// --- built-in variables ---------------------------------------------------------------------

#define threadIdx (::cuset::tls_tid)
#define blockIdx (::cuset::tls_bid)
#define blockDim (::cuset::tls_bdim)
#define gridDim (::cuset::tls_gdim)
constexpr int warpSize = 32;

// --- barriers and warp collectives -----------------------------------------------------------

inline void __syncthreads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  cuset::Thread* t = cuset::cur_thread;
  t->state = cuset::State::Barrier;
  t->file = file;
  t->line = line;
  t->pred = 0;
  t->gsize = 0;
  cuset::yield_to_scheduler();
}

inline int cuset_barrier_pred(int pred, const char* file, int line) {
  cuset::Thread* t = cuset::cur_thread;
  t->state = cuset::State::Barrier;
  t->file = file;
  t->line = line;
  t->pred = pred != 0;
  t->gsize = 0;
  cuset::yield_to_scheduler();
  return cuset::cur_block->barrier_pred_sum;
}

inline int __syncthreads_count(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cuset_barrier_pred(pred, file, line);
}
inline int __syncthreads_and(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  unsigned live = 0;
  for (unsigned i = 0; i < cuset::cur_block->nthreads; ++i) live += cuset::cur_block->threads[i].state != cuset::State::Done;
  return (unsigned)cuset_barrier_pred(pred, file, line) == live;
}
inline int __syncthreads_or(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return cuset_barrier_pred(pred, file, line) > 0;
}

namespace cuset {
inline void warp_wait(WarpOp op, unsigned mask, const char* file, int line) {
  Thread* t = cur_thread;
  t->state = State::Warp;
  t->op = op;
  t->mask = mask;
  t->file = file;
  t->line = line;
  yield_to_scheduler();
}

// A barrier of the `size` threads from linear index `base` (a thread_block_tile of > 32).
inline void tile_barrier(unsigned base, unsigned size, const char* file, int line) {
  Thread* t = cur_thread;
  t->state = State::Barrier;
  t->file = file;
  t->line = line;
  t->pred = 0;
  t->gbase = base;
  t->gsize = size;
  yield_to_scheduler();
  t->gsize = 0;
}

// coalesced_threads(): the mask of this warp's lanes that reached this call together.
inline unsigned coalesce(const char* file, int line) {
  Thread* t = cur_thread;
  if (!cur_block->fibers) return 1u << t->lane;
  warp_wait(WarpOp::Coalesce, 1u << t->lane, file, line);
  unsigned r;
  memcpy(&r, t->result, 4);
  return r;
}

enum class ShflKind { Idx, Up, Down, Xor };

template <class T>
T shfl(ShflKind kind, unsigned mask, T var, int arg, int width, const char* file, int line) {
  static_assert(sizeof(T) <= 16, "__shfl_*_sync on a type larger than 16 bytes");
  Thread* t = cur_thread;
  unsigned w = (width <= 0 || width > 32 || (width & (width - 1))) ? 32u : (unsigned)width;
  unsigned lane = t->lane, seg = lane & ~(w - 1), src = lane;
  switch (kind) {
    case ShflKind::Idx: src = seg + ((unsigned)arg & (w - 1)); break;
    case ShflKind::Up: src = (lane - seg) >= (unsigned)arg ? lane - arg : lane; break;
    case ShflKind::Down: src = (lane - seg) + (unsigned)arg < w ? lane + arg : lane; break;
    case ShflKind::Xor: src = lane ^ (unsigned)arg; if (src >= seg + w) src = lane; break;
  }
  memset(t->value, 0, 16);
  memcpy(t->value, &var, sizeof(T));
  t->want = src;
  warp_wait(WarpOp::Shfl, mask, file, line);
  T out;
  memcpy(&out, t->result, sizeof(T));
  return out;
}

inline unsigned vote(WarpOp op, unsigned mask, int pred, const char* file, int line) {
  Thread* t = cur_thread;
  t->pred = pred != 0;
  warp_wait(op, mask, file, line);
  unsigned r;
  memcpy(&r, t->result, 4);
  return r;
}

template <class T>
unsigned reduce(WarpOp op, unsigned mask, T v, const char* file, int line) {
  Thread* t = cur_thread;
  memset(t->value, 0, 16);
  memcpy(t->value, &v, 4);
  t->pred = std::is_signed_v<T>;
  warp_wait(op, mask, file, line);
  unsigned r;
  memcpy(&r, t->result, 4);
  return r;
}
}  // namespace cuset

template <class T>
T __shfl_sync(unsigned mask, T var, int src, int width = 32, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return cuset::shfl(cuset::ShflKind::Idx, mask, var, src, width, f, l);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return cuset::shfl(cuset::ShflKind::Up, mask, var, (int)delta, width, f, l);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return cuset::shfl(cuset::ShflKind::Down, mask, var, (int)delta, width, f, l);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return cuset::shfl(cuset::ShflKind::Xor, mask, var, lane_mask, width, f, l);
}
inline unsigned __ballot_sync(unsigned mask, int pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return cuset::vote(cuset::WarpOp::Ballot, mask, pred, f, l);
}
inline int __any_sync(unsigned mask, int pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (int)cuset::vote(cuset::WarpOp::Any, mask, pred, f, l);
}
inline int __all_sync(unsigned mask, int pred, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  return (int)cuset::vote(cuset::WarpOp::All, mask, pred, f, l);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  cuset::vote(cuset::WarpOp::Sync, mask, 0, f, l);
}
template <class T>
unsigned __match_any_sync(unsigned mask, T value, const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
  cuset::Thread* t = cuset::cur_thread;
  memset(t->value, 0, 16);
  memcpy(t->value, &value, sizeof(T));
  cuset::warp_wait(cuset::WarpOp::MatchAny, mask, f, l);
  unsigned r;
  memcpy(&r, t->result, 4);
  return r;
}
inline unsigned __activemask() {
  cuset::Block* b = cuset::cur_block;
  cuset::Thread* t = cuset::cur_thread;
  if (!b->fibers) return 0xffffffffu;
  unsigned m = 0, base = t->warp * 32;
  for (unsigned l = 0; l < 32 && base + l < b->nthreads; ++l) m |= (b->threads[base + l].state != cuset::State::Done) << l;
  return m;
}
inline unsigned __lanemask_lt() {
  unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return (1u << (linear % 32)) - 1;
}
inline unsigned __reduce_add_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return cuset::reduce(cuset::WarpOp::RedAdd, mask, v, f, l); }
inline int __reduce_add_sync(unsigned mask, int v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return (int)cuset::reduce(cuset::WarpOp::RedAdd, mask, v, f, l); }
inline unsigned __reduce_min_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return cuset::reduce(cuset::WarpOp::RedMin, mask, v, f, l); }
inline int __reduce_min_sync(unsigned mask, int v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return (int)cuset::reduce(cuset::WarpOp::RedMin, mask, v, f, l); }
inline unsigned __reduce_max_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return cuset::reduce(cuset::WarpOp::RedMax, mask, v, f, l); }
inline int __reduce_max_sync(unsigned mask, int v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return (int)cuset::reduce(cuset::WarpOp::RedMax, mask, v, f, l); }
inline unsigned __reduce_and_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return cuset::reduce(cuset::WarpOp::RedAnd, mask, v, f, l); }
inline unsigned __reduce_or_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return cuset::reduce(cuset::WarpOp::RedOr, mask, v, f, l); }
inline unsigned __reduce_xor_sync(unsigned mask, unsigned v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) { return cuset::reduce(cuset::WarpOp::RedXor, mask, v, f, l); }

// --- memory fences, timing, traps -----------------------------------------------------------

inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline long long clock64() { return (long long)std::chrono::steady_clock::now().time_since_epoch().count(); }
namespace cuset {
inline unsigned long long globaltimer() { return (unsigned long long)clock64(); }
}  // namespace cuset
// A template, so that code defining its own __globaltimer() (reading %globaltimer by inline PTX,
// as CUDA offers no such function) gets its own, no clash.
template <class = void> inline unsigned long long __globaltimer() { return cuset::globaltimer(); }
inline void __nanosleep(unsigned) {}
// assert(): glibc's macro calls __assert_fail, which this definition replaces (the program's
// own symbol wins over libc's). In host code it prints glibc's line and aborts as before; in
// a kernel it prints CUDA's line, marks the device with cudaErrorAssert and ends the thread
// (a fiber is marked done and never resumed; a block run as a plain loop ends there).
extern "C" __attribute__((weak, noreturn)) void __assert_fail(const char* expr, const char* file, unsigned int line, const char* func) noexcept {
  cuset::Block* b = cuset::cur_block;
  if (!b) {
    fflush(stdout);
    fprintf(stderr, "%s: %u: %s: Assertion `%s' failed.\n", file, line, func, expr);
    abort();
  }
  uint3 t = cuset::cur_thread && b->fibers ? cuset::cur_thread->idx : cuset::tls_tid;
  fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file, line, func, b->idx.x, b->idx.y,
          b->idx.z, t.x, t.y, t.z, expr);
  int none = 0;
  cuset::sticky_error.compare_exchange_strong(none, (int)cudaErrorAssert);
  if (!b->fibers) longjmp(b->abort_jmp, 1);
  cuset::cur_thread->state = cuset::State::Done;
  cuset::yield_to_scheduler();
  cuset::fault("internal: a thread that failed an assert() was resumed");
}

[[noreturn]] inline void __trap() { cuset::fault("__trap() in " + cuset::where()); }
[[noreturn]] inline void __brkpt() { cuset::fault("__brkpt() in " + cuset::where()); }

// --- atomics (real ones: blocks run in parallel) ---------------------------------------------

namespace cuset {
template <class T, class F>
T atomic_update(T* addr, F f) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomic on an unsupported size");
  using U = std::conditional_t<sizeof(T) == 2, unsigned short, std::conditional_t<sizeof(T) == 4, unsigned, unsigned long long>>;
  U* p = reinterpret_cast<U*>(addr);
  U old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    T cur;
    memcpy(&cur, &old, sizeof(T));
    T next = f(cur);
    U want;
    memcpy(&want, &next, sizeof(T));
    if (__atomic_compare_exchange_n(p, &old, want, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) return cur;
  }
}
}  // namespace cuset

#define CUSET_ATOMIC_INT(T)                                                                              \
  inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }                 \
  inline T atomicSub(T* a, T v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }                 \
  inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }               \
  inline T atomicMin(T* a, T v) { return cuset::atomic_update(a, [v](T o) { return o < v ? o : v; }); } \
  inline T atomicMax(T* a, T v) { return cuset::atomic_update(a, [v](T o) { return o > v ? o : v; }); } \
  inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }                 \
  inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }                   \
  inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }                 \
  inline T atomicCAS(T* a, T cmp, T v) {                                                               \
    __atomic_compare_exchange_n(a, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                \
    return cmp;                                                                                        \
  }
CUSET_ATOMIC_INT(int)
CUSET_ATOMIC_INT(unsigned int)
CUSET_ATOMIC_INT(unsigned long long int)
CUSET_ATOMIC_INT(long long int)
#undef CUSET_ATOMIC_INT

inline unsigned short atomicCAS(unsigned short* a, unsigned short cmp, unsigned short v) {
  __atomic_compare_exchange_n(a, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
inline float atomicAdd(float* a, float v) { return cuset::atomic_update(a, [v](float o) { return o + v; }); }
inline double atomicAdd(double* a, double v) { return cuset::atomic_update(a, [v](double o) { return o + v; }); }
inline __half atomicAdd(__half* a, __half v) { return cuset::atomic_update(a, [v](__half o) { return __float2half(__half2float(o) + __half2float(v)); }); }
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* a, __nv_bfloat16 v) {
  return cuset::atomic_update(a, [v](__nv_bfloat16 o) { return __float2bfloat16(__bfloat162float(o) + __bfloat162float(v)); });
}
inline float atomicExch(float* a, float v) { return cuset::atomic_update(a, [v](float) { return v; }); }
inline float atomicMax(float* a, float v) { return cuset::atomic_update(a, [v](float o) { return o > v ? o : v; }); }
inline float atomicMin(float* a, float v) { return cuset::atomic_update(a, [v](float o) { return o < v ? o : v; }); }
inline unsigned atomicInc(unsigned* a, unsigned v) { return cuset::atomic_update(a, [v](unsigned o) { return o >= v ? 0u : o + 1; }); }
inline unsigned atomicDec(unsigned* a, unsigned v) { return cuset::atomic_update(a, [v](unsigned o) { return (o == 0 || o > v) ? v : o - 1; }); }
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicExch_block atomicExch
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin
#define atomicCAS_block atomicCAS
#define atomicOr_block atomicOr
#define atomicAnd_block atomicAnd
#define atomicXor_block atomicXor
#define atomicInc_block atomicInc
#define atomicDec_block atomicDec
#define atomicSub_system atomicSub
#define atomicExch_system atomicExch
#define atomicMax_system atomicMax
#define atomicMin_system atomicMin
#define atomicCAS_system atomicCAS
#define atomicOr_system atomicOr
#define atomicAnd_system atomicAnd
#define atomicXor_system atomicXor
#define atomicInc_system atomicInc
#define atomicDec_system atomicDec

// --- math and bit intrinsics ----------------------------------------------------------------

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline float __powf(float a, float b) { return powf(a, b); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float sinpif(float x) { return sinf(x * 3.14159265358979323846f); }
inline float cospif(float x) { return cosf(x * 3.14159265358979323846f); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752); }
inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
inline unsigned __float_as_uint(float x) { unsigned i; memcpy(&i, &x, 4); return i; }
inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }
inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline int __float2int_rd(float x) { return (int)floorf(x); }
inline int __float2int_ru(float x) { return (int)ceilf(x); }
inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline float __double2float_rn(double x) { return (float)x; }
inline int __double2int_rn(double x) { return (int)nearbyint(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
inline int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xFFFFFFu) * (b & 0xFFFFFFu); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return (unsigned long long)(((unsigned __int128)a * b) >> 64); }
inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
inline unsigned __sad(int a, int b, unsigned c) { return (unsigned)std::abs(a - b) + c; }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
}
// Integer min/max by name (CUDA's device math library), bit-field and byte intrinsics.
// Templates with a defaulted parameter: host code that defines its own `umin(uint, uint)` (as
// some .cpp files do, nvcc never showing them CUDA's device library) gets its own, no clash.
template <class = void> inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
template <class = void> inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
template <class = void> inline long long llmin(long long a, long long b) { return a < b ? a : b; }
template <class = void> inline long long llmax(long long a, long long b) { return a > b ? a : b; }
template <class = void> inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
template <class = void> inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline unsigned long long __brevll(unsigned long long x) { return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32)); }
// funnel shifts: the 64-bit hi:lo shifted, the shift taken mod 32 (_l, _r) or clamped to 32 (_lc, _rc)
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) { return (unsigned)((((unsigned long long)hi << 32 | lo) << (s & 31)) >> 32); }
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) { return (unsigned)((((unsigned long long)hi << 32 | lo) << std::min(s, 32u)) >> 32); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { return (unsigned)(((unsigned long long)hi << 32 | lo) >> (s & 31)); }
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) { return (unsigned)(((unsigned long long)hi << 32 | lo) >> std::min(s, 32u)); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return (a > b ? a - b : b - a) + c; }
inline unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }
inline int __fns(unsigned mask, unsigned base, int offset) {
  // the offset-th set bit of mask counting from bit `base` (up for offset > 0, down for < 0); 0xffffffff if none
  if (offset == 0) return -1;
  int step = offset > 0 ? 1 : -1, left = offset > 0 ? offset : -offset;
  for (int b = (int)base; b >= 0 && b < 32; b += step)
    if ((mask >> b & 1) && --left == 0) return b;
  return -1;
}
inline double __dsqrt_rn(double x) { return sqrt(x); }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline double __dsub_rn(double a, double b) { return a - b; }
// __fadd_rz and the other directed roundings: cuset_rounding.h
inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
inline unsigned __float2uint_rd(float x) { return (unsigned)floorf(x); }
inline unsigned __float2uint_ru(float x) { return (unsigned)ceilf(x); }
inline int __double2int_rz(double x) { return (int)x; }
inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return (int)__double_as_longlong(x); }
inline double __hiloint2double(int hi, int lo) { return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo)); }
inline float __ll2float_rn(long long x) { return (float)x; }
inline double __int2double_rn(int x) { return (double)x; }
inline double __ll2double_rn(long long x) { return (double)x; }

// half precision: what cuda_fp16.hpp leaves to device code only (computed in float, rounded once)
#define CUSET_H1(name, expr) \
  inline __half name(const __half a) { float x = __half2float(a); return __float2half(expr); }
#define CUSET_H2(name, one) \
  inline __half2 name(const __half2 a) { return __halves2half2(one(__low2half(a)), one(__high2half(a))); }
CUSET_H1(hsqrt, sqrtf(x)) CUSET_H1(hrsqrt, 1.0f / sqrtf(x)) CUSET_H1(hrcp, 1.0f / x) CUSET_H1(hexp, expf(x))
CUSET_H1(hexp2, exp2f(x)) CUSET_H1(hexp10, exp10f(x)) CUSET_H1(hlog, logf(x)) CUSET_H1(hlog2, log2f(x))
CUSET_H1(hlog10, log10f(x)) CUSET_H1(hsin, sinf(x)) CUSET_H1(hcos, cosf(x)) CUSET_H1(htanh, tanhf(x))
CUSET_H1(htanh_approx, tanhf(x)) CUSET_H1(hceil, ceilf(x)) CUSET_H1(hfloor, floorf(x)) CUSET_H1(htrunc, truncf(x))
CUSET_H1(hrint, nearbyintf(x))
CUSET_H2(h2sqrt, hsqrt) CUSET_H2(h2rsqrt, hrsqrt) CUSET_H2(h2rcp, hrcp) CUSET_H2(h2exp, hexp) CUSET_H2(h2exp2, hexp2)
CUSET_H2(h2exp10, hexp10) CUSET_H2(h2log, hlog) CUSET_H2(h2log2, hlog2) CUSET_H2(h2log10, hlog10) CUSET_H2(h2sin, hsin)
CUSET_H2(h2cos, hcos) CUSET_H2(h2tanh, htanh) CUSET_H2(h2tanh_approx, htanh_approx) CUSET_H2(h2ceil, hceil)
CUSET_H2(h2floor, hfloor) CUSET_H2(h2trunc, htrunc) CUSET_H2(h2rint, hrint)
#undef CUSET_H1
#undef CUSET_H2
inline __half __hfma(const __half a, const __half b, const __half c) { return __float2half(fmaf(__half2float(a), __half2float(b), __half2float(c))); }
inline __half __hfma_sat(const __half a, const __half b, const __half c) { return __float2half(__saturatef(fmaf(__half2float(a), __half2float(b), __half2float(c)))); }
inline __half __hfma_relu(const __half a, const __half b, const __half c) { float r = fmaf(__half2float(a), __half2float(b), __half2float(c)); return __float2half(r < 0.f ? 0.f : r); }
inline __half2 __hfma2(const __half2 a, const __half2 b, const __half2 c) {
  return __halves2half2(__hfma(__low2half(a), __low2half(b), __low2half(c)), __hfma(__high2half(a), __high2half(b), __high2half(c)));
}
inline __half2 __hfma2_sat(const __half2 a, const __half2 b, const __half2 c) {
  return __halves2half2(__hfma_sat(__low2half(a), __low2half(b), __low2half(c)), __hfma_sat(__high2half(a), __high2half(b), __high2half(c)));
}
inline __half2 __hfma2_relu(const __half2 a, const __half2 b, const __half2 c) {
  return __halves2half2(__hfma_relu(__low2half(a), __low2half(b), __low2half(c)), __hfma_relu(__high2half(a), __high2half(b), __high2half(c)));
}
inline int __half2int_rn(const __half h) { return (int)nearbyintf(__half2float(h)); }
inline int __half2int_rd(const __half h) { return (int)floorf(__half2float(h)); }
inline int __half2int_ru(const __half h) { return (int)ceilf(__half2float(h)); }
inline unsigned __half2uint_rn(const __half h) { return (unsigned)nearbyintf(__half2float(h)); }
inline long long __half2ll_rn(const __half h) { return (long long)nearbyintf(__half2float(h)); }
inline short __half2short_rn(const __half h) { return (short)nearbyintf(__half2float(h)); }

template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }

// CUDA's global min/max overloads (device code calls them unqualified).
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline unsigned min(int a, unsigned b) { return min((unsigned)a, b); }
inline unsigned max(int a, unsigned b) { return max((unsigned)a, b); }
inline unsigned min(unsigned a, int b) { return min(a, (unsigned)b); }
inline unsigned max(unsigned a, int b) { return max(a, (unsigned)b); }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline float min(float a, double b) { return fminf(a, (float)b); }
inline float max(float a, double b) { return fmaxf(a, (float)b); }
inline float min(double a, float b) { return fminf((float)a, b); }
inline float max(double a, float b) { return fmaxf((float)a, b); }
inline float min(int a, float b) { return fminf((float)a, b); }
inline float max(int a, float b) { return fmaxf((float)a, b); }
inline float min(float a, int b) { return fminf(a, (float)b); }
inline float max(float a, int b) { return fmaxf(a, (float)b); }
using std::isinf;
using std::isnan;
using std::isfinite;
using std::signbit;

#include "cuset_runtime_api.h"

#endif  // CUSET_CUDA_H
