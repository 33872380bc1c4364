// Where cuBLASLt's block-scaled fp8 GEMM reads its scales (Note [cuBLASLt block scales] in
// chapters/ch19/cublaslt_block_scaled_peer.cuh): every candidate layout of the 1 x 128 scales
// (cuBLASLt's B, our A) and of the 128 x 128 scales (its A, our B) through cuBLASLt, at a shape
// whose block counts (3 x 3 of B) tell each candidate apart, against the fp64 product. The
// layouts the peer uses must be the ones that match.
#include <gtest/gtest.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../../chapters/ch19/cublaslt_block_scaled_peer.cuh"
#include "aisp/check.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "aisp/device_scratch.hpp"
#include "device_upload.hpp"
#include "gpu_guard.hpp"
#include "support/element_codec.hpp"
#include "support/fp8_codec.hpp"

namespace {

using aisp::testing::upload;

using aisp::ch19::scale_layout;

constexpr int m = 272, n = 384, k = 384;  // m, n, k multiples of 16; 3 k blocks, 3 row blocks of B
constexpr int k_blocks = k / 128, n_blocks = n / 128;

struct operands {
  std::vector<std::uint8_t> a, b;   // e4m3 bits, (m, k) and (n, k)
  std::vector<float> sa, sb;        // row-major: (m, k_blocks) and (n_blocks, k_blocks)
};

operands random_operands() {
  std::mt19937 rng(20261202);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f), scale(0.25f, 4.0f);
  operands o;
  for (int i = 0; i < m * k; ++i) o.a.push_back(aisp::float_to_fp8_bits(value(rng), aisp::fp8_format::e4m3));
  for (int i = 0; i < n * k; ++i) o.b.push_back(aisp::float_to_fp8_bits(value(rng), aisp::fp8_format::e4m3));
  for (int i = 0; i < m * k_blocks; ++i) o.sa.push_back(scale(rng));
  for (int i = 0; i < n_blocks * k_blocks; ++i) o.sb.push_back(scale(rng));
  return o;
}

std::vector<double> reference(const operands& o) {
  std::vector<double> c(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int kb = 0; kb < k_blocks; ++kb) {
        double partial = 0;
        for (int p = kb * 128; p < (kb + 1) * 128; ++p) {
          partial += static_cast<double>(aisp::fp8_bits_to_float(o.a[i * k + p], aisp::fp8_format::e4m3)) *
                     aisp::fp8_bits_to_float(o.b[j * k + p], aisp::fp8_format::e4m3);
        }
        sum += partial * o.sa[i * k_blocks + kb] * o.sb[(j / 128) * k_blocks + kb];
      }
      c[static_cast<std::size_t>(i) * n + j] = sum;
    }
  }
  return c;
}

// The scales laid out as `layout` says, padding zero.
std::vector<float> laid_out(const std::vector<float>& row_major, int rows, scale_layout layout) {
  std::vector<float> out(static_cast<std::size_t>(aisp::ch19::scale_entries(layout, rows, k_blocks)), 0.0f);
  for (int r = 0; r < rows; ++r) {
    for (int kb = 0; kb < k_blocks; ++kb) out[aisp::ch19::scale_index(layout, rows, k_blocks, r, kb)] = row_major[r * k_blocks + kb];
  }
  return out;
}

// C through cuBLASLt with the scales in these layouts, or empty where it has no algorithm.
std::vector<double> through_cublaslt(const operands& o, scale_layout a_layout, scale_layout b_layout) {
  aisp::cublaslt_plan plan(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const auto a = upload(o.a), b = upload(o.b);
  const auto sa = upload(laid_out(o.sa, m, a_layout)), sb = upload(laid_out(o.sb, n_blocks, b_layout));
  plan.use_row_major_tn(CUDA_R_8F_E4M3, CUDA_R_16BF, m, n, k);
  aisp::ch19::use_block_scales(plan);  // the peer's descriptor; only the scales' layout is tried here
  aisp::ch19::point_at_scales(plan, static_cast<const float*>(sa->data()), static_cast<const float*>(sb->data()));
  plan.allocate_workspace(std::size_t{32} << 20);
  try {
    plan.choose_algorithm(plan.workspace_bytes, "the block-scaled probe");
  } catch (const std::exception&) {
    return {};
  }
  aisp::device_scratch c(static_cast<std::size_t>(m) * n * sizeof(__nv_bfloat16));
  const float alpha = 1.0f, beta = 0.0f;
  AISP_CUBLAS_CHECK(cublasLtMatmul(plan.handle, plan.desc, &alpha, b->data(), plan.layout_a, a->data(), plan.layout_b, &beta, c.data(),
                                   plan.layout_c, c.data(), plan.layout_c, &plan.algo, plan.workspace, plan.workspace_bytes, nullptr));
  return aisp::testing::download_bf16(c.data(), static_cast<std::size_t>(m) * n);
}

double relative_l2(const std::vector<double>& got, const std::vector<double>& want) {
  double error = 0, size = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    error += (got[i] - want[i]) * (got[i] - want[i]);
    size += want[i] * want[i];
  }
  return std::sqrt(error / size);
}

