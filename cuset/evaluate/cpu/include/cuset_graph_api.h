// cuset_graph_api.h: the CUDA runtime's graph and stream-capture functions for the CPU emulator,
// over the graphs, capture state and replay of cuset_graph.h (which includes this file last).
#pragma once

extern "C" {

inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
  return cuset::graph_error(cuset::begin_capture(s, nullptr, nullptr, 0, mode));
}
inline cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t* deps, const cudaGraphEdgeData*, size_t n,
                                                 cudaStreamCaptureMode mode) {
  if (cudaError_t e = cuset::check_deps(g, deps, n)) return cuset::graph_error(e);
  return cuset::graph_error(cuset::begin_capture(s, g, deps, n, mode));
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) { return cuset::graph_error(cuset::finish_capture(s, g)); }
inline cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  if (!status) return cuset::graph_error(cudaErrorInvalidValue);
  auto& st = cuset::capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  cuset::Point* p = cuset::legacy(s) ? nullptr : cuset::capturing(s);
  *status = !p ? cudaStreamCaptureStatusNone : p->cap->invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}
inline cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, cudaStreamCaptureStatus* status, unsigned long long* id, cudaGraph_t* graph,
                                            const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges, size_t* ndeps) {
  if (!status) return cuset::graph_error(cudaErrorInvalidValue);
  auto& st = cuset::capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  cuset::Point* p = cuset::legacy(s) ? nullptr : cuset::capturing(s);
  *status = !p ? cudaStreamCaptureStatusNone : p->cap->invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  if (id) *id = p ? p->cap->id : 0;
  if (graph) *graph = p ? p->cap->graph : nullptr;
  if (deps) *deps = p && !p->deps.empty() ? p->deps.data() : nullptr;
  if (edges) *edges = nullptr;  // every edge is a default (full) dependency
  if (ndeps) *ndeps = p ? p->deps.size() : 0;
  return cudaSuccess;
}
inline cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps, const cudaGraphEdgeData*, size_t n, unsigned int flags) {
  auto& st = cuset::capture_state();
  std::lock_guard<std::recursive_mutex> lk(st.mu);
  cuset::Point* p = cuset::legacy(s) ? nullptr : cuset::capturing(s);
  if (!p) return cuset::graph_error(cudaErrorIllegalState);
  if (cudaError_t e = cuset::check_deps(p->cap->graph, deps, n)) return cuset::graph_error(e);
  if (flags == cudaStreamSetCaptureDependencies) p->deps.clear();
  else if (flags != cudaStreamAddCaptureDependencies) return cuset::graph_error(cudaErrorInvalidValue);
  for (size_t i = 0; i < n; ++i)
    if (std::find(p->deps.begin(), p->deps.end(), deps[i]) == p->deps.end()) p->deps.push_back(deps[i]);
  return cudaSuccess;
}
inline cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (!mode) return cuset::graph_error(cudaErrorInvalidValue);
  std::swap(*mode, cuset::thread_capture_mode);
  return cudaSuccess;
}

inline cudaError_t cudaGraphCreate(cudaGraph_t* g, unsigned int flags) {
  if (!g || flags) return cuset::graph_error(cudaErrorInvalidValue);
  *g = new CUgraph_st();
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  if (!g) return cuset::graph_error(cudaErrorInvalidValue);
  delete g;
  return cudaSuccess;
}
inline cudaError_t cudaGraphClone(cudaGraph_t* out, cudaGraph_t g) {
  if (!out || !g) return cuset::graph_error(cudaErrorInvalidValue);
  *out = cuset::clone_graph(*g);
  return cudaSuccess;
}
inline cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* out, cudaGraphNode_t original, cudaGraph_t clone) {
  if (!out || !original || !clone || !original->owner) return cuset::graph_error(cudaErrorInvalidValue);
  auto& src = original->owner->nodes;
  for (size_t i = 0; i < src.size() && i < clone->nodes.size(); ++i)
    if (src[i].get() == original) {
      *out = clone->nodes[i].get();
      return cudaSuccess;
    }
  return cuset::graph_error(cudaErrorInvalidValue);
}

