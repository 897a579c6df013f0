// cuset_graph.h: CUDA graphs and stream capture for the CPU emulator (included at the end of
// cuset_runtime_api.h; the hooks it calls are declared at that file's top).
//
//   graphs       cudaGraphCreate, cudaGraphAdd{Kernel,Memcpy,Memcpy1D,Memset,Host,Empty,
//                ChildGraph,EventRecord,EventWait,MemAlloc,MemFree}Node, dependencies and edges,
//                node get/set params, clone, destroy, a dot dump
//   executables  cudaGraphInstantiate(WithFlags/WithParams) snapshots the graph; cudaGraphLaunch
//                replays its nodes in a topological order of their dependencies (ties: the
//                order nodes were added). Streams run synchronously here, so a launch has
//                finished when it returns, as every other stream operation has.
//                cudaGraphExec*NodeSetParams change the snapshot; cudaGraphExecUpdate copies
//                the parameters of a graph with the same topology into it.
//   capture      cudaStreamBeginCapture(ToGraph) / EndCapture / IsCapturing / GetCaptureInfo /
//                UpdateCaptureDependencies: work issued to a capturing stream (kernel
//                launches, async memcpy/memset, host functions, cudaMallocAsync/cudaFreeAsync,
//                graph launches) becomes nodes instead of running; an event recorded in the
//                capture carries its dependencies to the streams that wait on it (those join
//                the capture), and EndCapture refuses a fork that was not joined back.
//                CUDA's capture rules are enforced with CUDA's error codes: the legacy stream
//                used while a blocking stream captures (a synchronous cudaMemcpy, say) is
//                cudaErrorStreamCaptureImplicit, synchronizing a capturing stream or the device
//                is cudaErrorStreamCaptureUnsupported, as are cudaMalloc/cudaFree in a capture
//                mode that forbids them (cudaThreadExchangeStreamCaptureMode); each invalidates
//                the capture, whose EndCapture then returns cudaErrorStreamCaptureInvalidated.
//   memory nodes an allocation node reserves its address when it is added (cudaMallocAsync in
//                a capture returns it at once, as CUDA does); the memory is device memory only
//                between the node's run and the free (a free node, cudaFree or cudaFreeAsync):
//                outside that window a kernel argument pointing at it is refused and an access
//                faults. Relaunching a graph whose allocation was not freed is an error.
//
// Kernel nodes hold the kernel as an address and its parameters as bytes. Kernels launched
// with <<<...>>> while capturing bring their types along; for cudaKernelNodeParams::func the
// translator registers every kernel whose address host code takes by name (`(void*)kernel`
// becomes cuset::kernel_ref<kernel>, cuset_launch_api.h) in the registry below, and a node of
// an address nobody registered is reported as unsupported, never guessed.
#pragma once

#include <memory>
#include <set>
#include <thread>

// Members named gridDim / blockDim (cudaKernelNodeParams, cudaLaunchConfig_t) in user code: the
// builtins are macros, so the translator turns `p.gridDim` into `cuset::field_gridDim(p)`.
#pragma push_macro("gridDim")
#pragma push_macro("blockDim")
#undef gridDim
#undef blockDim
namespace cuset {
template <class T>
decltype(auto) field_gridDim(T& x) { return (x.gridDim); }
template <class T>
decltype(auto) field_blockDim(T& x) { return (x.blockDim); }
}  // namespace cuset
#pragma pop_macro("blockDim")
#pragma pop_macro("gridDim")

// --- the objects behind the handles ----------------------------------------------------------

namespace cuset {

// The address range an allocation node owns for its graph's lifetime (see the file comment).
struct GraphAlloc {
  Allocation a{};
  bool live = false;
  ~GraphAlloc();
};
}  // namespace cuset

struct CUgraphNode_st {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  CUgraph_st* owner = nullptr;
  std::vector<CUgraphNode_st*> deps;  // the nodes this one waits for
  bool enabled = true;                // cudaGraphNodeSetEnabled (executables only)
  // kernel: the kernel, its launch configuration, its parameters' bytes and their addresses
  cuset::ErasedKernel kernel{};
  cuset::Config cfg{dim3(1), dim3(1)};
  std::vector<unsigned char> argbytes;
  std::vector<void*> argv;
  cudaMemcpy3DParms copy{};
  cudaMemsetParams set{};
  cudaHostNodeParams host{};
  CUgraph_st* child = nullptr;  // owned copy (child graph node)
  cudaEvent_t event = nullptr;
  std::shared_ptr<cuset::GraphAlloc> mem;  // alloc and free nodes
  cudaMemAllocNodeParams alloc{};
};

struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
  ~CUgraph_st() {
    for (auto& n : nodes) delete n->child;
  }
};

struct CUgraphExec_st {
  CUgraph_st graph;                                               // the snapshot
  std::map<const CUgraphNode_st*, CUgraphNode_st*> of;             // original node -> its copy
  std::vector<CUgraphNode_st*> order;                              // topological
  unsigned long long flags = 0;
};

namespace cuset {

// --- kernels by address -------------------------------------------------------------------------

template <auto F, bool Static, class... P>
void launch_erased(const void* fn, const KernelInfo& info, Config cfg, void** args) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    launch_impl<F, Static>((void (*)(P...))fn, info, cfg, *static_cast<std::decay_t<P>*>(args[I])...);
  }(std::index_sequence_for<P...>{});
}

template <auto F, bool Static, class... P>
ErasedKernel erased_kernel(const void* fn, const KernelInfo& info) {
  static constexpr size_t sizes[] = {sizeof(std::decay_t<P>)..., 0};
  static constexpr size_t aligns[] = {alignof(std::decay_t<P>)..., 1};
  return ErasedKernel{fn, info, &launch_erased<F, Static, P...>, (unsigned)sizeof...(P), sizes, aligns};
}

inline std::mutex& kernel_registry_mu() {
  static std::mutex m;
  return m;
}
inline std::map<const void*, ErasedKernel>& kernel_registry() {
  static auto* m = new std::map<const void*, ErasedKernel>();  // never destroyed: used at exit
  return *m;
}

template <auto F, class... P>
ErasedKernel erased_of(void (*)(P...), const KernelInfo& info) {
  return erased_kernel<F, true, P...>((const void*)F, info);
}

inline const ErasedKernel* find_kernel(const void* fn) {
  std::lock_guard<std::mutex> lk(kernel_registry_mu());
  auto it = kernel_registry().find(fn);
  return it == kernel_registry().end() ? nullptr : &it->second;
}

// The parameters' bytes, laid out with each one's alignment; argv points at each.
inline void set_kernel_args(CUgraphNode_st& n, void** args) {
  const ErasedKernel& k = n.kernel;
  std::vector<size_t> off(k.nparams);
  size_t total = 0;
  for (unsigned i = 0; i < k.nparams; ++i) {
    total = (total + k.aligns[i] - 1) / k.aligns[i] * k.aligns[i];
    off[i] = total;
    total += k.sizes[i];
  }
  n.argbytes.assign(total, 0);
  n.argv.assign(k.nparams + 1, nullptr);
  for (unsigned i = 0; i < k.nparams; ++i) {
    memcpy(n.argbytes.data() + off[i], args[i], k.sizes[i]);
    n.argv[i] = n.argbytes.data() + off[i];
  }
}

inline void rebase_args(CUgraphNode_st& n, const CUgraphNode_st& from) {
  for (unsigned i = 0; i < n.kernel.nparams; ++i)
    n.argv[i] = n.argbytes.data() + ((unsigned char*)from.argv[i] - from.argbytes.data());
}

// A kernel node from cudaKernelNodeParams (func by address, kernelParams as void**).
inline cudaError_t kernel_node_params(CUgraphNode_st& n, const cudaKernelNodeParams* p) {
  if (!p || !p->func) return cudaErrorInvalidDeviceFunction;
  const ErasedKernel* k = find_kernel(p->func);
  if (!k)
    unsupported("a graph kernel node of a kernel address the translator never saw taken by name (set func to (void*)kernel in the .cu file)");
  if (p->extra) unsupported("kernel node parameters passed through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER); use kernelParams");
  if (k->nparams && !p->kernelParams) return cudaErrorInvalidValue;
  n.type = cudaGraphNodeTypeKernel;
  n.kernel = *k;
  n.cfg = Config(field_gridDim(*p), field_blockDim(*p), p->sharedMemBytes);
  set_kernel_args(n, p->kernelParams);
  return cudaSuccess;
}

inline void kernel_node_get(const CUgraphNode_st& n, cudaKernelNodeParams* p) {
  memset(p, 0, sizeof *p);
  p->func = const_cast<void*>(n.kernel.fn);
  field_gridDim(*p) = n.cfg.grid;
  field_blockDim(*p) = n.cfg.block;
  p->sharedMemBytes = (unsigned)n.cfg.smem;
  p->kernelParams = const_cast<void**>(n.argv.data());
}

// --- graph structure ------------------------------------------------------------------------------

