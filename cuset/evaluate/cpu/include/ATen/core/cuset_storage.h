// Storage and host loops behind the CuSeT torch shim's at::Tensor (ATen/core/Tensor.h):
// allocation (emulated device memory, managed so host code may read it, or host memory for CPU
// tensors, both filled with the emulator's garbage byte), dimension wrapping, stride layouts,
// a strided element walk, and element loads and stores across dtypes.
#ifndef CUSET_ATEN_STORAGE_H
#define CUSET_ATEN_STORAGE_H

#include <c10/core/Scalar.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/ArrayRef.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace cuset_torch {

enum class StorageKind { Device, Host, Borrowed };

struct Storage {
  void* base = nullptr;
  size_t bytes = 0;
  StorageKind kind = StorageKind::Borrowed;
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (kind == StorageKind::Device) cuset::device_free(base);
    else if (kind == StorageKind::Host) free(base);
  }
};

inline std::shared_ptr<Storage> allocate(size_t bytes, c10::Device device) {
  auto s = std::make_shared<Storage>();
  s->bytes = bytes;
  if (device.is_cuda()) {
    s->kind = StorageKind::Device;
    s->base = cuset::device_alloc(bytes, cuset::Space::Managed);
    TORCH_CHECK(s->base != nullptr, "CUDA out of memory. Tried to allocate ", bytes, " bytes");
  } else {
    s->kind = StorageKind::Host;
    s->base = aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
    TORCH_CHECK(s->base != nullptr, "DefaultCPUAllocator: not enough memory: you tried to allocate ", bytes, " bytes.");
    cuset::fill_garbage(s->base, bytes);
  }
  return s;
}

struct Impl {
  std::shared_ptr<Storage> storage;
  char* data = nullptr;
  std::vector<int64_t> sizes, strides;
  c10::ScalarType dtype = c10::kFloat;
  c10::Device device = c10::Device(c10::kCUDA, 0);
  bool requires_grad = false;
};

inline int64_t wrap_dim(int64_t d, int64_t ndim) {
  int64_t lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  TORCH_CHECK_INDEX(d >= lo && d <= hi, "Dimension out of range (expected to be in range of [", lo, ", ", hi, "], but got ", d, ")");
  return d < 0 ? d + std::max<int64_t>(ndim, 1) : d;
}

inline std::vector<int64_t> contiguous_strides(c10::IntArrayRef sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

inline std::vector<int64_t> channels_last_strides(c10::IntArrayRef sizes) {
  TORCH_CHECK(sizes.size() == 4, "required rank 4 tensor to use channels_last format");
  std::vector<int64_t> st(4);
  st[1] = 1;
  st[3] = std::max<int64_t>(sizes[1], 1);
  st[2] = st[3] * std::max<int64_t>(sizes[3], 1);
  st[0] = st[2] * std::max<int64_t>(sizes[2], 1);
  return st;
}

// Calls f(element offset, linear index) for every element, in row-major order.
template <class F>
void for_each_offset(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, F f) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  if (n == 0) return;
  std::vector<int64_t> idx(sizes.size(), 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    f(off, k);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

inline double load_double(const char* p, c10::ScalarType t) {
  switch (t) {
    case c10::kByte: return *(const uint8_t*)p;
    case c10::kChar: return *(const int8_t*)p;
    case c10::kShort: return *(const int16_t*)p;
    case c10::kInt: return *(const int32_t*)p;
    case c10::kLong: return (double)*(const int64_t*)p;
    case c10::kHalf: return float(*(const c10::Half*)p);
    case c10::kBFloat16: return float(*(const c10::BFloat16*)p);
    case c10::kFloat: return *(const float*)p;
    case c10::kDouble: return *(const double*)p;
    case c10::kBool: return *(const bool*)p ? 1.0 : 0.0;
    default: TORCH_CHECK(false, "conversion from ", t, " is not supported by the CPU emulator's torch shim");
  }
}

inline void store_double(char* p, c10::ScalarType t, double v) {
  switch (t) {
    case c10::kByte: *(uint8_t*)p = (uint8_t)(int64_t)v; break;
    case c10::kChar: *(int8_t*)p = (int8_t)v; break;
    case c10::kShort: *(int16_t*)p = (int16_t)v; break;
    case c10::kInt: *(int32_t*)p = (int32_t)v; break;
    case c10::kLong: *(int64_t*)p = (int64_t)v; break;
    case c10::kHalf: *(c10::Half*)p = c10::Half((float)v); break;
    case c10::kBFloat16: *(c10::BFloat16*)p = c10::BFloat16((float)v); break;
    case c10::kFloat: *(float*)p = (float)v; break;
    case c10::kDouble: *(double*)p = v; break;
    case c10::kBool: *(bool*)p = v != 0; break;
    default: TORCH_CHECK(false, "conversion to ", t, " is not supported by the CPU emulator's torch shim");
  }
}

inline int64_t load_int(const char* p, c10::ScalarType t) {
  if (t == c10::kLong) return *(const int64_t*)p;
  return (int64_t)load_double(p, t);
}

inline void store_int(char* p, c10::ScalarType t, int64_t v) {
  if (t == c10::kLong) *(int64_t*)p = v;
  else store_double(p, t, (double)v);
}

}  // namespace cuset_torch

#endif  // CUSET_ATEN_STORAGE_H
