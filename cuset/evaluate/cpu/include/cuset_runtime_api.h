// cuset_runtime_api.h: what libcudart would supply, for the CPU emulator (see cuset_cuda.h).
//
// One fixed device is reported: "CuSeT CPU emulator", compute capability 8.0, 16 GiB,
// 48 KiB shared memory per block (163 KiB opt-in), warp size 32, 1024 threads per block,
// one multiprocessor per emulator worker thread. Streams and events exist but every call is
// synchronous. The error state is per host thread, as in CUDA.
#pragma once

struct CUstream_st {
  int id;
  unsigned flags;  // cudaStreamNonBlocking: no implicit synchronization with the legacy stream
};
struct CUevent_st {
  std::chrono::steady_clock::time_point when;
  bool recorded;
};

namespace cuset {
inline cudaError_t set_error(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

// Stream capture (cuset_graph.h): each returns -1 when the call is not captured and runs as
// usual, else the call's result (recorded into the capture's graph, or refused by CUDA's rules).
inline int capture_copy(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s);
inline int capture_copy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t w, size_t h, cudaMemcpyKind kind, cudaStream_t s);
inline int capture_set(void* p, size_t pitch, int value, size_t w, size_t h, cudaStream_t s);
inline int capture_host(cudaStream_t s, cudaHostFn_t fn, void* data);
inline int capture_malloc(void** p, size_t size, cudaStream_t s);
inline int capture_free(void* p, cudaStream_t s);
inline int capture_refuse(cudaStream_t s);
inline int capture_record(cudaEvent_t e, cudaStream_t s);
inline int capture_wait_event(cudaStream_t s, cudaEvent_t e);
inline int capture_sync_stream(cudaStream_t s);
inline int capture_sync_event(cudaEvent_t e);
inline int capture_sync_device();
inline int capture_unsafe_call();
inline int legacy_use();
inline int graph_alloc_free(void* p);
inline void forget_stream(cudaStream_t s);
inline void forget_event(cudaEvent_t e);
#define CUSET_CAPTURED(call) \
  if (int cuset_captured = (call); cuset_captured >= 0) return ::cuset::set_error((cudaError_t)cuset_captured)

inline bool range_ok(const void* p, size_t n, bool want_device) {
  if (n == 0) return true;
  uintptr_t u = (uintptr_t)p;
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  const Allocation* a = r.find(u);
  bool device = a && a->space != Space::PinnedHost;
  if (!want_device) return !device || a->space == Space::Managed;
  if (!device) return in_static_image(u);
  return u + n <= a->base + a->size;
}

inline cudaError_t copy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  if (n && (!dst || !src)) return set_error(cudaErrorInvalidValue);
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind != cudaMemcpyDefault && kind != cudaMemcpyHostToHost) {
    if ((dst_dev && !range_ok(dst, n, true)) || (src_dev && !range_ok(src, n, true))) {
      if (getenv("CUSET_VERBOSE")) fprintf(stderr, "cuset-cuda: cudaMemcpy of %zu bytes: a device range is not inside one cudaMalloc allocation\n", n);
      return set_error(cudaErrorInvalidValue);
    }
    if ((!dst_dev && !range_ok(dst, n, false)) || (!src_dev && !range_ok(src, n, false)))
      return set_error(cudaErrorInvalidValue);
  }
  Unprotect open;
  memmove(dst, src, n);
  return cudaSuccess;
}
}  // namespace cuset

