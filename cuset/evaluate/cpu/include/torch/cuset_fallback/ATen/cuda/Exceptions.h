// Real-torch fallback of the CuSeT CPU emulator: the emulator's Exceptions.h (see ../../cuset_fallback.h).
#include "../../../../ATen/cuda/Exceptions.h"
