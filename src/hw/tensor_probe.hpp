// Tensor-core GEMM peaks of `aisp hw`: one cuBLASLt matmul per precision on random inputs, timed
// call by call. The pure helpers (names, FLOP count, layout, host encoding of the inputs) are
// exposed so that they are unit-tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hw/probe_result.hpp"

namespace aisp {

enum class tensor_precision { bf16, fp16, tf32, fp8_e4m3 };

// "bf16_tensor", "fp16_tensor", "tf32_tensor", "fp8_tensor": the probe_result name.
[[nodiscard]] std::string_view tensor_probe_name(tensor_precision precision);
// One multiply and one add per term of each of the m*n inner products of length k. In double:
// 2 * 8192^3 overflows 32 bits.
[[nodiscard]] double gemm_flops(int m, int n, int k);
// "8192^3" for a cube, else "m x n x k".
[[nodiscard]] std::string gemm_size_label(int m, int n, int k);
// Bytes of one element of A and B (tf32 is stored as fp32).
[[nodiscard]] std::size_t tensor_input_element_bytes(tensor_precision precision);
// Bytes of one element of D: the 16-bit types write their own type, tf32 fp32, fp8 bf16.
[[nodiscard]] std::size_t tensor_output_element_bytes(tensor_precision precision);
// Whether A is stored transposed ("TN"): FP8 cuBLASLt kernels accept no other layout, so fp8 uses
// it; the others use "NN", the layout torch.matmul of row-major tensors hands cuBLAS.
[[nodiscard]] bool tensor_uses_tn_layout(tensor_precision precision);
// `count` elements uniform in [-1, 1], encoded in the input type of `precision`; element i is a
// pure function of (stream_id, i) (support/seeded_fill).
[[nodiscard]] std::vector<unsigned char> random_operand_bytes(tensor_precision precision,
                                                              std::uint64_t stream_id, std::size_t count);

// D = A * B on the current device: warm-up, then `repetitions` calls timed one by one with CUDA
// events; rates in FLOP/s. Never throws: any failure comes back in `error`, with every resource
// released.
[[nodiscard]] probe_result measure_tensor_peak(tensor_precision precision, int m, int n, int k,
                                               int repetitions, std::uint64_t seed);

}  // namespace aisp