extern "C" {

inline cudaError_t cudaMalloc(void** p, size_t size) {
  if (!p) return cuset::set_error(cudaErrorInvalidValue);
  CUSET_CAPTURED(cuset::capture_unsafe_call());
  *p = cuset::device_alloc(size, cuset::Space::Device);
  return *p ? cudaSuccess : cuset::set_error(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaMallocManaged(void** p, size_t size, unsigned int) {
  if (!p) return cuset::set_error(cudaErrorInvalidValue);
  *p = cuset::device_alloc(size, cuset::Space::Managed);
  return *p ? cudaSuccess : cuset::set_error(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaMallocAsync(void** p, size_t size, cudaStream_t s) {
  if (!p) return cuset::set_error(cudaErrorInvalidValue);
  CUSET_CAPTURED(cuset::capture_malloc(p, size, s));
  *p = cuset::device_alloc(size, cuset::Space::Device);
  return *p ? cudaSuccess : cuset::set_error(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  CUSET_CAPTURED(cuset::capture_unsafe_call());
  CUSET_CAPTURED(cuset::graph_alloc_free(p));
  return cuset::device_free(p) ? cudaSuccess : cuset::set_error(cudaErrorInvalidValue);
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  if (!p) return cudaSuccess;
  CUSET_CAPTURED(cuset::capture_free(p, s));
  CUSET_CAPTURED(cuset::graph_alloc_free(p));
  return cuset::device_free(p) ? cudaSuccess : cuset::set_error(cudaErrorInvalidValue);
}
inline cudaError_t cudaMallocHost(void** p, size_t size) {
  if (!p) return cuset::set_error(cudaErrorInvalidValue);
  *p = cuset::device_alloc(size, cuset::Space::PinnedHost);
  return *p ? cudaSuccess : cuset::set_error(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaHostAlloc(void** p, size_t size, unsigned int) { return cudaMallocHost(p, size); }
inline cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }
inline cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned int) {
  *d = h;
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  if (int sticky = cuset::sticky_error.load()) return (cudaError_t)sticky;
  CUSET_CAPTURED(cuset::legacy_use());
  return cuset::copy(dst, src, n, kind);
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  CUSET_CAPTURED(cuset::capture_copy(dst, src, n, kind, s));
  return cuset::copy(dst, src, n, kind);
}
inline cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind) {
  CUSET_CAPTURED(cuset::legacy_use());
  for (size_t r = 0; r < height; ++r) {
    cudaError_t e = cuset::copy((char*)dst + r * dpitch, (const char*)src + r * spitch, width, kind);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, size_t n) {
  CUSET_CAPTURED(cuset::legacy_use());
  if (!cuset::range_ok(p, n, true)) return cuset::set_error(cudaErrorInvalidValue);
  cuset::Unprotect open;
  memset(p, value, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t n, cudaStream_t s) {
  CUSET_CAPTURED(cuset::capture_set(p, n, value, n, 1, s));
  if (!cuset::range_ok(p, n, true)) return cuset::set_error(cudaErrorInvalidValue);
  cuset::Unprotect open;
  memset(p, value, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t n, size_t offset, cudaMemcpyKind) {
  memcpy((char*)symbol + offset, src, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t n, size_t offset, cudaMemcpyKind k, cudaStream_t s) {
  CUSET_CAPTURED(cuset::capture_copy((char*)symbol + offset, src, n, k, s));
  return cudaMemcpyToSymbol(symbol, src, n, offset, k);
}
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t n, size_t offset, cudaMemcpyKind) {
  memcpy(dst, (const char*)symbol + offset, n);
  return cudaSuccess;
}
inline cudaError_t cudaGetSymbolAddress(void** p, const void* symbol) {
  *p = (void*)symbol;
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  *total = size_t(16) << 30;
  *free_bytes = *total;
  return cudaSuccess;
}

// A failed device assert() leaves the device in an error state that every synchronizing call
// reports until cudaDeviceReset (CUDA's sticky errors).
inline cudaError_t cudaDeviceSynchronize(void) {
  CUSET_CAPTURED(cuset::capture_sync_device());
  return (cudaError_t)cuset::sticky_error.load();
}
inline cudaError_t cudaDeviceReset(void) {
  cuset::sticky_error = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSetLimit(cudaLimit, size_t) { return cudaSuccess; }
inline cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
inline cudaError_t cudaStreamCreate(cudaStream_t* s) {
  *s = new CUstream_st{1, 0};
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
  *s = new CUstream_st{1, flags};
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int) { return cudaStreamCreateWithFlags(s, flags); }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  cuset::forget_stream(s);
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  CUSET_CAPTURED(cuset::capture_sync_stream(s));
  return (cudaError_t)cuset::sticky_error.load();
}
inline cudaError_t cudaStreamQuery(cudaStream_t s) {
  CUSET_CAPTURED(cuset::capture_sync_stream(s));
  return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  CUSET_CAPTURED(cuset::capture_wait_event(s, e));
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -1;
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st{std::chrono::steady_clock::now(), false};
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  cuset::forget_event(e);
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (!e) return cuset::set_error(cudaErrorInvalidResourceHandle);
  CUSET_CAPTURED(cuset::capture_record(e, s));
  e->when = std::chrono::steady_clock::now();
  e->recorded = true;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  CUSET_CAPTURED(cuset::capture_sync_event(e));
  return (cudaError_t)cuset::sticky_error.load();
}
inline cudaError_t cudaEventQuery(cudaEvent_t e) {
  CUSET_CAPTURED(cuset::capture_sync_event(e));
  return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a || !b || !a->recorded || !b->recorded) return cuset::set_error(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return cudaSuccess;
}

inline cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cuset::set_error(cudaErrorInvalidDevice); }
inline cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int* v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (device != 0) return cuset::set_error(cudaErrorInvalidDevice);
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "CuSeT CPU emulator");
  p->totalGlobalMem = size_t(16) << 30;
  p->sharedMemPerBlock = cuset::kDefaultSmem;
  p->sharedMemPerBlockOptin = cuset::kOptinSmem;
  p->sharedMemPerMultiprocessor = 164 * 1024;
  p->regsPerBlock = 65536;
  p->regsPerMultiprocessor = 65536;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = 8;
  p->minor = 0;
  p->multiProcessorCount = (int)cuset::options().workers;
  p->maxThreadsPerMultiProcessor = 2048;
  p->maxBlocksPerMultiProcessor = 32;
  p->canMapHostMemory = 1;
  p->unifiedAddressing = 1;
  p->managedMemory = 1;
  p->concurrentKernels = 1;
  p->l2CacheSize = 40 * 1024 * 1024;
  // access-policy windows are accepted as the hints they are (nothing to persist on a CPU)
  p->persistingL2CacheMaxSize = 30 * 1024 * 1024;
  p->accessPolicyMaxWindowSize = 128 * 1024 * 1024;
  p->memoryBusWidth = 5120;
  p->cooperativeLaunch = 1;  // cuset_cooperative.h
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int device) {
  if (device != 0) return cuset::set_error(cudaErrorInvalidDevice);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *v = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *v = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *v = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *v = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *v = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *v = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *v = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *v = p.minor; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrMaxRegistersPerBlock: *v = p.regsPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *v = (int)p.totalConstMem; break;
    case cudaDevAttrL2CacheSize: *v = p.l2CacheSize; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *v = p.persistingL2CacheMaxSize; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: *v = p.accessPolicyMaxWindowSize; break;
    case cudaDevAttrCooperativeLaunch: *v = 1; break;
    case cudaDevAttrConcurrentManagedAccess: *v = 1; break;
    case cudaDevAttrMemoryPoolsSupported: *v = 1; break;
    case cudaDevAttrCanMapHostMemory: *v = 1; break;
    case cudaDevAttrManagedMemory: *v = 1; break;
    case cudaDevAttrUnifiedAddressing: *v = 1; break;
    default: *v = 0; break;
  }
  return cudaSuccess;
}
inline cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || (size_t)value > cuset::kOptinSmem) return cuset::set_error(cudaErrorInvalidValue);
    cuset::func_smem_limits()[func] = value;
  }
  return cudaSuccess;
}
inline cudaError_t cudaFuncSetCacheConfig(const void*, cudaFuncCache) { return cudaSuccess; }
inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
inline cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void*, int block, size_t smem) {
  *n = cuset::max_active_blocks(block, smem);  // also the per-SM limit of a cooperative launch
  return cudaSuccess;
}

