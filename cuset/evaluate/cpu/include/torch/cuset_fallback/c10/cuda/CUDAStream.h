// Real-torch fallback of the CuSeT CPU emulator: the emulator's CUDAStream.h (see ../../cuset_fallback.h).
#include "../../../../c10/cuda/CUDAStream.h"