#define CUSET_ADD_NODE(TYPE)                                                 \
  if (!node) return cuset::graph_error(cudaErrorInvalidValue);              \
  if (cudaError_t e = cuset::check_deps(g, deps, ndeps)) return cuset::graph_error(e); \
  CUgraphNode_st* n = cuset::add_node(g, TYPE, deps, ndeps)

inline cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, const cudaKernelNodeParams* p) {
  CUSET_ADD_NODE(cudaGraphNodeTypeKernel);
  if (cudaError_t e = cuset::kernel_node_params(*n, p)) {
    g->nodes.pop_back();
    return cuset::graph_error(e);
  }
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, const cudaMemcpy3DParms* p) {
  if (!p) return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeMemcpy);
  n->copy = *p;
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, void* dst, const void* src,
                                            size_t count, cudaMemcpyKind kind) {
  CUSET_ADD_NODE(cudaGraphNodeTypeMemcpy);
  n->copy = cuset::linear_copy(dst, src, count, 1, count, count, kind);
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, const cudaMemsetParams* p) {
  if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || !p->dst ||
      (p->height > 1 && p->pitch < p->width * p->elementSize))
    return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeMemset);
  n->set = *p;
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, const cudaHostNodeParams* p) {
  if (!p || !p->fn) return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeHost);
  n->host = *p;
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps) {
  CUSET_ADD_NODE(cudaGraphNodeTypeEmpty);
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, cudaGraph_t child) {
  if (!child) return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeGraph);
  n->child = cuset::clone_graph(*child);
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, cudaEvent_t e) {
  if (!e) return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeEventRecord);
  n->event = e;
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, cudaEvent_t e) {
  if (!e) return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeWaitEvent);
  n->event = e;
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, cudaMemAllocNodeParams* p) {
  if (!p || !p->bytesize) return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeMemAlloc);
  n->mem = cuset::reserve_graph_alloc(p->bytesize);
  if (!n->mem) {
    g->nodes.pop_back();
    return cuset::graph_error(cudaErrorMemoryAllocation);
  }
  p->dptr = (void*)n->mem->a.base;
  n->alloc = *p;
  *node = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps, void* dptr) {
  auto mem = cuset::find_graph_alloc(dptr);
  if (!mem) return cuset::graph_error(cudaErrorInvalidValue);
  CUSET_ADD_NODE(cudaGraphNodeTypeMemFree);
  n->mem = mem;
  *node = n;
  return cudaSuccess;
}
#undef CUSET_ADD_NODE

inline cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t n, cudaMemAllocNodeParams* p) {
  if (!n || !p || n->type != cudaGraphNodeTypeMemAlloc) return cuset::graph_error(cudaErrorInvalidValue);
  *p = n->alloc;
  return cudaSuccess;
}
inline cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t n, void* dptr_out) {
  if (!n || !dptr_out || n->type != cudaGraphNodeTypeMemFree) return cuset::graph_error(cudaErrorInvalidValue);
  *(void**)dptr_out = (void*)n->mem->a.base;
  return cudaSuccess;
}
inline cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t n, cudaKernelNodeParams* p) {
  if (!n || !p || n->type != cudaGraphNodeTypeKernel) return cuset::graph_error(cudaErrorInvalidValue);
  cuset::kernel_node_get(*n, p);
  return cudaSuccess;
}
inline cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n, const cudaKernelNodeParams* p) {
  if (!n || n->type != cudaGraphNodeTypeKernel) return cuset::graph_error(cudaErrorInvalidValue);
  return cuset::graph_error(cuset::kernel_node_params(*n, p));
}
inline cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t n, cudaMemcpy3DParms* p) {
  if (!n || !p || n->type != cudaGraphNodeTypeMemcpy) return cuset::graph_error(cudaErrorInvalidValue);
  *p = n->copy;
  return cudaSuccess;
}
inline cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t n, const cudaMemcpy3DParms* p) {
  if (!n || !p || n->type != cudaGraphNodeTypeMemcpy) return cuset::graph_error(cudaErrorInvalidValue);
  n->copy = *p;
  return cudaSuccess;
}
inline cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t n, cudaMemsetParams* p) {
  if (!n || !p || n->type != cudaGraphNodeTypeMemset) return cuset::graph_error(cudaErrorInvalidValue);
  *p = n->set;
  return cudaSuccess;
}
inline cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t n, const cudaMemsetParams* p) {
  if (!n || !p || n->type != cudaGraphNodeTypeMemset) return cuset::graph_error(cudaErrorInvalidValue);
  n->set = *p;
  return cudaSuccess;
}
inline cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t n, cudaHostNodeParams* p) {
  if (!n || !p || n->type != cudaGraphNodeTypeHost) return cuset::graph_error(cudaErrorInvalidValue);
  *p = n->host;
  return cudaSuccess;
}
inline cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t n, const cudaHostNodeParams* p) {
  if (!n || !p || !p->fn || n->type != cudaGraphNodeTypeHost) return cuset::graph_error(cudaErrorInvalidValue);
  n->host = *p;
  return cudaSuccess;
}
inline cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t n, cudaGraph_t* g) {
  if (!n || !g || n->type != cudaGraphNodeTypeGraph) return cuset::graph_error(cudaErrorInvalidValue);
  *g = n->child;
  return cudaSuccess;
}
inline cudaError_t cudaGraphNodeGetType(cudaGraphNode_t n, cudaGraphNodeType* t) {
  if (!n || !t) return cuset::graph_error(cudaErrorInvalidValue);
  *t = n->type;
  return cudaSuccess;
}

