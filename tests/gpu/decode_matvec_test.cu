// labs/decode's matvec (Note [tensor-core rows] in labs/decode/decode_matvec.cuh): a row alone
// gives the bits it gets inside a batch of three 8-row tiles and inside one tile of five rows
// (the launches a static batch's decode step makes; one row folds the norm and swiglu in, five
// run their kernels first), at the benchmark model's k (2048:
// eight splits of 256, a warp each; 8192: 32 splits, four a warp), ragged last splits (1000,
// 3000), more splits than a block's eight warps hold evenly (9216: 36; 17408: 68), and the
// model's widths, where a tile's warps each walk several splits (Note [warps a tile]); and every
// sum is the fp64 dot product to fp32 accuracy (x split into two tf32 pieces). Every matvec reads
// the packed copy of its weights (Note [packed weights]), made here as a decode loop makes it.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <vector>

#include "../../labs/decode/matvec_launch.cuh"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "gpu_guard.hpp"
#include "support/element_codec.hpp"

namespace {

constexpr int batch = 21;  // four 8-row tiles a block: the third short, the fourth empty; a row alone runs one tile
constexpr int few = 5;     // one 8-row tile, part full: a decode step of a few sequences
constexpr int chunk = 12;  // two 8-row tiles, the second part full: a prefill chunk mixed with decodes (Note [weights in shared memory])

// Deterministic values in [-1, 1), none zero.
float draw(std::uint64_t i) {
  const double unit = std::fmod(0.6180339887498949 * static_cast<double>(i + 1) * static_cast<double>(i % 7919 + 3), 1.0);
  return static_cast<float>(2.0 * unit - 1.0) + 1e-3f;
}

std::vector<float> to_host(const aisp::device_scratch& d, std::size_t count) {
  std::vector<float> out(count);
  AISP_CUDA_CHECK(cudaMemcpy(out.data(), d.data(), count * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

// The packed copy of w (n_out, k) that the matvec reads (Note [packed weights]), into `packed`
// (packed_bytes(n_out, k)).
std::size_t packed_bytes(int n_out, int k) { return static_cast<std::size_t>(aisp::decode::packed_quads(n_out, k)) * sizeof(uint4); }
const uint4* packed_weights(const aisp::device_scratch& w, int n_out, int k, aisp::device_scratch& packed) {
  aisp::decode::pack_matrix(static_cast<const __nv_bfloat16*>(w.data()), n_out, k, static_cast<uint4*>(packed.data()), nullptr);
  return static_cast<const uint4*>(packed.data());
}

// A matvec's shape: 37 features (three tiles of 16, the last one short) give every tile a block's
// warps; the model's widths (Note [warps a tile]) give a tile fewer warps, each walking splits.
struct matvec_case {
  int n_out;
  int k;
};

void PrintTo(const matvec_case& c, std::ostream* out) { *out << c.n_out << "x" << c.k; }

class decode_matvec : public ::testing::TestWithParam<matvec_case> {};

double bf16_value(std::uint16_t bits) {
  const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  float value = 0.0f;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

// Feature n's dot product with row r of x in fp64, and the sum of its products' magnitudes (the
// scale of the rounding a fp32 sum may carry).
struct fp64_dot {
  double sum = 0.0;
  double magnitude = 0.0;
};
fp64_dot dot_in_fp64(const std::vector<double>& w_values, const std::vector<float>& x, int n, int r, int k) {
  fp64_dot dot;
  for (int i = 0; i < k; ++i) {
    const double product = w_values[static_cast<std::size_t>(n) * k + i] * x[static_cast<std::size_t>(r) * k + i];
    dot.sum += product;
    dot.magnitude += std::fabs(product);
  }
  return dot;
}

TEST_P(decode_matvec, one_row_alone_gives_the_bits_it_gets_in_a_batch_and_the_fp64_sum) {
  AISP_REQUIRE_GPU();
  aisp::decode::prepare_matvec_launches();
  const int n_out = GetParam().n_out;
  const int k = GetParam().k;
  std::vector<std::uint16_t> w_bits(static_cast<std::size_t>(n_out) * k);
  std::vector<double> w_values(w_bits.size());
  for (std::size_t i = 0; i < w_bits.size(); ++i) {
    w_bits[i] = aisp::float_to_bf16_bits(draw(i));
    w_values[i] = bf16_value(w_bits[i]);
  }
  std::vector<float> x(static_cast<std::size_t>(batch) * k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = draw(i + 1000003);
  std::vector<float> y_start(static_cast<std::size_t>(batch) * n_out);
  for (std::size_t i = 0; i < y_start.size(); ++i) y_start[i] = draw(i + 7000001);

  aisp::device_scratch w(w_bits.size() * 2);
  aisp::device_scratch x_d(x.size() * sizeof(float));
  aisp::device_scratch batched(y_start.size() * sizeof(float));
  aisp::device_scratch alone(y_start.size() * sizeof(float));
  AISP_CUDA_CHECK(cudaMemcpy(w.data(), w_bits.data(), w_bits.size() * 2, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(x_d.data(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  aisp::device_scratch packed(packed_bytes(n_out, k));
  const uint4* w_d = packed_weights(w, n_out, k, packed);
  for (const bool accumulate : {false, true}) {
    AISP_CUDA_CHECK(cudaMemcpy(batched.data(), y_start.data(), y_start.size() * sizeof(float), cudaMemcpyHostToDevice));
    AISP_CUDA_CHECK(cudaMemcpy(alone.data(), y_start.data(), y_start.size() * sizeof(float), cudaMemcpyHostToDevice));
    aisp::decode::launch_matvec(w_d, static_cast<const float*>(x_d.data()), static_cast<float*>(batched.data()), n_out, k, batch,
                                accumulate, 0.5f, nullptr);
    for (int r = 0; r < batch; ++r) {
      aisp::decode::launch_matvec(w_d, static_cast<const float*>(x_d.data()) + static_cast<std::size_t>(r) * k,
                                  static_cast<float*>(alone.data()) + static_cast<std::size_t>(r) * n_out, n_out, k, 1, accumulate, 0.5f,
                                  nullptr);
    }
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
    const auto together = to_host(batched, y_start.size());
    const auto single = to_host(alone, y_start.size());
    EXPECT_EQ(std::memcmp(together.data(), single.data(), together.size() * sizeof(float)), 0)
        << "k = " << k << (accumulate ? ", accumulating" : "") << ": a row alone differs from the same row in a batch";
    for (const int rows : {2, few, chunk, 16}) {
      AISP_CUDA_CHECK(cudaMemcpy(batched.data(), y_start.data(), y_start.size() * sizeof(float), cudaMemcpyHostToDevice));
      aisp::decode::launch_matvec(w_d, static_cast<const float*>(x_d.data()), static_cast<float*>(batched.data()), n_out, k, rows,
                                  accumulate, 0.5f, nullptr);
      AISP_CUDA_CHECK(cudaDeviceSynchronize());
      const auto some_rows = to_host(batched, y_start.size());
      EXPECT_EQ(std::memcmp(some_rows.data(), single.data(), static_cast<std::size_t>(rows) * n_out * sizeof(float)), 0)
          << "k = " << k << (accumulate ? ", accumulating" : "") << ": a row alone differs from the same row in a launch of " << rows;
      EXPECT_EQ(std::memcmp(some_rows.data() + static_cast<std::size_t>(rows) * n_out, y_start.data() + static_cast<std::size_t>(rows) * n_out,
                            (y_start.size() - static_cast<std::size_t>(rows) * n_out) * sizeof(float)),
                0)
          << "k = " << k << ": a launch of " << rows << " rows wrote past them";
    }
    for (int r = 0; r < batch; ++r) {
      for (int n = 0; n < n_out; ++n) {
        const auto [sum, magnitude] = dot_in_fp64(w_values, x, n, r, k);
        const double expected = (accumulate ? y_start[static_cast<std::size_t>(r) * n_out + n] : 0.0) + 0.5 * sum / std::sqrt(k);
        // x in two tf32 pieces (2^-21 of itself), fp32 accumulators over 1024 k a split, rounded
        // adds of the splits: far under 1e-5 of the products' magnitudes; 1e-6 for the add to y.
        const double bound = 1e-5 * 0.5 * magnitude / std::sqrt(k) + 1e-6;
        EXPECT_NEAR(single[static_cast<std::size_t>(r) * n_out + n], expected, bound) << "k = " << k << ", row " << r << ", feature " << n;
      }
    }
  }
}

// Note [norm as an output scale]: a normed matvec gives a row the same bits alone, in a batch and
// in a few rows, and W rms_norm(x) / sqrt(k) to fp32's accuracy.
TEST_P(decode_matvec, a_normed_row_gets_its_bits_at_every_row_count_and_the_fp64_norm) {
  AISP_REQUIRE_GPU();
  aisp::decode::prepare_matvec_launches();
  const int n_out = GetParam().n_out;
  const int k = GetParam().k;
  std::vector<std::uint16_t> w_bits(static_cast<std::size_t>(n_out) * k);
  std::vector<double> w_values(w_bits.size());
  for (std::size_t i = 0; i < w_bits.size(); ++i) {
    w_bits[i] = aisp::float_to_bf16_bits(draw(i + 11));
    w_values[i] = bf16_value(w_bits[i]);
  }
  std::vector<float> x(static_cast<std::size_t>(batch) * k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 3.0f * draw(i + 500009);  // a residual stream, not unit-sized
  aisp::device_scratch w(w_bits.size() * 2);
  aisp::device_scratch x_d(x.size() * sizeof(float));
  aisp::device_scratch batched(static_cast<std::size_t>(batch) * n_out * sizeof(float));
  aisp::device_scratch alone(static_cast<std::size_t>(batch) * n_out * sizeof(float));
  AISP_CUDA_CHECK(cudaMemcpy(w.data(), w_bits.data(), w_bits.size() * 2, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(x_d.data(), x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  aisp::device_scratch packed(packed_bytes(n_out, k));
  const uint4* w_d = packed_weights(w, n_out, k, packed);
  const auto* x_rows = static_cast<const float*>(x_d.data());
  constexpr float eps = 1e-5f;
  aisp::decode::launch_normed_matvec(w_d, x_rows, static_cast<float*>(batched.data()), n_out, k, batch, eps, nullptr);
  for (int r = 0; r < batch; ++r) {
    aisp::decode::launch_normed_matvec(w_d, x_rows + static_cast<std::size_t>(r) * k,
                                       static_cast<float*>(alone.data()) + static_cast<std::size_t>(r) * n_out, n_out, k, 1, eps, nullptr);
  }
  AISP_CUDA_CHECK(cudaDeviceSynchronize());
  const auto together = to_host(batched, static_cast<std::size_t>(batch) * n_out);
  const auto single = to_host(alone, together.size());
  EXPECT_EQ(std::memcmp(together.data(), single.data(), together.size() * sizeof(float)), 0)
      << "k = " << k << ": a normed row alone differs from the same row in a batch of " << batch;
  for (const int rows : {2, few, chunk, 16}) {
    aisp::decode::launch_normed_matvec(w_d, x_rows, static_cast<float*>(batched.data()), n_out, k, rows, eps, nullptr);
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
    const auto some_rows = to_host(batched, static_cast<std::size_t>(rows) * n_out);
    EXPECT_EQ(std::memcmp(some_rows.data(), single.data(), some_rows.size() * sizeof(float)), 0)
        << "k = " << k << ": a normed row alone differs from the same row in a launch of " << rows;
  }
  for (const int r : {0, 1, few - 1, chunk - 1, batch - 1}) {  // a row of each tile
    double squares = 0.0;
    for (int i = 0; i < k; ++i) squares += static_cast<double>(x[static_cast<std::size_t>(r) * k + i]) * x[static_cast<std::size_t>(r) * k + i];
    const double norm_scale = 1.0 / std::sqrt(squares / k + eps);
    for (int n = 0; n < n_out; ++n) {
      const auto [sum, magnitude] = dot_in_fp64(w_values, x, n, r, k);
      // As the plain matvec's bound (x in two tf32 pieces, fp32 sums), with the row's scale an fp32
      // sum of squares and two rounded multiplies more.
      const double bound = 1e-5 * norm_scale * magnitude / std::sqrt(k) + 1e-6;
      EXPECT_NEAR(single[static_cast<std::size_t>(r) * n_out + n], norm_scale * sum / std::sqrt(k), bound)
          << "k = " << k << ", row " << r << ", feature " << n;
    }
  }
  double largest = 0.0;
  for (float v : single) largest = std::max(largest, static_cast<double>(std::fabs(v)));
  EXPECT_GT(largest, 0.05) << "outputs of a normalized row are O(1): a norm that zeroed its rows would pass the bitwise checks only with every row count broken alike";
}

// Note [folded swiglu]: one row with swiglu folded into the matvec gives the bits of the swiglu
// kernel followed by the matvec, which a batch runs; accumulating into y as the down projection does.
TEST_P(decode_matvec, a_folded_swiglu_gives_the_bits_of_the_swiglu_kernel_then_the_matvec) {
  AISP_REQUIRE_GPU();
  aisp::decode::prepare_matvec_launches();
  const int n_out = GetParam().n_out;
  const int k = GetParam().k;
  std::vector<std::uint16_t> w_bits(static_cast<std::size_t>(n_out) * k);
  for (std::size_t i = 0; i < w_bits.size(); ++i) w_bits[i] = aisp::float_to_bf16_bits(draw(i + 17));
  std::vector<float> gate_up(static_cast<std::size_t>(batch) * 2 * k);
  for (std::size_t i = 0; i < gate_up.size(); ++i) gate_up[i] = 4.0f * draw(i + 300007);  // gates on both sides of silu's bend
  std::vector<float> y_start(static_cast<std::size_t>(batch) * n_out);
  for (std::size_t i = 0; i < y_start.size(); ++i) y_start[i] = draw(i + 900001);
  aisp::device_scratch w(w_bits.size() * 2);
  aisp::device_scratch gu(gate_up.size() * sizeof(float));
  aisp::device_scratch act(static_cast<std::size_t>(batch) * k * sizeof(float));
  aisp::device_scratch batched(y_start.size() * sizeof(float));
  aisp::device_scratch alone(y_start.size() * sizeof(float));
  AISP_CUDA_CHECK(cudaMemcpy(w.data(), w_bits.data(), w_bits.size() * 2, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(gu.data(), gate_up.data(), gate_up.size() * sizeof(float), cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(batched.data(), y_start.data(), y_start.size() * sizeof(float), cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(alone.data(), y_start.data(), y_start.size() * sizeof(float), cudaMemcpyHostToDevice));
  aisp::device_scratch packed(packed_bytes(n_out, k));
  const uint4* w_d = packed_weights(w, n_out, k, packed);
  const auto* gu_rows = static_cast<const float*>(gu.data());
  aisp::decode::launch_swiglu_matvec(w_d, gu_rows, static_cast<float*>(act.data()), static_cast<float*>(batched.data()), n_out, k, batch,
                                     true, 1.0f, nullptr);
  for (int r = 0; r < batch; ++r) {
    aisp::decode::launch_swiglu_matvec(w_d, gu_rows + static_cast<std::size_t>(r) * 2 * k, static_cast<float*>(act.data()),
                                       static_cast<float*>(alone.data()) + static_cast<std::size_t>(r) * n_out, n_out, k, 1, true, 1.0f,
                                       nullptr);
  }
  AISP_CUDA_CHECK(cudaDeviceSynchronize());
  const auto together = to_host(batched, y_start.size());
  const auto single = to_host(alone, y_start.size());
  EXPECT_EQ(std::memcmp(together.data(), single.data(), together.size() * sizeof(float)), 0)
      << "k = " << k << ": the folded swiglu differs from the swiglu kernel and the matvec";
  for (const int rows : {few, chunk}) {  // through swiglu_rows_kernel and the matvec of one and of two 8-row tiles
    AISP_CUDA_CHECK(cudaMemcpy(batched.data(), y_start.data(), y_start.size() * sizeof(float), cudaMemcpyHostToDevice));
    aisp::decode::launch_swiglu_matvec(w_d, gu_rows, static_cast<float*>(act.data()), static_cast<float*>(batched.data()), n_out, k, rows,
                                       true, 1.0f, nullptr);
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
    const auto some_rows = to_host(batched, static_cast<std::size_t>(rows) * n_out);
    EXPECT_EQ(std::memcmp(some_rows.data(), single.data(), some_rows.size() * sizeof(float)), 0)
        << "k = " << k << ": " << rows << " rows differ from one row with swiglu folded";
  }
  double moved = 0.0;
  for (std::size_t i = 0; i < single.size(); ++i) moved = std::max(moved, static_cast<double>(std::fabs(single[i] - y_start[i])));
  EXPECT_GT(moved, 0.05) << "the matvec added nothing: a folded swiglu that zeroed x would pass the bitwise check only with the rows' path broken alike";
}

INSTANTIATE_TEST_SUITE_P(split_counts, decode_matvec,
                         ::testing::Values(matvec_case{37, 1000}, matvec_case{37, 2048}, matvec_case{37, 3000}, matvec_case{37, 8192},
                                           matvec_case{37, 9216}, matvec_case{37, 17408}, matvec_case{16384, 2048},
                                           matvec_case{4099, 3000}, matvec_case{2048, 8192}));

}  // namespace
