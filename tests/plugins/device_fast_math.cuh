// The fast-math unit of the device_fast_math plugin (device_fast_math_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

inline constexpr unsigned int fast_math_block = 256;

// y = (4x + 2) / 2 on `stream`, from a unit built with nvcc --use_fast_math.
void launch_fast_math_affine(const float* x, float* y, std::int64_t n, cudaStream_t stream);