std::string name_of(scale_layout l) {
  return std::string(l.outer_fastest ? "outer-fastest" : "k-block-fastest") + (l.padded_to_4 ? "+pad4" : "");
}

TEST(cublaslt_block_scales, the_peer_lays_its_scales_out_where_cublaslt_reads_them) {
  AISP_REQUIRE_GPU();
  int device = 0, major = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major != 9) GTEST_SKIP() << "cuBLASLt's 1 x 128 / 128 x 128 fp8 scales are a Hopper mode (sm_90)";
  const operands o = random_operands();
  const std::vector<double> want = reference(o);
  const scale_layout candidates[] = {{true, false}, {true, true}, {false, false}, {false, true}};
  std::string matches;
  bool peer_matches = false;
  for (const scale_layout a_layout : candidates) {
    for (const scale_layout b_layout : candidates) {
      const std::vector<double> got = through_cublaslt(o, a_layout, b_layout);
      const std::string label = "A " + name_of(a_layout) + ", B " + name_of(b_layout);
      if (got.empty()) {
        std::printf("%s: no algorithm\n", label.c_str());
        continue;
      }
      const double error = relative_l2(got, want);
      std::printf("%s: rel-L2 %.3g\n", label.c_str(), error);
      if (error > 1e-2) continue;  // bf16 output: ~2^-9; a misplaced scale: O(1)
      matches += label + "; ";
      const auto& peer_a = aisp::ch19::cublaslt_vec128_scales;
      const auto& peer_b = aisp::ch19::cublaslt_blk128_scales;
      if (aisp::ch19::same_places(a_layout, peer_a, m, k_blocks) && aisp::ch19::same_places(b_layout, peer_b, n_blocks, k_blocks)) {
        peer_matches = true;
      }
    }
  }
  ::testing::Test::RecordProperty("matching_layouts", matches);
  ASSERT_FALSE(matches.empty()) << "no candidate layout reproduces the fp64 product";
  EXPECT_TRUE(peer_matches) << "the peer's layouts are not among those that match: " << matches;
}

// Host only (runs without a GPU): where the pair's row-major scales may go to cuBLASLt as they
// are, and where the peer must rewrite them; each answer checked against every index.
TEST(cublaslt_block_scales, same_places_is_exact_for_every_shape_of_scales) {
  const scale_layout layouts[] = {{true, false}, {true, true}, {false, false}, {false, true}};
  for (const scale_layout a : layouts) {
    for (const scale_layout b : layouts) {
      for (const int rows : {1, 2, 3, 4, 8}) {
        for (const int blocks : {1, 2, 3, 4, 5}) {
          bool same = true;
          for (int r = 0; r < rows; ++r) {
            for (int kb = 0; kb < blocks; ++kb) {
              same = same && aisp::ch19::scale_index(a, rows, blocks, r, kb) == aisp::ch19::scale_index(b, rows, blocks, r, kb);
            }
          }
          EXPECT_EQ(aisp::ch19::same_places(a, b, rows, blocks), same)
              << name_of(a) << " against " << name_of(b) << " at " << rows << " x " << blocks;
        }
      }
    }
  }
  // The case a first version got wrong: one k block of 2 row blocks, padded k-block-fastest.
  EXPECT_FALSE(aisp::ch19::same_places(aisp::ch19::cublaslt_blk128_scales, aisp::ch19::row_major_scales, 2, 1));
}

}  // namespace
