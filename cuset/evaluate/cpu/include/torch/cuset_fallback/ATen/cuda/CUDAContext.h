// Real-torch fallback of the CuSeT CPU emulator: the emulator's CUDAContext.h (see ../../cuset_fallback.h).
#include "../../../../ATen/cuda/CUDAContext.h"
