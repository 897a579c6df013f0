// ATen/core/TensorAccessor.h for the CuSeT CPU emulator's torch shim: torch's accessor types
// (TensorAccessor for host code, PackedTensorAccessor32/64 passed by value to kernels) with
// the same template parameters, so `x.packed_accessor32<float, 2, torch::RestrictPtrTraits>()`
// and `a[i][j]` in a kernel compile unchanged.
#ifndef CUSET_ATEN_TENSORACCESSOR_H
#define CUSET_ATEN_TENSORACCESSOR_H

#include <cstddef>
#include <cstdint>

namespace at {

template <typename T>
struct DefaultPtrTraits {
  typedef T* PtrType;
};
template <typename T>
struct RestrictPtrTraits {
  typedef T* __restrict__ PtrType;
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
class TensorAccessorBase {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  TensorAccessorBase(PtrType data, const index_t* sizes, const index_t* strides) : data_(data), sizes_(sizes), strides_(strides) {}
  index_t stride(index_t i) const { return strides_[i]; }
  index_t size(index_t i) const { return sizes_[i]; }
  PtrType data() { return data_; }
  const PtrType data() const { return data_; }

 protected:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
class TensorAccessor : public TensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  using TensorAccessorBase<T, N, PtrTraits, index_t>::TensorAccessorBase;
  TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
  const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
};

template <typename T, template <typename U> class PtrTraits, typename index_t>
class TensorAccessor<T, 1, PtrTraits, index_t> : public TensorAccessorBase<T, 1, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  using TensorAccessorBase<T, 1, PtrTraits, index_t>::TensorAccessorBase;
  T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  const T& operator[](index_t i) const { return this->data_[this->strides_[0] * i]; }
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
class GenericPackedTensorAccessorBase {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  GenericPackedTensorAccessorBase(PtrType data, const int64_t* sizes, const int64_t* strides) : data_(data) {
    for (size_t i = 0; i < N; ++i) {
      sizes_[i] = (index_t)sizes[i];
      strides_[i] = (index_t)strides[i];
    }
  }
  index_t stride(index_t i) const { return strides_[i]; }
  index_t size(index_t i) const { return sizes_[i]; }
  PtrType data() { return data_; }
  const PtrType data() const { return data_; }

 protected:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
class GenericPackedTensorAccessor : public GenericPackedTensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  using GenericPackedTensorAccessorBase<T, N, PtrTraits, index_t>::GenericPackedTensorAccessorBase;
  TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
  const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
};

template <typename T, template <typename U> class PtrTraits, typename index_t>
class GenericPackedTensorAccessor<T, 1, PtrTraits, index_t> : public GenericPackedTensorAccessorBase<T, 1, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  using GenericPackedTensorAccessorBase<T, 1, PtrTraits, index_t>::GenericPackedTensorAccessorBase;
  T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  const T& operator[](index_t i) const { return this->data_[this->strides_[0] * i]; }
};

template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int32_t>;
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, int64_t>;
template <typename T, size_t N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = int64_t>
using PackedTensorAccessor = GenericPackedTensorAccessor<T, N, PtrTraits, index_t>;

}  // namespace at

#endif  // CUSET_ATEN_TENSORACCESSOR_H
