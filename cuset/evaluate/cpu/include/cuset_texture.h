// cuset_texture.h: CUDA texture objects for the CPU emulator (included by cuset_runtime_api.h).
//
// Host side: cudaMallocArray / cudaFreeArray / cudaArrayGetInfo, cudaMemcpyToArray,
// cudaMemcpy2DToArray and their FromArray and Async forms, cudaCreateChannelDesc, and
// cudaCreateTextureObject over a cudaArray (1D or 2D), pitch2D memory or linear memory.
// Device side: tex1Dfetch<T>, tex1D<T>, tex2D<T> (and the forms writing through a T*).
//
// Fetches follow the CUDA Programming Guide's "Texture Fetching" appendix:
//   coordinates  unnormalized (texel i covers [i, i+1), its center at i + 0.5) or normalized
//                (x in [0,1) covers the N texels: x * N);
//   address      clamp (to the edge texel), border (texels outside read as borderColor),
//                wrap and mirror (normalized coordinates only: CUDA supports them nowhere
//                else; with unnormalized coordinates they are treated as clamp);
//   filter       point: texel floor(x); linear: with xB = x - 0.5, i = floor(xB), a = xB - i,
//                (1-a) T[i] + a T[i+1] (bilinear in 2D). The hardware holds a in 9-bit fixed
//                point (8 fractional bits); here it is a full float, so a linear fetch may
//                differ from a GPU's in the last bits (<= 1/512 of the texel difference);
//   read mode    element type (the texel as stored) or normalized float (8- and 16-bit
//                integers to [0,1] unsigned or [-1,1] signed); 16-bit float texels always
//                read as float.
// Surfaces: cudaCreateSurfaceObject over a 1D or 2D array made with cudaArraySurfaceLoadStore;
// surf1Dread/surf1Dwrite/surf2Dread/surf2Dwrite with x in bytes, as CUDA has it, and the
// boundary mode of each call: trap (an out-of-range access is a device error, as the GPU
// traps), clamp (to the edge element), zero (reads give 0, writes are dropped).
// A texture or surface object is an index into a table; using one never created, or already
// destroyed, is a device error naming it. Layered, cubemap, mipmapped and 3D textures and
// surfaces, and gather, are refused by the translator as unsupported.
#pragma once

struct cudaArray {
  cudaChannelFormatDesc desc;
  size_t width, height;  // height 0: a 1D array
  size_t elem;           // bytes per texel
  unsigned char* data;   // rows of width * elem bytes
  unsigned flags;        // cudaMallocArray's (cudaArraySurfaceLoadStore: surfaces may use it)
  size_t rows() const { return height ? height : 1; }
  size_t row_bytes() const { return width * elem; }
};