inline bool in_graph(CUgraph_st* g, const CUgraphNode_st* n) {
  return g && n && n->owner == g;
}

inline CUgraphNode_st* add_node(CUgraph_st* g, cudaGraphNodeType type, const CUgraphNode_st* const* deps, size_t ndeps) {
  auto n = std::make_unique<CUgraphNode_st>();
  n->type = type;
  n->owner = g;
  for (size_t i = 0; i < ndeps; ++i)
    if (std::find(n->deps.begin(), n->deps.end(), deps[i]) == n->deps.end()) n->deps.push_back(const_cast<CUgraphNode_st*>(deps[i]));
  g->nodes.push_back(std::move(n));
  return g->nodes.back().get();
}

inline cudaError_t check_deps(CUgraph_st* g, const cudaGraphNode_t* deps, size_t n) {
  if (!g || (n && !deps)) return cudaErrorInvalidValue;
  for (size_t i = 0; i < n; ++i)
    if (!in_graph(g, deps[i])) return cudaErrorInvalidValue;
  return cudaSuccess;
}

inline CUgraph_st* clone_graph(const CUgraph_st& src, std::map<const CUgraphNode_st*, CUgraphNode_st*>* map_out = nullptr);

// A node's copy in `g` (dependencies resolved later by the caller).
inline std::unique_ptr<CUgraphNode_st> copy_node(const CUgraphNode_st& from, CUgraph_st* g) {
  auto n = std::make_unique<CUgraphNode_st>(from);
  n->owner = g;
  n->deps.clear();
  if (from.type == cudaGraphNodeTypeKernel) rebase_args(*n, from);
  if (from.child) n->child = clone_graph(*from.child);
  return n;
}

inline CUgraph_st* clone_graph(const CUgraph_st& src, std::map<const CUgraphNode_st*, CUgraphNode_st*>* map_out) {
  auto* g = new CUgraph_st();
  std::map<const CUgraphNode_st*, CUgraphNode_st*> map;
  for (auto& n : src.nodes) {
    g->nodes.push_back(copy_node(*n, g));
    map[n.get()] = g->nodes.back().get();
  }
  for (size_t i = 0; i < src.nodes.size(); ++i)
    for (CUgraphNode_st* d : src.nodes[i]->deps) g->nodes[i]->deps.push_back(map.at(d));
  if (map_out) *map_out = std::move(map);
  return g;
}

// Kahn's algorithm, ties broken by the order nodes were added. False: a cycle.
inline bool topological(const CUgraph_st& g, std::vector<CUgraphNode_st*>& out) {
  std::map<const CUgraphNode_st*, size_t> index, waiting;
  for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].get()] = i;
  std::vector<std::vector<size_t>> users(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    waiting[g.nodes[i].get()] = g.nodes[i]->deps.size();
    for (CUgraphNode_st* d : g.nodes[i]->deps) users[index.at(d)].push_back(i);
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i]->deps.empty()) ready.insert(i);
  out.clear();
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    out.push_back(g.nodes[i].get());
    for (size_t u : users[i])
      if (--waiting[g.nodes[u].get()] == 0) ready.insert(u);
  }
  return out.size() == g.nodes.size();
}

// --- memory nodes -------------------------------------------------------------------------------

struct CaptureState;
inline CaptureState& capture_state();

inline std::mutex& graph_alloc_mu() {
  static std::mutex m;
  return m;
}
inline std::map<uintptr_t, std::weak_ptr<GraphAlloc>>& graph_allocs() {
  static auto* m = new std::map<uintptr_t, std::weak_ptr<GraphAlloc>>();
  return *m;
}

inline void close_range(const Allocation& a) {
  if (a.map_base) mprotect(a.map_base, a.map_len - page_size(), PROT_NONE);
}

inline std::shared_ptr<GraphAlloc> reserve_graph_alloc(size_t size) {
  void* p = device_alloc(size, Space::Device);
  if (!p) return nullptr;
  auto ga = std::make_shared<GraphAlloc>();
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    auto it = r.by_base.find((uintptr_t)p);
    ga->a = it->second;
    r.by_base.erase(it);  // not device memory until the node runs
  }
  close_range(ga->a);
  std::lock_guard<std::mutex> lk(graph_alloc_mu());
  graph_allocs()[(uintptr_t)p] = ga;
  return ga;
}

