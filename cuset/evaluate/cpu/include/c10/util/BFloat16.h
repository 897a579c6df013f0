// c10/util/BFloat16.h for the CuSeT torch shim: c10::BFloat16 lives with c10::Half.
#include <c10/util/Half.h>
