// c10/cuda/CUDAFunctions.h for the CuSeT CPU emulator (device_count, current_device, ...).
#include <c10/cuda/CUDAStream.h>