inline cudaError_t activate(GraphAlloc& ga) {
  if (ga.live) return cudaErrorInvalidValue;  // relaunched before its allocation was freed
  Allocation& a = ga.a;
  if (a.map_base) mprotect(a.map_base, a.map_len - page_size(), PROT_READ | PROT_WRITE);
  fill_garbage((void*)a.base, a.size);
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  if (r.protected_now) set_protection(a, false);
  r.by_base[a.base] = a;
  ga.live = true;
  return cudaSuccess;
}

inline cudaError_t deactivate(GraphAlloc& ga) {
  if (!ga.live) return cudaErrorInvalidValue;  // freed twice
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    r.by_base.erase(ga.a.base);
  }
  close_range(ga.a);
  ga.live = false;
  return cudaSuccess;
}

inline std::shared_ptr<GraphAlloc> find_graph_alloc(const void* p) {
  std::lock_guard<std::mutex> lk(graph_alloc_mu());
  auto it = graph_allocs().find((uintptr_t)p);
  return it == graph_allocs().end() ? nullptr : it->second.lock();
}

inline GraphAlloc::~GraphAlloc() {
  {
    std::lock_guard<std::mutex> lk(graph_alloc_mu());
    graph_allocs().erase(a.base);
  }
  if (live) return;  // still allocated: an ordinary allocation now, for cudaFree to release
#ifdef CUSET_ASAN
  free((void*)a.base);
#else
  munmap(a.map_base, a.map_len);
#endif
}

// cudaFree / cudaFreeAsync of memory a graph allocated: -1 when `p` is not such memory.
inline int graph_alloc_free(void* p) {
  auto ga = find_graph_alloc(p);
  return ga ? (int)deactivate(*ga) : -1;
}

// --- replay ---------------------------------------------------------------------------------------

inline cudaError_t copy3d(const cudaMemcpy3DParms& c, cudaStream_t s) {
  if (c.srcArray || c.dstArray) unsupported("a memcpy node or cudaMemcpy3D with a CUDA array (textures and surfaces are not emulated)");
  const cudaExtent& e = c.extent;
  for (size_t z = 0; z < e.depth; ++z)
    for (size_t y = 0; y < e.height; ++y) {
      const char* src = (const char*)c.srcPtr.ptr + ((c.srcPos.z + z) * c.srcPtr.ysize + c.srcPos.y + y) * c.srcPtr.pitch + c.srcPos.x;
      char* dst = (char*)c.dstPtr.ptr + ((c.dstPos.z + z) * c.dstPtr.ysize + c.dstPos.y + y) * c.dstPtr.pitch + c.dstPos.x;
      cudaError_t err = copy(dst, src, e.width, c.kind);
      if (err != cudaSuccess) return err;
    }
  return cudaSuccess;
}

inline cudaError_t memset2d(const cudaMemsetParams& m) {
  const size_t es = m.elementSize, row = m.width * es;
  for (size_t y = 0; y < m.height; ++y) {
    char* dst = (char*)m.dst + y * m.pitch;
    if (!range_ok(dst, row, true)) return cudaErrorInvalidValue;
    Unprotect open;
    for (size_t i = 0; i < m.width; ++i) memcpy(dst + i * es, &m.value, es);  // little-endian: the low bytes
  }
  return cudaSuccess;
}

inline cudaError_t run_graph(const CUgraph_st& g, const std::vector<CUgraphNode_st*>* order, cudaStream_t s);

inline cudaError_t run_node(const CUgraphNode_st& n, cudaStream_t s) {
  if (!n.enabled) return cudaSuccess;
  switch (n.type) {
    case cudaGraphNodeTypeKernel: {
      cudaError_t before = last_error;
      last_error = cudaSuccess;
      Config c = n.cfg;
      c.stream = s;
      n.kernel.launch(n.kernel.fn, n.kernel.info, c, const_cast<void**>(n.argv.data()));
      cudaError_t e = last_error;
      last_error = e == cudaSuccess ? before : e;
      if (e == cudaSuccess && sticky_error.load()) e = (cudaError_t)sticky_error.load();
      return e;
    }
    case cudaGraphNodeTypeMemcpy: return copy3d(n.copy, s);
    case cudaGraphNodeTypeMemset: return memset2d(n.set);
    case cudaGraphNodeTypeHost: n.host.fn(n.host.userData); return cudaSuccess;
    case cudaGraphNodeTypeGraph: return run_graph(*n.child, nullptr, s);
    case cudaGraphNodeTypeEventRecord: return cudaEventRecord(n.event, s);
    case cudaGraphNodeTypeMemAlloc: return activate(*n.mem);
    case cudaGraphNodeTypeMemFree: return deactivate(*n.mem);
    default: return cudaSuccess;  // empty, event wait (streams are synchronous)
  }
}

