// Real-torch fallback of the CuSeT CPU emulator: the emulator's CUDAContextLight.h (see ../../cuset_fallback.h).
#include "../../../../ATen/cuda/CUDAContextLight.h"
