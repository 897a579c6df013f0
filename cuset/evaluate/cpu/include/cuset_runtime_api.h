// cuset_runtime_api.h: what libcudart would supply, for the CPU emulator (see cuset_cuda.h).
//
// One fixed device is reported: "CuSeT CPU emulator", compute capability 8.0, 16 GiB,
// 48 KiB shared memory per block (163 KiB opt-in), warp size 32, 1024 threads per block,
// one multiprocessor per emulator worker thread. Streams and events exist but every call is
// synchronous. The error state is per host thread, as in CUDA.
#pragma once

struct CUstream_st {
  int id;
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
  *p = cuset::device_alloc(size, cuset::Space::Device);
  return *p ? cudaSuccess : cuset::set_error(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaMallocManaged(void** p, size_t size, unsigned int) {
  if (!p) return cuset::set_error(cudaErrorInvalidValue);
  *p = cuset::device_alloc(size, cuset::Space::Managed);
  return *p ? cudaSuccess : cuset::set_error(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaMallocAsync(void** p, size_t size, cudaStream_t) { return cudaMalloc(p, size); }
inline cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  return cuset::device_free(p) ? cudaSuccess : cuset::set_error(cudaErrorInvalidValue);
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }
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
inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) { return cuset::copy(dst, src, n, kind); }
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t) {
  return cuset::copy(dst, src, n, kind);
}
inline cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind) {
  for (size_t r = 0; r < height; ++r) {
    cudaError_t e = cuset::copy((char*)dst + r * dpitch, (const char*)src + r * spitch, width, kind);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, size_t n) {
  if (!cuset::range_ok(p, n, true)) return cuset::set_error(cudaErrorInvalidValue);
  cuset::Unprotect open;
  memset(p, value, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t n, cudaStream_t) { return cudaMemset(p, value, n); }
inline cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t n, size_t offset, cudaMemcpyKind) {
  memcpy((char*)symbol + offset, src, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t n, size_t offset, cudaMemcpyKind k, cudaStream_t) {
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

inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
inline cudaError_t cudaDeviceReset(void) { return cudaSuccess; }
inline cudaError_t cudaDeviceSetLimit(cudaLimit, size_t) { return cudaSuccess; }
inline cudaError_t cudaThreadSynchronize(void) { return cudaSuccess; }
inline cudaError_t cudaStreamCreate(cudaStream_t* s) {
  *s = new CUstream_st{1};
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { return cudaStreamCreate(s); }
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int, int) { return cudaStreamCreate(s); }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }
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
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  if (!e) return cuset::set_error(cudaErrorInvalidResourceHandle);
  e->when = std::chrono::steady_clock::now();
  e->recorded = true;
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
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
  p->memoryBusWidth = 5120;
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
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void*, int block, size_t) {
  *n = block > 0 ? std::max(1, 2048 / block) : 0;
  return cudaSuccess;
}
inline cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t) {
  cuset::unsupported("cudaLaunchKernel with a void** argument array (use the <<<...>>> syntax)");
}

inline cudaError_t cudaGetLastError(void) {
  cudaError_t e = cuset::last_error;
  cuset::last_error = cudaSuccess;
  return e;
}
inline cudaError_t cudaPeekAtLastError(void) { return cuset::last_error; }

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
    default: return "unknown error";
  }
}

}  // extern "C"

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
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* grid, int* block, void (*)(P...), size_t = 0, int limit = 0) {
  *block = limit > 0 && limit < 1024 ? limit : 1024;
  *grid = (int)cuset::options().workers * (2048 / *block);
  return cudaSuccess;
}