inline cudaError_t run_graph(const CUgraph_st& g, const std::vector<CUgraphNode_st*>* order, cudaStream_t s) {
  std::vector<CUgraphNode_st*> local;
  if (!order) {
    if (!topological(g, local)) return cudaErrorInvalidValue;
    order = &local;
  }
  for (const CUgraphNode_st* n : *order) {
    cudaError_t e = run_node(*n, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// --- stream capture -------------------------------------------------------------------------------

struct Capture {
  CUgraph_st* graph = nullptr;
  cudaStream_t origin = nullptr;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  unsigned long long id = 0;
  bool invalid = false;
  bool own_graph = true;  // false: cudaStreamBeginCaptureToGraph's graph, the caller's
};

// Where a capturing stream is (its capture, the nodes its next work depends on); an event
// recorded in a capture holds the same.
struct Point {
  Capture* cap = nullptr;
  std::vector<CUgraphNode_st*> deps;
};

struct CaptureState {
  std::recursive_mutex mu;
  std::map<cudaStream_t, Point> streams;
  std::map<cudaEvent_t, Point> events;
  std::vector<std::unique_ptr<Capture>> captures;
  unsigned long long next_id = 1;
};

inline CaptureState& capture_state() {
  static auto* s = new CaptureState();
  return *s;
}

inline thread_local cudaStreamCaptureMode thread_capture_mode = cudaStreamCaptureModeGlobal;

inline bool legacy(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy; }

inline bool blocking(cudaStream_t s) {
  if (s == cudaStreamPerThread) return true;
  return !(s->flags & cudaStreamNonBlocking);
}

inline Point* capturing(cudaStream_t s) {
  auto& st = capture_state();
  auto it = st.streams.find(s);
  return it == st.streams.end() || !it->second.cap ? nullptr : &it->second;
}

inline void end_capture(Capture* c) {
  auto& st = capture_state();
  for (auto it = st.streams.begin(); it != st.streams.end();) it = it->second.cap == c ? st.streams.erase(it) : std::next(it);
  for (auto it = st.events.begin(); it != st.events.end();) it = it->second.cap == c ? st.events.erase(it) : std::next(it);
  for (auto it = st.captures.begin(); it != st.captures.end(); ++it)
    if (it->get() == c) {
      st.captures.erase(it);
      break;
    }
  captures_active.fetch_sub(1);
}

// The legacy stream synchronizes with every blocking stream: using it while one captures would
// make captured work wait for it, which CUDA refuses (and invalidates that capture).
inline int legacy_use() {
  if (!captures_active.load(std::memory_order_relaxed)) return -1;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  bool hit = false;
  for (auto& kv : st.streams)
    if (kv.second.cap && !legacy(kv.first) && blocking(kv.first)) {
      kv.second.cap->invalid = true;
      hit = true;
    }
  return hit ? (int)cudaErrorStreamCaptureImplicit : -1;
}

// `on(point)` under the capture lock when `s` is capturing; -1 when it is not (run the work
// now), and the legacy stream's implicit-sync rule first.
template <class On>
int with_capture(cudaStream_t s, On&& on) {
  if (!captures_active.load(std::memory_order_relaxed)) return -1;
  if (legacy(s)) return legacy_use();
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  Point* p = capturing(s);
  return p ? on(*p) : -1;
}

// Adds a node of `type` to the capture of `s` after its current dependencies, filled by `fill`
// (which may refuse with an error). -1: `s` is not capturing, run the work now.
template <class Fill>
int capture_node(cudaStream_t s, cudaGraphNodeType type, Fill&& fill) {
  return with_capture(s, [&](Point& p) -> int {
    if (p.cap->invalid) return cudaErrorStreamCaptureInvalidated;
    CUgraphNode_st* n = add_node(p.cap->graph, type, p.deps.data(), p.deps.size());
    cudaError_t e = fill(*n);
    if (e != cudaSuccess) {
      p.cap->graph->nodes.pop_back();
      return e;
    }
    p.deps.assign(1, n);
    return cudaSuccess;
  });
}

inline bool capture_kernel(const ErasedKernel& k, const Config& cfg, void** args) {
  int e = capture_node(cfg.stream, cudaGraphNodeTypeKernel, [&](CUgraphNode_st& n) {
    n.kernel = k;
    n.cfg = cfg;
    set_kernel_args(n, args);
    return cudaSuccess;
  });
  if (e < 0) return false;
  if (e != cudaSuccess) last_error = (cudaError_t)e;
  return true;
}

inline cudaMemcpy3DParms linear_copy(void* dst, const void* src, size_t width, size_t height, size_t dpitch, size_t spitch, cudaMemcpyKind kind) {
  cudaMemcpy3DParms c{};
  c.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), spitch, width, height);
  c.dstPtr = make_cudaPitchedPtr(dst, dpitch, width, height);
  c.extent = make_cudaExtent(width, height, 1);
  c.kind = kind;
  return c;
}

inline int capture_copy(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  return capture_node(s, cudaGraphNodeTypeMemcpy, [&](CUgraphNode_st& node) {
    node.copy = linear_copy(dst, src, n, 1, n, n, kind);
    return cudaSuccess;
  });
}
inline int capture_copy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t w, size_t h, cudaMemcpyKind kind, cudaStream_t s) {
  return capture_node(s, cudaGraphNodeTypeMemcpy, [&](CUgraphNode_st& node) {
    node.copy = linear_copy(dst, src, w, h, dpitch, spitch, kind);
    return cudaSuccess;
  });
}
inline int capture_set(void* p, size_t pitch, int value, size_t w, size_t h, cudaStream_t s) {
  return capture_node(s, cudaGraphNodeTypeMemset, [&](CUgraphNode_st& node) {
    node.set = cudaMemsetParams{p, pitch, (unsigned)(value & 0xFF), 1, w, h};
    return cudaSuccess;
  });
}
inline int capture_host(cudaStream_t s, cudaHostFn_t fn, void* data) {
  return capture_node(s, cudaGraphNodeTypeHost, [&](CUgraphNode_st& node) {
    node.host = cudaHostNodeParams{fn, data};
    return cudaSuccess;
  });
}
inline int capture_malloc(void** p, size_t size, cudaStream_t s) {
  return capture_node(s, cudaGraphNodeTypeMemAlloc, [&](CUgraphNode_st& node) {
    if (!p) return cudaErrorInvalidValue;
    node.mem = reserve_graph_alloc(size);
    if (!node.mem) return cudaErrorMemoryAllocation;
    node.alloc.bytesize = size;
    node.alloc.dptr = *p = (void*)node.mem->a.base;
    return cudaSuccess;
  });
}
inline int capture_free(void* p, cudaStream_t s) {
  return capture_node(s, cudaGraphNodeTypeMemFree, [&](CUgraphNode_st& node) {
    node.mem = find_graph_alloc(p);
    return node.mem ? cudaSuccess : cudaErrorInvalidValue;  // only graph allocations are freed by a graph
  });
}
inline int capture_graph_launch(CUgraphExec_st* exec, cudaStream_t s) {
  return capture_node(s, cudaGraphNodeTypeGraph, [&](CUgraphNode_st& node) {
    node.child = clone_graph(exec->graph);
    return cudaSuccess;
  });
}
// Work CUDA cannot capture (cudaStreamAddCallback): refused, and the capture invalidated.
inline int capture_refuse(cudaStream_t s) {
  return with_capture(s, [](Point& p) -> int {
    p.cap->invalid = true;
    return cudaErrorStreamCaptureUnsupported;
  });
}

