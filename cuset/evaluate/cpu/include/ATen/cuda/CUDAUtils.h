// ATen/cuda/CUDAUtils.h for the CuSeT CPU emulator: see ATen/cuda/CUDAContext.h.
#include <ATen/cuda/CUDAContext.h>