// Host memory made visible to kernels (zero copy): registered so kernel-argument checks accept it.
inline cudaError_t cudaHostRegister(void* p, size_t size, unsigned int) {
  if (!p || !size) return cuset::set_error(cudaErrorInvalidValue);
  cuset::Registry& r = cuset::registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.by_base[(uintptr_t)p] = cuset::Allocation{(uintptr_t)p, size, nullptr, 0, cuset::Space::PinnedHost};
  return cudaSuccess;
}
inline cudaError_t cudaHostUnregister(void* p) {
  cuset::Registry& r = cuset::registry();
  std::lock_guard<std::mutex> lk(r.mu);
  auto it = r.by_base.find((uintptr_t)p);
  if (it == r.by_base.end() || it->second.map_base != nullptr) return cuset::set_error(cudaErrorHostMemoryNotRegistered);
  r.by_base.erase(it);
  return cudaSuccess;
}
inline cudaError_t cudaHostGetFlags(unsigned int* flags, void*) {
  *flags = 0;
  return cudaSuccess;
}
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  memset(a, 0, sizeof *a);
  cuset::Registry& r = cuset::registry();
  std::lock_guard<std::mutex> lk(r.mu);
  const cuset::Allocation* hit = r.find((uintptr_t)p);
  a->type = !hit ? cudaMemoryTypeUnregistered
                 : hit->space == cuset::Space::Managed ? cudaMemoryTypeManaged
                 : hit->space == cuset::Space::PinnedHost ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
  a->device = 0;
  a->devicePointer = hit ? (void*)p : nullptr;
  a->hostPointer = hit && hit->space != cuset::Space::Device ? (void*)p : nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
  *pitch = (width + 511) & ~size_t(511);
  return cudaMalloc(p, *pitch * height);
}
inline cudaError_t cudaMemset2D(void* p, size_t pitch, int value, size_t width, size_t height) {
  for (size_t row = 0; row < height; ++row) {
    cudaError_t e = cudaMemset((char*)p + row * pitch, value, width);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int value, size_t width, size_t height, cudaStream_t s) {
  CUSET_CAPTURED(cuset::capture_set(p, pitch, value, width, height, s));
  for (size_t row = 0; row < height; ++row) {
    cudaError_t e = cudaMemsetAsync((char*)p + row * pitch, value, width, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t s) {
  CUSET_CAPTURED(cuset::capture_copy2d(dst, dpitch, src, spitch, width, height, kind, s));
  for (size_t r = 0; r < height; ++r) {
    cudaError_t e = cuset::copy((char*)dst + r * dpitch, (const char*)src + r * spitch, width, kind);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyPeer(void* dst, int, const void* src, int, size_t n) { return cuset::copy(dst, src, n, cudaMemcpyDeviceToDevice); }

// Work queued on a stream runs at once (every call is synchronous), so a callback runs now.
inline cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* data, unsigned int) {
  CUSET_CAPTURED(cuset::capture_refuse(s));  // not capturable in CUDA either
  cb(s, cudaSuccess, data);
  return cudaSuccess;
}
inline cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* data) {
  CUSET_CAPTURED(cuset::capture_host(s, fn, data));
  fn(data);
  return cudaSuccess;
}
inline cudaError_t cudaStreamAttachMemAsync(cudaStream_t, void*, size_t, unsigned int) { return cudaSuccess; }
inline cudaError_t cudaMemPrefetchAsync(const void*, size_t, cudaMemLocation, unsigned int, cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaMemAdvise(const void*, size_t, cudaMemoryAdvise, cudaMemLocation) { return cudaSuccess; }
inline cudaError_t cudaStreamGetAttribute(cudaStream_t, cudaStreamAttrID, cudaStreamAttrValue* v) {
  memset(v, 0, sizeof *v);
  return cudaSuccess;
}
inline cudaError_t cudaStreamSetAttribute(cudaStream_t, cudaStreamAttrID, const cudaStreamAttrValue*) { return cudaSuccess; }
inline cudaError_t cudaStreamGetPriority(cudaStream_t, int* priority) {
  *priority = 0;
  return cudaSuccess;
}
inline cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int* flags) {
  *flags = s && s != cudaStreamLegacy && s != cudaStreamPerThread ? s->flags : 0;
  return cudaSuccess;
}
inline cudaError_t cudaCtxResetPersistingL2Cache(void) { return cudaSuccess; }
inline cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int) { return cudaEventRecord(e, s); }

inline cudaError_t cudaSetDeviceFlags(unsigned int) { return cudaSuccess; }
inline cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  *flags = 0;
  return cudaSuccess;
}
inline cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp*) {
  *device = 0;
  return cudaSuccess;
}
inline cudaError_t cudaThreadExit(void) { return cudaSuccess; }
inline cudaError_t cudaDeviceGetLimit(size_t* v, cudaLimit limit) {
  *v = limit == cudaLimitStackSize ? cuset::options().stack_bytes : limit == cudaLimitPrintfFifoSize ? (1u << 20) : 8u << 20;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetPCIBusId(char* id, int len, int) {
  snprintf(id, (size_t)len, "0000:00:00.0");
  return cudaSuccess;
}
// One device: no peers.
inline cudaError_t cudaDeviceCanAccessPeer(int* can, int, int) {
  *can = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int) { return cuset::set_error(cudaErrorInvalidDevice); }
inline cudaError_t cudaDeviceDisablePeerAccess(int) { return cuset::set_error(cudaErrorInvalidDevice); }
inline cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
inline cudaError_t cudaProfilerStop(void) { return cudaSuccess; }

// Stream-ordered allocation: one default pool; allocations are plain device allocations.
inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  static char the_pool;
  if (device != 0) return cuset::set_error(cudaErrorInvalidDevice);
  *pool = reinterpret_cast<cudaMemPool_t>(&the_pool);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) { return cudaDeviceGetDefaultMemPool(pool, device); }
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }
inline cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t, cudaMemPoolAttr, void* v) {
  memset(v, 0, sizeof(unsigned long long));
  return cudaSuccess;
}
inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }
inline cudaError_t cudaMallocFromPoolAsync(void** p, size_t size, cudaMemPool_t, cudaStream_t s) { return cudaMallocAsync(p, size, s); }

inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void* fn) {
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = (int)cuset::kMaxThreads;
  a->numRegs = 32;
  a->ptxVersion = 80;
  a->binaryVersion = 80;
  auto it = cuset::func_smem_limits().find(fn);
  a->maxDynamicSharedSizeBytes = it != cuset::func_smem_limits().end() ? it->second : (int)cuset::kDefaultSmem;
  return cudaSuccess;
}
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, const void* fn, int block, size_t smem, unsigned int) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, fn, block, smem);
}

inline cudaError_t cudaGetLastError(void) {
  if (int sticky = cuset::sticky_error.load()) return (cudaError_t)sticky;
  cudaError_t e = cuset::last_error;
  cuset::last_error = cudaSuccess;
  return e;
}
inline cudaError_t cudaPeekAtLastError(void) {
  if (int sticky = cuset::sticky_error.load()) return (cudaError_t)sticky;
  return cuset::last_error;
}

inline const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorAssert: return "cudaErrorAssert";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";  // stream capture and graphs (cuset_graph.h)
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureMerge: return "cudaErrorStreamCaptureMerge";
    case cudaErrorStreamCaptureUnmatched: return "cudaErrorStreamCaptureUnmatched";
    case cudaErrorStreamCaptureUnjoined: return "cudaErrorStreamCaptureUnjoined";
    case cudaErrorStreamCaptureIsolation: return "cudaErrorStreamCaptureIsolation";
    case cudaErrorStreamCaptureImplicit: return "cudaErrorStreamCaptureImplicit";
    case cudaErrorCapturedEvent: return "cudaErrorCapturedEvent";
    case cudaErrorGraphExecUpdateFailure: return "cudaErrorGraphExecUpdateFailure";
    case cudaErrorIllegalState: return "cudaErrorIllegalState";
    case cudaErrorCooperativeLaunchTooLarge: return "cudaErrorCooperativeLaunchTooLarge";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    default: return "cudaErrorUnknown";
  }
}
inline const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureMerge: return "operation would result in a merge of separate capture sequences";
    case cudaErrorStreamCaptureUnmatched: return "capture was not ended in the same stream as it began";
    case cudaErrorStreamCaptureUnjoined: return "capturing stream has unjoined work";
    case cudaErrorStreamCaptureIsolation: return "dependency created on uncaptured work in another stream";
    case cudaErrorStreamCaptureImplicit: return "operation would make the legacy stream depend on a capturing blocking stream";
    case cudaErrorCapturedEvent: return "operation not permitted on an event last recorded in a capturing stream";
    case cudaErrorGraphExecUpdateFailure: return "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    default: return "unknown error";
  }
}

}  // extern "C"