inline int capture_record(cudaEvent_t e, cudaStream_t s) {
  if (!captures_active.load(std::memory_order_relaxed)) return -1;
  if (legacy(s)) return legacy_use();
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  Point* p = capturing(s);
  if (!p) {
    st.events.erase(e);
    return -1;
  }
  if (!e) return cudaErrorInvalidResourceHandle;
  if (p->cap->invalid) return cudaErrorStreamCaptureInvalidated;
  st.events[e] = *p;
  return cudaSuccess;
}

inline int capture_wait_event(cudaStream_t s, cudaEvent_t e) {
  if (!captures_active.load(std::memory_order_relaxed)) return -1;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  auto ev = st.events.find(e);
  Point* p = legacy(s) ? nullptr : capturing(s);
  if (ev == st.events.end()) {
    if (!p) return legacy(s) ? legacy_use() : -1;
    p->cap->invalid = true;  // a captured stream waiting on work outside the capture
    return cudaErrorStreamCaptureIsolation;
  }
  Capture* c = ev->second.cap;
  if (c->invalid) return cudaErrorStreamCaptureInvalidated;
  if (legacy(s)) {
    c->invalid = true;
    return cudaErrorStreamCaptureImplicit;
  }
  if (!p) {  // the stream joins the capture
    st.streams[s] = ev->second;
    return cudaSuccess;
  }
  if (p->cap != c) {
    c->invalid = p->cap->invalid = true;
    return cudaErrorStreamCaptureMerge;
  }
  for (CUgraphNode_st* d : ev->second.deps)
    if (std::find(p->deps.begin(), p->deps.end(), d) == p->deps.end()) p->deps.push_back(d);
  return cudaSuccess;
}