namespace cuset {
namespace tex {

struct Texture {
  cudaResourceDesc res;
  cudaTextureDesc desc;
  cudaChannelFormatDesc fmt;
  const unsigned char* base;
  size_t width, height, pitch, elem;
  int dims;                  // 1 or 2
  int channels, bits;        // channels of `bits` bits each
  bool fetch_only;           // linear memory: tex1Dfetch only
};

constexpr size_t kMaxTextures = 1 << 16;

inline std::atomic<Texture*>* table() {
  static std::atomic<Texture*> slots[kMaxTextures];
  return slots;
}
inline std::mutex& table_mu() {
  static std::mutex m;
  return m;
}

inline const Texture& lookup(cudaTextureObject_t h, const char* fn) {
  Texture* t = h >= 1 && h <= kMaxTextures ? table()[h - 1].load(std::memory_order_acquire) : nullptr;
  if (!t)
    fault(std::string(fn) + " in " + where() + ": texture object " + std::to_string(h) +
          " was never created with cudaCreateTextureObject, or was destroyed");
  return *t;
}

// The channel layout of a format: channels of equal width, as CUDA's formats have.
inline bool layout(const cudaChannelFormatDesc& f, int& channels, int& bits) {
  const int b[4] = {f.x, f.y, f.z, f.w};
  channels = 0;
  bits = f.x;
  for (int c = 0; c < 4; ++c) {
    if (b[c] == 0) break;
    if (b[c] != bits) return false;
    ++channels;
  }
  if (channels == 0 || (bits != 8 && bits != 16 && bits != 32)) return false;
  if (f.f == cudaChannelFormatKindFloat && bits == 8) return false;
  return f.f == cudaChannelFormatKindSigned || f.f == cudaChannelFormatKindUnsigned || f.f == cudaChannelFormatKindFloat;
}

// Component type and count of a fetch's result type T (a scalar or a CUDA vector type).
template <class T> struct Comp { using C = T; static constexpr int n = 1; };
#define CUSET_TEX_VEC(V, C_, N) template <> struct Comp<V> { using C = C_; static constexpr int n = N; };
#define CUSET_TEX_VECS(P, C_) CUSET_TEX_VEC(P##1, C_, 1) CUSET_TEX_VEC(P##2, C_, 2) CUSET_TEX_VEC(P##3, C_, 3) CUSET_TEX_VEC(P##4, C_, 4)
CUSET_TEX_VECS(char, signed char) CUSET_TEX_VECS(uchar, unsigned char) CUSET_TEX_VECS(short, short) CUSET_TEX_VECS(ushort, unsigned short)
CUSET_TEX_VECS(int, int) CUSET_TEX_VECS(uint, unsigned) CUSET_TEX_VECS(float, float)
#undef CUSET_TEX_VECS
#undef CUSET_TEX_VEC

// One channel of a texel as a float: normalized (8/16-bit integers to [0,1] or [-1,1]) or as is.
inline float channel(const Texture& t, const unsigned char* p, bool normalized) {
  const cudaChannelFormatKind k = t.fmt.f;
  if (k == cudaChannelFormatKindFloat) {
    if (t.bits == 16) {
      __half h;
      memcpy(&h, p, 2);
      return __half2float(h);
    }
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  if (t.bits == 8) {
    if (k == cudaChannelFormatKindSigned) return normalized ? std::max(-1.0f, (signed char)*p / 127.0f) : (float)(signed char)*p;
    return normalized ? *p / 255.0f : (float)*p;
  }
  if (t.bits == 16) {
    uint16_t u;
    memcpy(&u, p, 2);
    if (k == cudaChannelFormatKindSigned) return normalized ? std::max(-1.0f, (int16_t)u / 32767.0f) : (float)(int16_t)u;
    return normalized ? u / 65535.0f : (float)u;
  }
  uint32_t u;
  memcpy(&u, p, 4);
  return k == cudaChannelFormatKindSigned ? (float)(int32_t)u : (float)u;
}

// The texel index for index `i` in a dimension of n texels, or -1 when it lies outside and
// the mode is border.
inline long long address(long long i, long long n, cudaTextureAddressMode mode, bool normalized) {
  if (i >= 0 && i < n) return i;
  if (normalized && mode == cudaAddressModeWrap) return ((i % n) + n) % n;
  if (normalized && mode == cudaAddressModeMirror) {
    long long m = ((i % (2 * n)) + 2 * n) % (2 * n);
    return m < n ? m : 2 * n - 1 - m;
  }
  if (mode == cudaAddressModeBorder) return -1;
  return i < 0 ? 0 : n - 1;  // clamp (and wrap/mirror with unnormalized coordinates)
}

inline const unsigned char* texel(const Texture& t, long long i, long long j) { return t.base + (size_t)j * t.pitch + (size_t)i * t.elem; }

// A fetch computed in float (linear filtering, normalized read mode, half texels): channels
// 0..3 of the result. `coord` is in texel units already.
inline void fetch_float(const Texture& t, const float* coord, bool linear, bool norm, bool normalized_read, float out[4]) {
  const long long size[2] = {(long long)t.width, (long long)(t.dims > 1 ? t.height : 1)};
  long long i0[2] = {0, 0};
  float a[2] = {0.f, 0.f};
  for (int d = 0; d < t.dims; ++d) {
    float xb = linear ? coord[d] - 0.5f : coord[d];
    float f = floorf(xb);
    i0[d] = (long long)f;
    a[d] = xb - f;
  }
  for (int c = 0; c < 4; ++c) out[c] = 0.f;
  const int corners = linear ? 1 << t.dims : 1;
  for (int k = 0; k < corners; ++k) {
    float w = 1.f;
    long long idx[2] = {0, 0};
    bool border = false;
    for (int d = 0; d < t.dims; ++d) {
      int step = (k >> d) & 1;
      if (linear) w *= step ? a[d] : 1.f - a[d];
      idx[d] = address(i0[d] + step, size[d], t.desc.addressMode[d], norm);
      border |= idx[d] < 0;
    }
    if (w == 0.f) continue;
    for (int c = 0; c < 4; ++c) {
      float v = border ? t.desc.borderColor[c] : c < t.channels ? channel(t, texel(t, idx[0], idx[1]) + c * (t.bits / 8), normalized_read) : 0.f;
      out[c] += w * v;
    }
  }
}

// One fetch of T at `coord` (t.dims coordinates as the program gave them).
template <class T>
T sample(const Texture& t, const float* coord_in, bool linear, bool norm, const char* fn) {
  using C = typename Comp<T>::C;
  constexpr int n = Comp<T>::n;
  static_assert(sizeof(T) == n * sizeof(C), "texture fetch into a type that is not a scalar or CUDA vector type");
  const long long size[2] = {(long long)t.width, (long long)(t.dims > 1 ? t.height : 1)};
  float coord[2];
  for (int d = 0; d < t.dims; ++d) coord[d] = norm ? coord_in[d] * (float)size[d] : coord_in[d];
  const bool normalized_read = t.desc.readMode == cudaReadModeNormalizedFloat && t.fmt.f != cudaChannelFormatKindFloat && t.bits < 32;
  const bool half = t.fmt.f == cudaChannelFormatKindFloat && t.bits == 16;
  T out;
  if (!normalized_read && !half && !linear) {  // point sampling of the texel as stored
    long long idx[2] = {0, 0};
    bool border = false;
    for (int d = 0; d < t.dims; ++d) {
      idx[d] = address((long long)floorf(coord[d]), size[d], t.desc.addressMode[d], norm);
      border |= idx[d] < 0;
    }
    if (!border) {
      if (sizeof(T) != t.elem)
        fault(std::string(fn) + " in " + where() + ": the result type has " + std::to_string(sizeof(T)) + " bytes, the texture's texels " +
              std::to_string(t.elem));
      memcpy(&out, texel(t, idx[0], idx[1]), sizeof(T));
      return out;
    }
    C comps[n];
    for (int c = 0; c < n; ++c) comps[c] = (C)t.desc.borderColor[c];
    memcpy(&out, comps, sizeof(T));
    return out;
  }
  if constexpr (!std::is_same_v<C, float>) {
    unsupported(std::string(fn) + ": a texture read as float (normalized read mode, linear filtering or half texels) into a non-float type");
  } else {
    if (linear && t.fmt.f != cudaChannelFormatKindFloat && !normalized_read)
      unsupported(std::string(fn) + ": linear filtering of integer texels read as cudaReadModeElementType");
    float v[4];
    fetch_float(t, coord, linear, norm, normalized_read, v);
    memcpy(&out, v, sizeof(T));
  }
  return out;
}

template <class T>
T fetch(cudaTextureObject_t h, const float* coord, int dims, const char* fn) {
  const Texture& t = lookup(h, fn);
  if (t.fetch_only) fault(std::string(fn) + " in " + where() + ": texture object " + std::to_string(h) + " is over linear memory, which only tex1Dfetch reads");
  if (dims != t.dims)
    fault(std::string(fn) + " in " + where() + ": texture object " + std::to_string(h) + " is " + std::to_string(t.dims) + "-dimensional");
  return sample<T>(t, coord, t.desc.filterMode == cudaFilterModeLinear, t.desc.normalizedCoords != 0, fn);
}

}  // namespace tex
}  // namespace cuset

// tex1Dfetch: an integer texel index, never filtered nor normalized (texel x's center).
template <class T>
T tex1Dfetch(cudaTextureObject_t h, int x) {
  const cuset::tex::Texture& t = cuset::tex::lookup(h, "tex1Dfetch");
  if (t.dims != 1) cuset::fault("tex1Dfetch in " + cuset::where() + ": texture object " + std::to_string(h) + " is 2-dimensional");
  const float c = (float)x + 0.5f;
  return cuset::tex::sample<T>(t, &c, false, false, "tex1Dfetch");
}
template <class T>
T tex1D(cudaTextureObject_t h, float x) {
  return cuset::tex::fetch<T>(h, &x, 1, "tex1D");
}
template <class T>
T tex2D(cudaTextureObject_t h, float x, float y) {
  const float c[2] = {x, y};
  return cuset::tex::fetch<T>(h, c, 2, "tex2D");
}
template <class T>
void tex1Dfetch(T* out, cudaTextureObject_t h, int x) { *out = tex1Dfetch<T>(h, x); }
template <class T>
void tex1D(T* out, cudaTextureObject_t h, float x) { *out = tex1D<T>(h, x); }
template <class T>
void tex2D(T* out, cudaTextureObject_t h, float x, float y) { *out = tex2D<T>(h, x, y); }

namespace cuset {
namespace tex {
inline std::atomic<cudaArray*>* surfaces() {
  static std::atomic<cudaArray*> slots[kMaxTextures];
  return slots;
}

// The bytes a surface access of `n` bytes at byte x, row y touches (null: dropped, zero mode).
inline unsigned char* surface_at(cudaSurfaceObject_t h, long long x, long long y, size_t n, cudaSurfaceBoundaryMode mode, int dims, const char* fn) {
  cudaArray* a = h >= 1 && h <= kMaxTextures ? surfaces()[h - 1].load(std::memory_order_acquire) : nullptr;
  if (!a) fault(std::string(fn) + " in " + where() + ": surface object " + std::to_string(h) + " was never created with cudaCreateSurfaceObject, or was destroyed");
  if ((a->height ? 2 : 1) != dims) fault(std::string(fn) + " in " + where() + ": surface object " + std::to_string(h) + " is over a " + (a->height ? "2D" : "1D") + " array");
  const long long w = (long long)a->row_bytes(), rows = (long long)a->rows();
  if (x < 0 || x + (long long)n > w || y < 0 || y >= rows) {
    if (mode == cudaBoundaryModeZero) return nullptr;
    if (mode == cudaBoundaryModeTrap)
      fault(std::string(fn) + " in " + where() + ": out-of-range surface access at byte " + std::to_string(x) + ", row " + std::to_string(y) +
            " of a " + std::to_string(w) + "-byte x " + std::to_string(rows) + "-row array (cudaBoundaryModeTrap)");
    x = std::clamp<long long>(x, 0, w - (long long)n);
    y = std::clamp<long long>(y, 0, rows - 1);
  }
  return a->data + (size_t)y * a->row_bytes() + (size_t)x;
}
}  // namespace tex
}  // namespace cuset

template <class T>
T surf1Dread(cudaSurfaceObject_t s, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  T v{};
  if (const unsigned char* p = cuset::tex::surface_at(s, x, 0, sizeof(T), mode, 1, "surf1Dread")) memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
T surf2Dread(cudaSurfaceObject_t s, int x, int y, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  T v{};
  if (const unsigned char* p = cuset::tex::surface_at(s, x, y, sizeof(T), mode, 2, "surf2Dread")) memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void surf1Dread(T* out, cudaSurfaceObject_t s, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) { *out = surf1Dread<T>(s, x, mode); }
template <class T>
void surf2Dread(T* out, cudaSurfaceObject_t s, int x, int y, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) { *out = surf2Dread<T>(s, x, y, mode); }
template <class T>
void surf1Dwrite(T v, cudaSurfaceObject_t s, int x, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  if (unsigned char* p = cuset::tex::surface_at(s, x, 0, sizeof(T), mode, 1, "surf1Dwrite")) memcpy(p, &v, sizeof(T));
}
template <class T>
void surf2Dwrite(T v, cudaSurfaceObject_t s, int x, int y, cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap) {
  if (unsigned char* p = cuset::tex::surface_at(s, x, y, sizeof(T), mode, 2, "surf2Dwrite")) memcpy(p, &v, sizeof(T));
}

extern "C" {

inline cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
  cudaChannelFormatDesc d;
  d.x = x;
  d.y = y;
  d.z = z;
  d.w = w;
  d.f = f;
  return d;
}

inline cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height, unsigned int flags) {
  int channels, bits;
  if (!array || !desc || width == 0) return cuset::set_error(cudaErrorInvalidValue);
  if (!cuset::tex::layout(*desc, channels, bits)) return cuset::set_error(cudaErrorInvalidChannelDescriptor);
  auto* a = new cudaArray{*desc, width, height, (size_t)channels * bits / 8, nullptr, flags};
  a->data = static_cast<unsigned char*>(malloc(a->row_bytes() * a->rows()));
  if (!a->data) {
    delete a;
    return cuset::set_error(cudaErrorMemoryAllocation);
  }
  cuset::fill_garbage(a->data, a->row_bytes() * a->rows());  // fresh device memory holds garbage
  *array = a;
  return cudaSuccess;
}

inline cudaError_t cudaFreeArray(cudaArray_t array) {
  if (!array) return cudaSuccess;
  free(array->data);
  delete array;
  return cudaSuccess;
}

inline cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array) {
  if (!array) return cuset::set_error(cudaErrorInvalidResourceHandle);
  if (desc) *desc = array->desc;
  if (extent) *extent = make_cudaExtent(array->width, array->height, 0);
  if (flags) *flags = 0;
  return cudaSuccess;
}

// Rows of `width` bytes between an array (from byte wOffset of row hOffset) and linear memory.
inline cudaError_t cuset_array_copy(cudaArray_const_t array, size_t wOffset, size_t hOffset, void* mem, size_t pitch, size_t width, size_t height,
                                    bool to_array) {
  if (!array || (width && !mem)) return cuset::set_error(cudaErrorInvalidValue);
  if (wOffset + width > array->row_bytes() || hOffset + height > array->rows()) return cuset::set_error(cudaErrorInvalidValue);
  cuset::Unprotect open;  // `mem` may be device memory
  for (size_t r = 0; r < height; ++r) {
    unsigned char* row = array->data + (hOffset + r) * array->row_bytes() + wOffset;
    unsigned char* m = static_cast<unsigned char*>(mem) + r * pitch;
    if (to_array) memcpy(row, m, width);
    else memcpy(m, row, width);
  }
  return cudaSuccess;
}

inline cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width, size_t height,
                                       cudaMemcpyKind) {
  if (height > 1 && spitch < width) return cuset::set_error(cudaErrorInvalidPitchValue);
  return cuset_array_copy(dst, wOffset, hOffset, const_cast<void*>(src), spitch, width, height, true);
}
inline cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width, size_t height,
                                         cudaMemcpyKind) {
  if (height > 1 && dpitch < width) return cuset::set_error(cudaErrorInvalidPitchValue);
  return cuset_array_copy(src, wOffset, hOffset, dst, dpitch, width, height, false);
}
inline cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width,
                                            size_t height, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}
