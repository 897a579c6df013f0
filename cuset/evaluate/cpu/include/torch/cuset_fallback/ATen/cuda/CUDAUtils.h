// Real-torch fallback of the CuSeT CPU emulator: the emulator's CUDAUtils.h (see ../../cuset_fallback.h).
#include "../../../../ATen/cuda/CUDAUtils.h"