// Synchronizing with (or querying) a capturing stream, a captured event or the device. A
// stream's sync is refused like uncapturable work: the capture is invalidated.
inline int capture_sync_stream(cudaStream_t s) { return capture_refuse(s); }
inline int capture_sync_event(cudaEvent_t e) {
  if (!captures_active.load(std::memory_order_relaxed)) return -1;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  auto ev = st.events.find(e);
  if (ev == st.events.end()) return -1;
  ev->second.cap->invalid = true;
  return cudaErrorCapturedEvent;
}
inline int capture_sync_device() {
  if (!captures_active.load(std::memory_order_relaxed)) return -1;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  for (auto& c : st.captures) c->invalid = true;
  return st.captures.empty() ? -1 : (int)cudaErrorStreamCaptureUnsupported;
}

// cudaMalloc, cudaFree and the like while a capture forbids "potentially unsafe" calls: this
// thread's mode (cudaThreadExchangeStreamCaptureMode) against the captures in progress.
inline int capture_unsafe_call() {
  if (!captures_active.load(std::memory_order_relaxed) || thread_capture_mode == cudaStreamCaptureModeRelaxed) return -1;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  bool refused = false;
  for (auto& c : st.captures) {
    bool mine = c->thread == std::this_thread::get_id();
    if (mine && c->mode != cudaStreamCaptureModeRelaxed) {
      c->invalid = true;
      refused = true;
    } else if (!mine && c->mode == cudaStreamCaptureModeGlobal && thread_capture_mode == cudaStreamCaptureModeGlobal) {
      refused = true;
    }
  }
  return refused ? (int)cudaErrorStreamCaptureUnsupported : -1;
}

inline void forget_stream(cudaStream_t s) {
  if (!captures_active.load()) return;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  st.streams.erase(s);
}
inline void forget_event(cudaEvent_t e) {
  if (!captures_active.load()) return;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  st.events.erase(e);
}

inline cudaError_t begin_capture(cudaStream_t s, CUgraph_st* into, const cudaGraphNode_t* deps, size_t ndeps, cudaStreamCaptureMode mode) {
  if (legacy(s)) return cudaErrorStreamCaptureUnsupported;  // the legacy stream cannot be captured
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal && mode != cudaStreamCaptureModeRelaxed)
    return cudaErrorInvalidValue;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  if (capturing(s)) return cudaErrorIllegalState;
  auto c = std::make_unique<Capture>();
  c->graph = into ? into : new CUgraph_st();
  c->own_graph = into == nullptr;
  c->origin = s;
  c->mode = mode;
  c->thread = std::this_thread::get_id();
  c->id = st.next_id++;
  Point p{c.get(), {}};
  for (size_t i = 0; i < ndeps; ++i) p.deps.push_back(deps[i]);
  st.streams[s] = p;
  st.captures.push_back(std::move(c));
  captures_active.fetch_add(1);
  return cudaSuccess;
}

// Every other stream of the capture must have been joined back into the origin: its last
// nodes are among the origin's dependencies or their ancestors.
inline bool joined(Capture* c, const Point& origin) {
  std::set<const CUgraphNode_st*> seen;
  std::vector<const CUgraphNode_st*> todo(origin.deps.begin(), origin.deps.end());
  while (!todo.empty()) {
    const CUgraphNode_st* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    for (auto* d : n->deps) todo.push_back(d);
  }
  for (auto& kv : capture_state().streams) {
    if (kv.second.cap != c || kv.first == c->origin) continue;
    for (auto* d : kv.second.deps)
      if (!seen.count(d)) return false;
  }
  return true;
}

inline cudaError_t finish_capture(cudaStream_t s, CUgraph_st** out) {
  if (!out) return cudaErrorInvalidValue;
  auto& st = capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  Point* p = legacy(s) ? nullptr : capturing(s);
  if (!p) return cudaErrorIllegalState;
  Capture* c = p->cap;
  if (c->origin != s) {
    c->invalid = true;
    return cudaErrorStreamCaptureUnmatched;
  }
  cudaError_t e = c->invalid ? cudaErrorStreamCaptureInvalidated : !joined(c, *p) ? cudaErrorStreamCaptureUnjoined : cudaSuccess;
  CUgraph_st* g = c->graph;
  bool own = c->own_graph;
  end_capture(c);
  if (e != cudaSuccess) {
    if (own) delete g;
    *out = nullptr;
    return e;
  }
  *out = g;
  return cudaSuccess;
}

