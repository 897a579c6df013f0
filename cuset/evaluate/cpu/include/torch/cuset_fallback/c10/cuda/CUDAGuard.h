// Real-torch fallback of the CuSeT CPU emulator: the emulator's CUDAGuard.h (see ../../cuset_fallback.h).
#include "../../../../c10/cuda/CUDAGuard.h"