inline cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width,
                                              size_t height, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}

// `count` bytes from (wOffset, hOffset) on, running on into the following rows.
inline cudaError_t cuset_array_linear(cudaArray_const_t a, size_t wOffset, size_t hOffset, void* mem, size_t count, bool to_array) {
  if (!a || (count && !mem)) return cuset::set_error(cudaErrorInvalidValue);
  size_t start = hOffset * a->row_bytes() + wOffset;
  if (wOffset > a->row_bytes() || start + count > a->row_bytes() * a->rows()) return cuset::set_error(cudaErrorInvalidValue);
  cuset::Unprotect open;
  if (to_array) memcpy(a->data + start, mem, count);
  else memcpy(mem, a->data + start, count);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count, cudaMemcpyKind) {
  return cuset_array_linear(dst, wOffset, hOffset, const_cast<void*>(src), count, true);
}
inline cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count, cudaMemcpyKind) {
  return cuset_array_linear(src, wOffset, hOffset, dst, count, false);
}
inline cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpyToArray(dst, wOffset, hOffset, src, count, kind);
}
inline cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count, cudaMemcpyKind kind,
                                            cudaStream_t) {
  return cudaMemcpyFromArray(dst, src, wOffset, hOffset, count, kind);
}

inline cudaError_t cudaCreateTextureObject(cudaTextureObject_t* obj, const cudaResourceDesc* res, const cudaTextureDesc* desc,
                                           const cudaResourceViewDesc* view) {
  if (!obj || !res || !desc) return cuset::set_error(cudaErrorInvalidValue);
  if (view) cuset::unsupported("cudaCreateTextureObject with a resource view (cudaResourceViewDesc)");
  auto t = std::make_unique<cuset::tex::Texture>();
  t->res = *res;
  t->desc = *desc;
  switch (res->resType) {
    case cudaResourceTypeArray: {
      cudaArray_t a = res->res.array.array;
      if (!a) return cuset::set_error(cudaErrorInvalidResourceHandle);
      t->fmt = a->desc;
      t->base = a->data;
      t->width = a->width;
      t->height = a->rows();
      t->pitch = a->row_bytes();
      t->dims = a->height ? 2 : 1;
      break;
    }
    case cudaResourceTypePitch2D: {
      const auto& p = res->res.pitch2D;
      t->fmt = p.desc;
      t->base = static_cast<const unsigned char*>(p.devPtr);
      t->width = p.width;
      t->height = p.height;
      t->pitch = p.pitchInBytes;
      t->dims = 2;
      if (!p.devPtr || p.pitchInBytes % 32) return cuset::set_error(cudaErrorInvalidValue);  // texturePitchAlignment
      break;
    }
    case cudaResourceTypeLinear: {
      const auto& l = res->res.linear;
      t->fmt = l.desc;
      t->base = static_cast<const unsigned char*>(l.devPtr);
      t->height = 1;
      t->dims = 1;
      t->fetch_only = true;
      if (!l.devPtr) return cuset::set_error(cudaErrorInvalidValue);
      break;
    }
    default:
      cuset::unsupported("cudaCreateTextureObject over a mipmapped array");
  }
  if (!cuset::tex::layout(t->fmt, t->channels, t->bits)) return cuset::set_error(cudaErrorInvalidChannelDescriptor);
  t->elem = (size_t)t->channels * t->bits / 8;
  if (res->resType == cudaResourceTypeLinear) {
    t->width = res->res.linear.sizeInBytes / t->elem;
    t->pitch = res->res.linear.sizeInBytes;
  }
  if (res->resType == cudaResourceTypePitch2D && t->pitch < t->width * t->elem) return cuset::set_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(cuset::tex::table_mu());
  for (size_t i = 0; i < cuset::tex::kMaxTextures; ++i) {
    if (cuset::tex::table()[i].load() == nullptr) {
      cuset::tex::table()[i].store(t.release(), std::memory_order_release);
      *obj = i + 1;
      return cudaSuccess;
    }
  }
  return cuset::set_error(cudaErrorMemoryAllocation);
}