#include "cuset_texture.h"     // cudaArray, texture objects, tex1Dfetch / tex1D / tex2D
#include "cuset_rounding.h"    // __fadd_rd and the other directed-rounding intrinsics; PTX special registers

// The C++ overloads nvcc's cuda_runtime.h defines only under __CUDACC__: symbols by reference
// (so `cudaMemcpyToSymbol(sym, ...)` copies into `sym`, whatever its type) and kernels by pointer.
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0, cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return ::cudaMemcpyToSymbol((const void*)&symbol, src, count, offset, kind);
}
template <class T>
cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, size_t count, size_t offset = 0, cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t s = 0) {
  return ::cudaMemcpyToSymbolAsync((const void*)&symbol, src, count, offset, kind, s);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0, cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return ::cudaMemcpyFromSymbol(dst, (const void*)&symbol, count, offset, kind);
}
template <class T>
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset = 0, cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t = 0) {
  return ::cudaMemcpyFromSymbol(dst, (const void*)&symbol, count, offset, kind);
}
template <class T>
cudaError_t cudaGetSymbolAddress(void** p, const T& symbol) {
  *p = (void*)&symbol;
  return cudaSuccess;
}
template <class T>
cudaError_t cudaGetSymbolSize(size_t* n, const T&) {
  *n = sizeof(T);
  return cudaSuccess;
}
template <class... P>
cudaError_t cudaFuncSetAttribute(void (*fn)(P...), cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute((const void*)fn, attr, value);
}
template <class... P>
cudaError_t cudaFuncSetCacheConfig(void (*)(P...), cudaFuncCache) { return cudaSuccess; }
template <class... P>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, void (*fn)(P...), int block, size_t smem) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void*)fn, block, smem);
}
template <class... P>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, void (*fn)(P...)) {
  return ::cudaFuncGetAttributes(a, (const void*)fn);
}
template <class... P>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, void (*fn)(P...), int block, size_t smem, unsigned int flags) {
  return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void*)fn, block, smem);
}
template <class... P>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* grid, int* block, void (*)(P...), size_t = 0, int limit = 0) {
  *block = limit > 0 && limit < 1024 ? limit : 1024;
  *grid = (int)cuset::options().workers * (2048 / *block);
  return cudaSuccess;
}
// ... and with the kernel as an address ((void*)kernel).
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* grid, int* block, const void*, size_t smem = 0, int limit = 0) {
  *block = limit > 0 && limit < 1024 ? limit : 1024;
  *grid = (int)cuset::options().workers * cuset::max_active_blocks(*block, smem);
  return cudaSuccess;
}

#include "cuset_graph.h"  // CUDA graphs and stream capture
#include "cuset_launch_api.h"  // cudaLaunchKernel / cudaLaunchCooperativeKernel / cudaLaunchKernelExC
