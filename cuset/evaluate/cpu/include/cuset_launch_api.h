// cuset_launch_api.h: launches by address for the CPU emulator (included by cuset_runtime_api.h,
// after cuset_graph.h, whose registry of kernels by address it shares).
//
// cudaLaunchKernel, cudaLaunchCooperativeKernel and cudaLaunchKernelExC take the kernel as a
// `const void*` and its arguments as a `void**` array (CUDA's C++ overloads of them, and the
// typed cudaLaunchKernelEx, funnel into these). The address alone does not say the kernel's
// parameter types, so the translator rewrites every place host code takes a kernel's address by
// name (`(void*)kernel`, or the kernel passed to one of these calls) into
// `cuset::kernel_ref<kernel>(info)`: that registers a launcher which knows the parameter types
// and returns the kernel unchanged. A launch through an address nobody registered (a pointer
// that came from elsewhere) is reported as unsupported, never guessed.
#pragma once

namespace cuset {

// The kernel F itself, registered (in cuset_graph.h's registry of kernels by address) so that a
// launch through its address knows its parameter types. Unlike the registration after each
// kernel definition, this also covers template kernels (`(void*)kernel<float>`).
template <auto F>
auto kernel_ref(const KernelInfo& info) {
  static const bool registered = [&] {
    std::lock_guard<std::mutex> lk(kernel_registry_mu());
    kernel_registry().emplace(reinterpret_cast<const void*>(F), erased_of<F>(F, info));
    return true;
  }();
  (void)registered;
  return F;
}

inline cudaError_t launch_by_address(const char* api, const void* fn, Config cfg, void** args) {
  if (!fn) return set_error(cudaErrorInvalidDeviceFunction);
  const ErasedKernel* k = find_kernel(fn);
  if (!k)
    unsupported(std::string(api) +
                " of a kernel address the translator never saw taken by name (pass the kernel itself, or (void*)kernel, in the .cu file)");
  if (k->nparams && !args) return set_error(cudaErrorInvalidValue);
  const cudaError_t before = last_error;
  last_error = cudaSuccess;
  k->launch(k->fn, k->info, cfg, args);
  const cudaError_t e = last_error;
  if (e == cudaSuccess) last_error = before;
  return e;
}
}  // namespace cuset

extern "C" {

inline cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream) {
  return cuset::launch_by_address("cudaLaunchKernel", func, cuset::Config(grid, block, smem, stream), args);
}

inline cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem, cudaStream_t stream) {
  cuset::Config cfg(grid, block, smem, stream);
  cfg.cooperative = true;
  return cuset::launch_by_address("cudaLaunchCooperativeKernel", func, cfg, args);
}

// Attributes: cooperative is honoured; clusters are refused; the rest are scheduling hints a
// CPU has nothing to do with (priority, access policy, programmatic serialization, ...).
// (cudaLaunchConfig_t's members gridDim and blockDim share their names with the built-in macros.)
#pragma push_macro("gridDim")
#pragma push_macro("blockDim")
#undef gridDim
#undef blockDim
inline cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  if (!config) return cuset::set_error(cudaErrorInvalidValue);
  cuset::Config cfg(config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream);
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    if (a.id == cudaLaunchAttributeCooperative) cfg.cooperative = a.val.cooperative != 0;
    else if (a.id == cudaLaunchAttributeClusterDimension && a.val.clusterDim.x * a.val.clusterDim.y * a.val.clusterDim.z > 1)
      cuset::unsupported("cudaLaunchKernelEx with thread block clusters (cudaLaunchAttributeClusterDimension)");
  }
  return cuset::launch_by_address("cudaLaunchKernelEx", func, cfg, args);
}
#pragma pop_macro("blockDim")
#pragma pop_macro("gridDim")

}  // extern "C"
