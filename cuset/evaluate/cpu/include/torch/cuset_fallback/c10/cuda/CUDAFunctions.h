// Real-torch fallback of the CuSeT CPU emulator: the emulator's CUDAFunctions.h (see ../../cuset_fallback.h).
#include "../../../../c10/cuda/CUDAFunctions.h"
