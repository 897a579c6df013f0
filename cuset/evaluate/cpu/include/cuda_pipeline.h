// cuda_pipeline.h for the CuSeT CPU emulator: the primitives (nvcuda::experimental's pipeline
// class is not provided).
#pragma once
#include "cuda_pipeline_primitives.h"
