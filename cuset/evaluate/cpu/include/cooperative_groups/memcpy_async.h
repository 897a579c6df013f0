#pragma once
#include <cooperative_groups.h>  // cg::memcpy_async is refused by the translator (cp.async)
