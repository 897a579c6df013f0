// Real-torch fallback of the CuSeT CPU emulator: the emulator's cooperative groups, not CUDA's.
#include "../../cooperative_groups.h"