// --- instantiation and update ---------------------------------------------------------------------

inline cudaError_t instantiate(CUgraphExec_st** out, CUgraph_st* g, unsigned long long flags) {
  if (!out || !g) return cudaErrorInvalidValue;
  if (flags & cudaGraphInstantiateFlagDeviceLaunch)
    unsupported("a graph instantiated for device-side launch (cudaGraphInstantiateFlagDeviceLaunch)");
  auto exec = std::make_unique<CUgraphExec_st>();
  std::map<const CUgraphNode_st*, CUgraphNode_st*> map;
  std::unique_ptr<CUgraph_st> copy(clone_graph(*g, &map));
  exec->graph.nodes = std::move(copy->nodes);
  for (auto& n : exec->graph.nodes) n->owner = &exec->graph;
  exec->of = std::move(map);
  exec->flags = flags;
  if (!topological(exec->graph, exec->order)) return cudaErrorInvalidValue;  // a cycle
  *out = exec.release();
  return cudaSuccess;
}

inline CUgraphNode_st* exec_node(CUgraphExec_st* exec, const CUgraphNode_st* n, cudaGraphNodeType type) {
  if (!exec || !n) return nullptr;
  auto it = exec->of.find(n);
  return it != exec->of.end() && it->second->type == type ? it->second : nullptr;
}

// Same nodes (types, order) and the same edges: copy the parameters over.
inline cudaError_t exec_update(CUgraphExec_st* exec, CUgraph_st* g, cudaGraphExecUpdateResultInfo* info) {
  cudaGraphExecUpdateResultInfo r{};
  r.result = cudaGraphExecUpdateSuccess;
  if (!exec || !g) return cudaErrorInvalidValue;
  auto& mine = exec->graph.nodes;
  std::map<const CUgraphNode_st*, size_t> gi, ei;
  for (size_t i = 0; i < g->nodes.size(); ++i) gi[g->nodes[i].get()] = i;
  for (size_t i = 0; i < mine.size(); ++i) ei[mine[i].get()] = i;
  if (mine.size() != g->nodes.size()) r.result = cudaGraphExecUpdateErrorTopologyChanged;
  for (size_t i = 0; r.result == cudaGraphExecUpdateSuccess && i < mine.size(); ++i) {
    const CUgraphNode_st &a = *mine[i], &b = *g->nodes[i];
    std::vector<size_t> da, db;
    for (auto* d : a.deps) da.push_back(ei.at(d));
    for (auto* d : b.deps) db.push_back(gi.at(d));
    std::sort(da.begin(), da.end());
    std::sort(db.begin(), db.end());
    if (da != db) r.result = cudaGraphExecUpdateErrorTopologyChanged;
    else if (a.type != b.type) r.result = cudaGraphExecUpdateErrorNodeTypeChanged;
    else if (a.type == cudaGraphNodeTypeMemAlloc || a.type == cudaGraphNodeTypeMemFree) {
      if (a.mem != b.mem) r.result = cudaGraphExecUpdateErrorNotSupported;
    } else if (a.type == cudaGraphNodeTypeKernel && a.kernel.nparams != b.kernel.nparams) {
      r.result = cudaGraphExecUpdateErrorFunctionChanged;
    }
    if (r.result != cudaGraphExecUpdateSuccess) r.errorNode = const_cast<CUgraphNode_st*>(&b);
  }
  if (info) *info = r;
  if (r.result != cudaGraphExecUpdateSuccess) return cudaErrorGraphExecUpdateFailure;
  for (size_t i = 0; i < mine.size(); ++i) {
    CUgraphNode_st& a = *mine[i];
    const CUgraphNode_st& b = *g->nodes[i];
    a.kernel = b.kernel;
    a.cfg = b.cfg;
    a.argbytes = b.argbytes;
    a.argv = b.argv;
    if (a.type == cudaGraphNodeTypeKernel) rebase_args(a, b);
    a.copy = b.copy;
    a.set = b.set;
    a.host = b.host;
    a.event = b.event;
    if (b.child) {
      delete a.child;
      a.child = clone_graph(*b.child);
    }
  }
  exec->of.clear();
  for (size_t i = 0; i < mine.size(); ++i) exec->of[g->nodes[i].get()] = mine[i].get();
  return cudaSuccess;
}

inline cudaError_t graph_error(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

}  // namespace cuset

#include "cuset_graph_api.h"  // the runtime API functions over the above
