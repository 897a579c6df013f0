// torch/all.h for the CuSeT CPU emulator: the whole torch shim is torch/extension.h.
#include <torch/extension.h>
