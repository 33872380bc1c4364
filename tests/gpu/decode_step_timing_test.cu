// labs/decode's whole forward step of the 1B model at 8, 12 and 16 rows, back to back as a
// serving loop runs them: the cost a continuous-batching launch of prompt chunks adds over an
// 8-row decode step, which decides its TPOT p99 against static batching's (issue 21). The
// serving pair's trace (scripts/trace_step_breakdown.py) put ~113 of the 16-row step's ~123
// extra us in its matvecs and measured each variant only through an 80-second pair run; this
// test times the step itself in seconds, so that an A/B of the 9-16-row paths (AISP_DECODE_PAIRS,
// scripts/device_decode_pairs_ab.sh) reads the step's cost directly.
// Every row decodes one position of its own sequence, after a cache of `cached_` positions filled
// by the model itself (128, then 16: the attention's part of a wider step's cost shows as the
// difference, since the matvecs do not read the cache); the first 8 rows of the 12- and 16-row
// steps must give the 8-row step's logits to the last bit (Note [batch-invariant rows]).
// Run: aisp_gpu_tests --gtest_filter='*decode_step.*'
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../labs/decode/gpu_decoder.cuh"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "decode_timing_support.cuh"
#include "gpu_guard.hpp"

namespace {

using aisp::device_scratch;

class decode_step : public ::testing::TestWithParam<int> {
 protected:
  static constexpr int most_rows = 16;
  static constexpr int picks = 8;     // rows whose token a step picks: a serving step's decodes

  void SetUp() override {
    AISP_REQUIRE_GPU();
    cached_ = GetParam();
    const auto params = config_.parameters();
    weights_ = std::make_unique<device_scratch>(static_cast<std::size_t>(params) * sizeof(__nv_bfloat16));
    aisp::decode_timing::fill_bf16<<<2048, 256>>>(static_cast<__nv_bfloat16*>(weights_->data()), params, 21u);
    AISP_CHECK_LAUNCH();
    model_ = std::make_unique<aisp::decode::gpu_decoder>(config_, most_rows, most_rows, cached_ + 8);
    model_->pack(weights(), nullptr);
    for (int p = 0; p < cached_; ++p) {  // the sequences' caches, position by position, by the model
      set_rows(most_rows, p);
      model_->forward(weights(), model_->rows().meta(), most_rows, nullptr, 0, nullptr);
    }
    set_rows(most_rows, cached_);
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  [[nodiscard]] const __nv_bfloat16* weights() const { return static_cast<const __nv_bfloat16*>(weights_->data()); }

  // Row i: sequence (slot) i at `position`, a token drawn from (i, position).
  void set_rows(int rows, int position) {
    std::vector<int> token(static_cast<std::size_t>(rows)), slot(token.size()), at(token.size(), position);
    for (int i = 0; i < rows; ++i) {
      slot[static_cast<std::size_t>(i)] = i;
      token[static_cast<std::size_t>(i)] = static_cast<int>((static_cast<unsigned>(i) * 7919u + static_cast<unsigned>(position) * 104729u) % config_.vocab);
    }
    const auto& buffers = model_->rows();
    AISP_CUDA_CHECK(cudaMemcpy(buffers.token, token.data(), token.size() * sizeof(int), cudaMemcpyHostToDevice));
    AISP_CUDA_CHECK(cudaMemcpy(buffers.slot, slot.data(), slot.size() * sizeof(int), cudaMemcpyHostToDevice));
    AISP_CUDA_CHECK(cudaMemcpy(buffers.position, at.data(), at.size() * sizeof(int), cudaMemcpyHostToDevice));
  }

  void step(int rows) const { model_->forward(weights(), model_->rows().meta(), rows, nullptr, picks, nullptr); }

  // The picked rows' logits after one step of `rows` rows.
  std::vector<float> logits_of(int rows) const {
    step(rows);
    AISP_CHECK_LAUNCH();
    std::vector<float> out(static_cast<std::size_t>(picks) * config_.vocab);
    AISP_CUDA_CHECK(cudaMemcpy(out.data(), model_->logits(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }

  // Microseconds a step: the median of five runs of 30 steps back to back, after three.
  [[nodiscard]] double us_a_step(int rows) const {
    for (int i = 0; i < 3; ++i) step(rows);
    return aisp::decode_timing::median_us_a_call(30, [&](std::size_t) { step(rows); });
  }

  int cached_ = 0;  // positions each sequence holds before the timed steps
  aisp::decode::decoder_config config_ = aisp::decode::one_billion();
  std::unique_ptr<device_scratch> weights_;
  std::unique_ptr<aisp::decode::gpu_decoder> model_;
};

TEST_P(decode_step, wider_steps_give_the_8_row_steps_rows_and_their_times_are_printed) {
  // Only these three steps fall in the profiler's range, so that Nsight Compute started with
  // --profile-from-start off (scripts/device_decode_step_profile.sh) sees one step of each width,
  // not the 128 that fill the caches; outside a profiler the range is a no-op.
  AISP_CUDA_CHECK(cudaProfilerStart());
  const auto eight = logits_of(8);
  EXPECT_TRUE(std::all_of(eight.begin(), eight.end(), [](float v) { return std::isfinite(v); }));
  EXPECT_GT(*std::max_element(eight.begin(), eight.end()), *std::min_element(eight.begin(), eight.end())) << "constant logits";
  for (const int rows : {12, 16}) {
    const auto wider = logits_of(rows);
    EXPECT_EQ(std::memcmp(eight.data(), wider.data(), eight.size() * sizeof(float)), 0)
        << "the " << rows << "-row step's first 8 rows differ from the 8-row step's";
  }
  AISP_CUDA_CHECK(cudaProfilerStop());
  // 8 rows before and after the others, so a drifting clock shows as two different 8-row times.
  const double eight_before = us_a_step(8);
  const double twelve = us_a_step(12);
  const double sixteen = us_a_step(16);
  const double eight_after = us_a_step(8);
  for (const double us : {eight_before, twelve, sixteen, eight_after}) EXPECT_GT(us, 0.0);
  const double eight_us = (eight_before + eight_after) / 2;
  const std::string paths = aisp::decode_timing::rows_paths_taken();
  std::printf("decode_step  8 rows %8.1f us a step, cache %d (%.1f before, %.1f after the others)\n", eight_us, cached_, eight_before, eight_after);
  std::printf("decode_step 12 rows %8.1f us a step, cache %d, %.3fx the 8-row step (%s)\n", twelve, cached_, twelve / eight_us, paths.c_str());
  std::printf("decode_step 16 rows %8.1f us a step, cache %d, %.3fx the 8-row step (%s)\n", sixteen, cached_, sixteen / eight_us, paths.c_str());
}

INSTANTIATE_TEST_SUITE_P(caches, decode_step, ::testing::Values(128, 16));

}  // namespace
