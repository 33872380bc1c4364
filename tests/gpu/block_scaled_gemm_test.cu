// ch19's block-scaled fp8 GEMM kernel (Note [block scales] in labs/gemm/steps_hopper.cuh) on the
// GPU's side of the per-tensor against per-block comparison (chapters/ch19/README.md): the same
// transformer-shaped operands (chapters/ch19/layer_shaped_data.hpp) quantized to e4m3 with one
// scale a tensor (every scale entry the same) and with one per 1 x 128 of A and 128 x 128 of B,
// through the kernel, against the fp64 product of the unquantized values. The kernel must add
// no more than its bf16 output's rounding to the host model's quantization error, and per-block
// scales must keep the small tokens that one scale a tensor loses.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../../chapters/ch19/block_scaling.hpp"
#include "../../chapters/ch19/layer_shaped_data.hpp"
#include "../../labs/gemm/fp8_tiles.cuh"
#include "../../labs/gemm/steps_hopper.cuh"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "device_upload.hpp"
#include "gpu_guard.hpp"
#include "support/element_codec.hpp"
#include "support/fp8_codec.hpp"

namespace {

using aisp::testing::upload;

namespace h = aisp::labs_gemm::hopper;
using aisp::ch19::quantized_matrix;

constexpr int m = 256, n = 256, k = 512;  // whole tiles of the TMA path (two 128-row CTAs a cluster)
constexpr int k_blocks = k / h::scale_block;

// The kernel's scale layout, one entry a (row block, k block): A's rows one at a time, B's 128 at a time.
std::vector<float> kernel_scales(const quantized_matrix& q, int row_block) {
  std::vector<float> out;
  for (int r = 0; r < q.rows; r += row_block) {
    for (int kb = 0; kb < k_blocks; ++kb) out.push_back(static_cast<float>(q.scale_of(r, kb * h::scale_block)));
  }
  return out;
}

// C = A B^T through the kernel, A and B quantized as given, as doubles.
std::vector<double> kernel_product(const quantized_matrix& qa, const quantized_matrix& qb) {
  std::vector<std::uint8_t> a_bits(qa.values.size()), b_bits(qb.values.size());
  for (std::size_t i = 0; i < a_bits.size(); ++i) a_bits[i] = aisp::float_to_fp8_bits(static_cast<float>(qa.values[i]), aisp::fp8_format::e4m3);
  for (std::size_t i = 0; i < b_bits.size(); ++i) b_bits[i] = aisp::float_to_fp8_bits(static_cast<float>(qb.values[i]), aisp::fp8_format::e4m3);
  const auto a = upload(a_bits), b = upload(b_bits);
  const auto sa = upload(kernel_scales(qa, 1)), sb = upload(kernel_scales(qb, h::scale_block));
  aisp::device_scratch c(static_cast<std::size_t>(m) * n * sizeof(__nv_bfloat16));
  const aisp::labs_gemm::fp8_gemm_problem p{static_cast<const __nv_fp8_e4m3*>(a->data()), static_cast<const __nv_fp8_e4m3*>(b->data()),
                                            static_cast<__nv_bfloat16*>(c.data()), m, n, k};
  h::launch_cluster_persistent<h::e4m3_operands, h::accumulation::promoted_block_scaled>(
      p, nullptr, h::block_scales{static_cast<const float*>(sa->data()), static_cast<const float*>(sb->data())});
  return aisp::testing::download_bf16(c.data(), static_cast<std::size_t>(m) * n);
}

// The kernel's C against the fp64 product of the unquantized operands.
aisp::ch19::product_error error_of(const std::vector<double>& c, const std::vector<double>& a, const std::vector<double>& b) {
  return aisp::ch19::product_error_of(a, b, m, n, k, [&](int i, int j) { return c[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)]; });
}

void record(const std::string& label, const aisp::ch19::product_error& e) {
  ::testing::Test::RecordProperty(label + "_relative_l2", std::to_string(e.relative_l2));
  ::testing::Test::RecordProperty(label + "_worst_row_relative_l2", std::to_string(e.worst_row_relative_l2));
  std::printf("%s: rel-L2 %.4f, worst token %.4f\n", label.c_str(), e.relative_l2, e.worst_row_relative_l2);
}

TEST(block_scaled_gemm, per_block_scales_keep_the_small_tokens_on_the_gpu_and_the_kernel_adds_only_its_output_rounding) {
  AISP_REQUIRE_GPU();
  if (!h::facts_for_current_device().hopper) GTEST_SKIP() << "the block-scaled kernel is sm_90a (wgmma e4m3)";
  const auto a = aisp::ch19::layer_activations(m, k, true);
  const auto b = aisp::ch19::layer_weights(n, k, true);
  const auto tensor_a = aisp::ch19::quantize(a, m, k, m, k), tensor_b = aisp::ch19::quantize(b, n, k, n, k);
  const auto block_a = aisp::ch19::quantize(a, m, k, 1, h::scale_block), block_b = aisp::ch19::quantize(b, n, k, h::scale_block, h::scale_block);
  const auto host_tensor = aisp::ch19::quantized_product_error(a, b, tensor_a, tensor_b);
  const auto host_block = aisp::ch19::quantized_product_error(a, b, block_a, block_b);
  const auto gpu_tensor = error_of(kernel_product(tensor_a, tensor_b), a, b);
  const auto gpu_block = error_of(kernel_product(block_a, block_b), a, b);
  record("host_per_tensor", host_tensor);
  record("host_per_block", host_block);
  record("gpu_per_tensor", gpu_tensor);
  record("gpu_per_block", gpu_block);
  // bf16 output: 2^-9 relative at most a value, ~2^-9 / sqrt(3) rms; the fp32 sums add far less.
  constexpr double output_rounding = 0x1.0p-9;
  EXPECT_LT(gpu_block.worst_row_relative_l2, host_block.worst_row_relative_l2 + output_rounding);
  EXPECT_LT(gpu_block.relative_l2, host_block.relative_l2 + output_rounding);
  EXPECT_LT(gpu_tensor.relative_l2, host_tensor.relative_l2 + output_rounding);
  EXPECT_GT(gpu_tensor.worst_row_relative_l2, 5 * gpu_block.worst_row_relative_l2) << "one scale a tensor loses the small tokens";
  EXPECT_LT(gpu_block.worst_row_relative_l2, 0.05) << "every token keeps e4m3's few percent";
}

}  // namespace