inline cudaError_t cudaDestroyTextureObject(cudaTextureObject_t obj) {
  std::lock_guard<std::mutex> lk(cuset::tex::table_mu());
  if (obj < 1 || obj > cuset::tex::kMaxTextures) return cuset::set_error(cudaErrorInvalidValue);
  delete cuset::tex::table()[obj - 1].exchange(nullptr);
  return cudaSuccess;
}

inline cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* obj, const cudaResourceDesc* res) {
  if (!obj || !res || res->resType != cudaResourceTypeArray || !res->res.array.array) return cuset::set_error(cudaErrorInvalidValue);
  cudaArray_t a = res->res.array.array;
  if (!(a->flags & cudaArraySurfaceLoadStore)) return cuset::set_error(cudaErrorInvalidValue);  // CUDA: the array must allow surface access
  std::lock_guard<std::mutex> lk(cuset::tex::table_mu());
  for (size_t i = 0; i < cuset::tex::kMaxTextures; ++i) {
    if (cuset::tex::surfaces()[i].load() == nullptr) {
      cuset::tex::surfaces()[i].store(a, std::memory_order_release);
      *obj = i + 1;
      return cudaSuccess;
    }
  }
  return cuset::set_error(cudaErrorMemoryAllocation);
}

inline cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t obj) {
  std::lock_guard<std::mutex> lk(cuset::tex::table_mu());
  if (obj < 1 || obj > cuset::tex::kMaxTextures) return cuset::set_error(cudaErrorInvalidValue);
  cuset::tex::surfaces()[obj - 1].store(nullptr);
  return cudaSuccess;
}

inline cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* res, cudaTextureObject_t obj) {
  std::lock_guard<std::mutex> lk(cuset::tex::table_mu());
  cuset::tex::Texture* t = obj >= 1 && obj <= cuset::tex::kMaxTextures ? cuset::tex::table()[obj - 1].load() : nullptr;
  if (!t || !res) return cuset::set_error(cudaErrorInvalidValue);
  *res = t->res;
  return cudaSuccess;
}

inline cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* desc, cudaTextureObject_t obj) {
  std::lock_guard<std::mutex> lk(cuset::tex::table_mu());
  cuset::tex::Texture* t = obj >= 1 && obj <= cuset::tex::kMaxTextures ? cuset::tex::table()[obj - 1].load() : nullptr;
  if (!t || !desc) return cuset::set_error(cudaErrorInvalidValue);
  *desc = t->desc;
  return cudaSuccess;
}

}  // extern "C"