// The count when `out` is null; else up to *count entries and the number written.
inline cudaError_t cuset_list(const std::vector<CUgraphNode_st*>& nodes, cudaGraphNode_t* out, size_t* count) {
  if (!count) return cuset::graph_error(cudaErrorInvalidValue);
  if (!out) {
    *count = nodes.size();
    return cudaSuccess;
  }
  size_t n = std::min(*count, nodes.size());
  for (size_t i = 0; i < n; ++i) out[i] = nodes[i];
  for (size_t i = n; i < *count; ++i) out[i] = nullptr;
  *count = n;
  return cudaSuccess;
}
inline cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count) {
  if (!g) return cuset::graph_error(cudaErrorInvalidValue);
  std::vector<CUgraphNode_st*> all;
  for (auto& n : g->nodes) all.push_back(n.get());
  return cuset_list(all, nodes, count);
}
inline cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count) {
  if (!g) return cuset::graph_error(cudaErrorInvalidValue);
  std::vector<CUgraphNode_st*> roots;
  for (auto& n : g->nodes)
    if (n->deps.empty()) roots.push_back(n.get());
  return cuset_list(roots, nodes, count);
}
inline cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t n, cudaGraphNode_t* deps, cudaGraphEdgeData* edges, size_t* count) {
  if (!n) return cuset::graph_error(cudaErrorInvalidValue);
  if (edges && deps && count)
    for (size_t i = 0; i < *count; ++i) edges[i] = cudaGraphEdgeData{};
  return cuset_list(n->deps, deps, count);
}
inline cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t n, cudaGraphNode_t* users, cudaGraphEdgeData* edges, size_t* count) {
  if (!n || !n->owner) return cuset::graph_error(cudaErrorInvalidValue);
  std::vector<CUgraphNode_st*> out;
  for (auto& m : n->owner->nodes)
    if (std::find(m->deps.begin(), m->deps.end(), n) != m->deps.end()) out.push_back(m.get());
  if (edges && users && count)
    for (size_t i = 0; i < *count; ++i) edges[i] = cudaGraphEdgeData{};
  return cuset_list(out, users, count);
}
inline cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* edges, size_t* count) {
  if (!g || !count) return cuset::graph_error(cudaErrorInvalidValue);
  size_t k = 0, total = 0;
  for (auto& n : g->nodes) total += n->deps.size();
  if (!from && !to) {
    *count = total;
    return cudaSuccess;
  }
  if (!from || !to) return cuset::graph_error(cudaErrorInvalidValue);
  for (auto& n : g->nodes)
    for (auto* d : n->deps)
      if (k < *count) {
        from[k] = d;
        to[k] = n.get();
        if (edges) edges[k] = cudaGraphEdgeData{};
        ++k;
      }
  *count = k;
  return cudaSuccess;
}
inline cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to, const cudaGraphEdgeData*, size_t n) {
  if (cudaError_t e = cuset::check_deps(g, from, n)) return cuset::graph_error(e);
  if (cudaError_t e = cuset::check_deps(g, to, n)) return cuset::graph_error(e);
  for (size_t i = 0; i < n; ++i) {
    auto& d = to[i]->deps;
    if (from[i] == to[i] || std::find(d.begin(), d.end(), from[i]) != d.end()) return cuset::graph_error(cudaErrorInvalidValue);
    d.push_back(from[i]);
  }
  return cudaSuccess;
}
inline cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to, const cudaGraphEdgeData*, size_t n) {
  if (cudaError_t e = cuset::check_deps(g, from, n)) return cuset::graph_error(e);
  if (cudaError_t e = cuset::check_deps(g, to, n)) return cuset::graph_error(e);
  for (size_t i = 0; i < n; ++i) {
    auto& d = to[i]->deps;
    auto it = std::find(d.begin(), d.end(), from[i]);
    if (it == d.end()) return cuset::graph_error(cudaErrorInvalidValue);
    d.erase(it);
  }
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroyNode(cudaGraphNode_t n) {
  if (!n || !n->owner) return cuset::graph_error(cudaErrorInvalidValue);
  auto& nodes = n->owner->nodes;
  for (auto& m : nodes) m->deps.erase(std::remove(m->deps.begin(), m->deps.end(), n), m->deps.end());
  for (auto it = nodes.begin(); it != nodes.end(); ++it)
    if (it->get() == n) {
      delete n->child;
      nodes.erase(it);
      break;
    }
  return cudaSuccess;
}
inline cudaError_t cudaGraphDebugDotPrint(cudaGraph_t g, const char* path, unsigned int) {
  if (!g || !path) return cuset::graph_error(cudaErrorInvalidValue);
  FILE* f = fopen(path, "w");
  if (!f) return cuset::graph_error(cudaErrorOperatingSystem);
  std::map<const CUgraphNode_st*, size_t> id;
  for (auto& n : g->nodes) id[n.get()] = id.size();
  fprintf(f, "digraph cuset_graph {\n");
  for (auto& n : g->nodes) {
    const char* what = n->type == cudaGraphNodeTypeKernel ? n->kernel.info.name : n->type == cudaGraphNodeTypeMemcpy ? "memcpy"
                     : n->type == cudaGraphNodeTypeMemset ? "memset" : n->type == cudaGraphNodeTypeHost ? "host"
                     : n->type == cudaGraphNodeTypeGraph ? "child graph" : n->type == cudaGraphNodeTypeMemAlloc ? "mem alloc"
                     : n->type == cudaGraphNodeTypeMemFree ? "mem free" : n->type == cudaGraphNodeTypeEventRecord ? "event record"
                     : n->type == cudaGraphNodeTypeWaitEvent ? "event wait" : "empty";
    fprintf(f, "  n%zu [label=\"%zu: %s\"];\n", id[n.get()], id[n.get()], what);
    for (auto* d : n->deps) fprintf(f, "  n%zu -> n%zu;\n", id[d], id[n.get()]);
  }
  fprintf(f, "}\n");
  fclose(f);
  return cudaSuccess;
}

inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* out, cudaGraph_t g, unsigned long long flags) {
  return cuset::graph_error(cuset::instantiate(out, g, flags));
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* out, cudaGraph_t g, unsigned long long flags) {
  return cuset::graph_error(cuset::instantiate(out, g, flags));
}
inline cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* out, cudaGraph_t g, cudaGraphInstantiateParams* p) {
  if (!p) return cuset::graph_error(cudaErrorInvalidValue);
  cudaError_t e = cuset::instantiate(out, g, p->flags);
  p->result_out = e == cudaSuccess ? cudaGraphInstantiateSuccess : cudaGraphInstantiateError;
  p->errNode_out = nullptr;
  return cuset::graph_error(e);
}
inline cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t exec, unsigned long long* flags) {
  if (!exec || !flags) return cuset::graph_error(cudaErrorInvalidValue);
  *flags = exec->flags;
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (!exec) return cuset::graph_error(cudaErrorInvalidValue);
  delete exec;
  return cudaSuccess;
}
inline cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t) {
  return exec ? cudaSuccess : cuset::graph_error(cudaErrorInvalidValue);  // nothing to upload to a CPU
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  if (!exec) return cuset::graph_error(cudaErrorInvalidValue);
  if (int sticky = cuset::sticky_error.load()) return (cudaError_t)sticky;
  if (int c = cuset::capture_graph_launch(exec, s); c >= 0) return cuset::graph_error((cudaError_t)c);
  return cuset::graph_error(cuset::run_graph(exec->graph, &exec->order, s));
}
inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t g, cudaGraphExecUpdateResultInfo* info) {
  return cuset::graph_error(cuset::exec_update(exec, g, info));
}
inline cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, const cudaKernelNodeParams* p) {
  CUgraphNode_st* n = cuset::exec_node(exec, node, cudaGraphNodeTypeKernel);
  return cuset::graph_error(n ? cuset::kernel_node_params(*n, p) : cudaErrorInvalidValue);
}
inline cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, const cudaMemcpy3DParms* p) {
  CUgraphNode_st* n = cuset::exec_node(exec, node, cudaGraphNodeTypeMemcpy);
  if (!n || !p) return cuset::graph_error(cudaErrorInvalidValue);
  n->copy = *p;
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node, void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  CUgraphNode_st* n = cuset::exec_node(exec, node, cudaGraphNodeTypeMemcpy);
  if (!n) return cuset::graph_error(cudaErrorInvalidValue);
  n->copy = cuset::linear_copy(dst, src, count, 1, count, count, kind);
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, const cudaMemsetParams* p) {
  CUgraphNode_st* n = cuset::exec_node(exec, node, cudaGraphNodeTypeMemset);
  if (!n || !p) return cuset::graph_error(cudaErrorInvalidValue);
  n->set = *p;
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, const cudaHostNodeParams* p) {
  CUgraphNode_st* n = cuset::exec_node(exec, node, cudaGraphNodeTypeHost);
  if (!n || !p || !p->fn) return cuset::graph_error(cudaErrorInvalidValue);
  n->host = *p;
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, cudaGraph_t child) {
  CUgraphNode_st* n = cuset::exec_node(exec, node, cudaGraphNodeTypeGraph);
  if (!n || !child) return cuset::graph_error(cudaErrorInvalidValue);
  delete n->child;
  n->child = cuset::clone_graph(*child);
  return cudaSuccess;
}
inline cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int on) {
  if (!exec || !node || !exec->of.count(node)) return cuset::graph_error(cudaErrorInvalidValue);
  exec->of[node]->enabled = on != 0;
  return cudaSuccess;
}
inline cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int* on) {
  if (!exec || !node || !on || !exec->of.count(node)) return cuset::graph_error(cudaErrorInvalidValue);
  *on = exec->of[node]->enabled;
  return cudaSuccess;
}

// Pitched 3D copies (no CUDA arrays), also capturable.
inline cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t s) {
  if (!p) return cuset::graph_error(cudaErrorInvalidValue);
  int c = cuset::capture_node(s, cudaGraphNodeTypeMemcpy, [&](CUgraphNode_st& n) {
    n.copy = *p;
    return cudaSuccess;
  });
  if (c >= 0) return cuset::graph_error((cudaError_t)c);
  return cuset::graph_error(cuset::copy3d(*p, s));
}
inline cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  if (int c = cuset::legacy_use(); c >= 0) return cuset::graph_error((cudaError_t)c);
  return cudaMemcpy3DAsync(p, nullptr);
}

}  // extern "C"

// The four-argument cudaGraphExecUpdate that CUDA's runtime header keeps for older code (it
// declares it only under nvcc).
inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t g, cudaGraphNode_t* error_node, cudaGraphExecUpdateResult* result) {
  cudaGraphExecUpdateResultInfo info{};
  cudaError_t e = cudaGraphExecUpdate(exec, g, &info);
  if (error_node) *error_node = info.errorNode;
  if (result) *result = info.result;
  return e;
}
