// Real-torch fallback of the CuSeT CPU emulator: the emulator's CUDAException.h (see ../../cuset_fallback.h).
#include "../../../../c10/cuda/CUDAException.h"
