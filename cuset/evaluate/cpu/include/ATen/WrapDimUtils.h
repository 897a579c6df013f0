// ATen/WrapDimUtils.h for the CuSeT CPU emulator: at::maybe_wrap_dim (c10/core/WrapDimMinimal.h)
// and the rest of the shim (torch/extension.h).
#include <c10/core/WrapDimMinimal.h>
#include <torch/extension.h>
