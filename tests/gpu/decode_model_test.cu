// labs/decode's GPU model against its fp64 reference (labs/decode/decoder_reference.hpp) at the
// small validation configuration: the logits after a prefill, greedy tokens for 33 steps, the
// same tokens after one weight is changed, and the cache-free recomputation equal to the cached
// decode bit for bit (Note [batch-invariant rows]).
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "../../labs/decode/decode_loops.cuh"
#include "../../labs/decode/decode_pair_parts.hpp"
#include "../../labs/decode/speculation.hpp"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "gpu_guard.hpp"

namespace {

using aisp::decode::decoder_config;

class decode_model : public ::testing::Test {
 protected:
  void SetUp() override {
    AISP_REQUIRE_GPU();
    weights_ = aisp::decode::seeded_weights(config_, 11);
    draw_prompts();
  }

  // The prompts' draws for batch x prompt positions; again after either changes.
  void draw_prompts() {
    draws_.clear();
    for (int i = 0; i < batch * prompt; ++i) draws_.push_back(static_cast<float>(std::fmod(0.137 * (i + 1) * (i + 3), 1.0)));
  }

  // Greedy tokens (batch, new_tokens) from the GPU: cached, or recomputing the prefix each token.
  std::vector<int> gpu_tokens(bool cached, std::vector<float>* first_logits = nullptr, std::vector<float>* last_logits = nullptr,
                              const aisp::decode::layer_plan& plan = {}) {
    std::vector<std::uint16_t> bits;
    for (double w : weights_) bits.push_back(aisp::float_to_bf16_bits(static_cast<float>(w)));
    aisp::device_scratch weights(bits.size() * 2);
    aisp::device_scratch draws(draws_.size() * sizeof(float));
    aisp::device_scratch tokens(static_cast<std::size_t>(batch * new_tokens) * sizeof(int));
    AISP_CUDA_CHECK(cudaMemcpy(weights.data(), bits.data(), bits.size() * 2, cudaMemcpyHostToDevice));
    AISP_CUDA_CHECK(cudaMemcpy(draws.data(), draws_.data(), draws_.size() * sizeof(float), cudaMemcpyHostToDevice));
    const aisp::decode::decode_job job{static_cast<const float*>(draws.data()), static_cast<int*>(tokens.data()), batch, prompt, new_tokens};
    const int max_len = prompt + new_tokens;
    const aisp::decode::gpu_decoder model(config_, batch * (max_len - 1), batch, max_len, paged_);
    if (paged_) {  // Note [paged cache]: the sequences' pages interleaved and in reverse order
      const int per_slot = (max_len + paged_->page_tokens - 1) / paged_->page_tokens;
      std::vector<int> table(static_cast<std::size_t>(batch * per_slot));
      for (int s = 0; s < batch; ++s) {
        for (int i = 0; i < per_slot; ++i) table[static_cast<std::size_t>(s * per_slot + i)] = paged_->pages - 1 - (i * batch + s);
      }
      AISP_CUDA_CHECK(cudaMemcpy(model.block_table(), table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
    }
    const auto* w = static_cast<const __nv_bfloat16*>(weights.data());
    model.pack(w, nullptr);
    aisp::decode::prefill(model, w, job, nullptr, plan);
    if (first_logits != nullptr) {
      first_logits->resize(static_cast<std::size_t>(batch * config_.vocab));
      AISP_CUDA_CHECK(cudaMemcpy(first_logits->data(), model.logits(), first_logits->size() * sizeof(float), cudaMemcpyDeviceToHost));
    }
    for (int i = 1; i < new_tokens; ++i) {
      if (cached) {
        aisp::decode::cached_step(model, w, job, nullptr, plan);
      } else {
        aisp::decode::recomputed_step(model, w, job, i, nullptr);
      }
    }
    if (last_logits != nullptr) {
      last_logits->resize(static_cast<std::size_t>(batch * config_.vocab));
      AISP_CUDA_CHECK(cudaMemcpy(last_logits->data(), model.logits(), last_logits->size() * sizeof(float), cudaMemcpyDeviceToHost));
    }
    std::vector<int> out(static_cast<std::size_t>(batch * new_tokens));
    AISP_CUDA_CHECK(cudaMemcpy(out.data(), tokens.data(), out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    return out;
  }

  std::vector<int> prompt_of(int b) const {
    std::vector<int> ids;
    for (int p = 0; p < prompt; ++p) ids.push_back(aisp::decode::token_of_draw(draws_[static_cast<std::size_t>(b * prompt + p)], config_.vocab));
    return ids;
  }

  std::vector<int> reference_tokens(int scaled_from = 0, double late_scale = 1.0) const {
    aisp::decode::decoder_reference model{config_, weights_};
    model.scale_late_layers(scaled_from, late_scale);
    std::vector<int> out;
    for (int b = 0; b < batch; ++b) {
      const auto tokens = model.greedy(prompt_of(b), new_tokens);
      out.insert(out.end(), tokens.begin(), tokens.end());
    }
    return out;
  }

  int batch = 2;
  int prompt = 7;
  int new_tokens = 33;
  std::optional<aisp::decode::paged_layout> paged_;
  decoder_config config_ = aisp::decode::small_model();
  std::vector<double> weights_;
  std::vector<float> draws_;
};

TEST_F(decode_model, prefill_logits_match_the_fp64_reference) {
  std::vector<float> logits;
  static_cast<void>(gpu_tokens(true, &logits));
  aisp::decode::decoder_reference reference{config_, weights_};
  for (int b = 0; b < batch; ++b) {
    std::vector<double> expected;
    reference.clear_cache();
    for (int token : prompt_of(b)) expected = reference.step(token);
    double largest = 0;
    double worst = 0;
    for (int t = 0; t < config_.vocab; ++t) {
      largest = std::max(largest, std::fabs(expected[static_cast<std::size_t>(t)]));
      worst = std::max(worst, std::fabs(logits[static_cast<std::size_t>(b * config_.vocab + t)] - expected[static_cast<std::size_t>(t)]));
    }
    EXPECT_LT(worst, 1e-4 * largest) << "sequence " << b << ": fp32 activations against double, the cache's bf16 in both";
  }
}

TEST_F(decode_model, greedy_tokens_match_the_reference_for_33_steps) {
  const auto gpu = gpu_tokens(true);
  EXPECT_EQ(gpu, reference_tokens());
}

// Note [controlled acceptance]: speculative decoding's target, its late layer scaled by 2^-3,
// decodes as the fp64 reference scaled alike; and its scale changes the tokens.
TEST_F(decode_model, a_target_with_scaled_late_layers_decodes_as_the_scaled_reference) {
  const int from = aisp::decode::draft_layers(config_.layers);
  const auto scaled = gpu_tokens(true, nullptr, nullptr, {-1, from, 0.125f});
  EXPECT_EQ(scaled, reference_tokens(from, 0.125));
  EXPECT_NE(scaled, gpu_tokens(true));
  EXPECT_EQ(gpu_tokens(true, nullptr, nullptr, {-1, from, 1.0f}), gpu_tokens(true)) << "a scale of 1 changes no bit";
}

TEST_F(decode_model, a_changed_weight_changes_both_alike) {
  const auto before = gpu_tokens(true);
  const aisp::decode::weight_layout at{config_};
  int changed = 0;
  for (std::int64_t index : {at.wo(1) + 166 * config_.q_width() + 45, at.down(0) + 17, at.qkv(1) + 300, at.head() + 5000}) {
    weights_[static_cast<std::size_t>(index)] = weights_[static_cast<std::size_t>(index)] >= 0 ? weights_[static_cast<std::size_t>(index)] - 0.75
                                                                                                : weights_[static_cast<std::size_t>(index)] + 0.75;
    const auto gpu = gpu_tokens(true);
    EXPECT_EQ(gpu, reference_tokens()) << "after changing weight " << index;
    changed += gpu != before;
  }
  RecordProperty("changed_token_sequences", changed);
}

// Note [attention latency]: sequences past a round of keys and past the values each thread loads
// ahead (300 prompt positions, then 24 steps), at head dims 32 and 128 (attention_head_lanes' two
// kernels): the logits after the prefill and after the last step within 1e-4 of the fp64
// reference fed the same tokens (greedy choices are not compared: over 300 positions two logits
// may nearly tie).
TEST_F(decode_model, long_sequences_match_the_fp64_reference_at_both_head_widths) {
  batch = 1;
  prompt = 300;
  new_tokens = 24;
  draw_prompts();
  for (const int head_dim : {32, 128}) {
    config_ = aisp::decode::small_model();
    config_.head_dim = head_dim;
    config_.heads = 256 / head_dim;
    config_.kv_heads = std::max(1, config_.heads / 4);
    weights_ = aisp::decode::seeded_weights(config_, 11);
    std::vector<float> first, last;
    const auto tokens = gpu_tokens(true, &first, &last);
    aisp::decode::decoder_reference reference{config_, weights_};
    std::vector<double> expected;
    for (int token : prompt_of(0)) expected = reference.step(token);
    const auto worst_error = [&](const std::vector<float>& got) {
      double largest = 0;
      double worst = 0;
      for (int t = 0; t < config_.vocab; ++t) {
        largest = std::max(largest, std::fabs(expected[static_cast<std::size_t>(t)]));
        worst = std::max(worst, std::fabs(got[static_cast<std::size_t>(t)] - expected[static_cast<std::size_t>(t)]));
      }
      return worst / largest;
    };
    EXPECT_LT(worst_error(first), 1e-4) << "head_dim " << head_dim << ", after the prefill of " << prompt;
    for (int i = 0; i + 1 < new_tokens; ++i) expected = reference.step(tokens[static_cast<std::size_t>(i)]);
    EXPECT_LT(worst_error(last), 1e-4) << "head_dim " << head_dim << ", after " << prompt + new_tokens - 1 << " positions";
  }
}

// Note [batch-invariant rows]: batch 1 and 2 take other matvec instantiations; sequence 0's
// logits must not change by a bit.
TEST_F(decode_model, a_sequence_decodes_alike_alone_and_in_a_batch_to_the_last_bit) {
  std::vector<float> pair_first, pair_last, alone_first, alone_last;
  const auto together = gpu_tokens(true, &pair_first, &pair_last);
  batch = 1;
  const auto alone = gpu_tokens(true, &alone_first, &alone_last);
  EXPECT_EQ(alone, std::vector<int>(together.begin(), together.begin() + new_tokens));
  const auto vocab = static_cast<std::ptrdiff_t>(config_.vocab);
  EXPECT_TRUE(std::equal(alone_first.begin(), alone_first.end(), pair_first.begin(), pair_first.begin() + vocab)) << "after the prefill";
  EXPECT_TRUE(std::equal(alone_last.begin(), alone_last.end(), pair_last.begin(), pair_last.begin() + vocab)) << "after the last step";
}

TEST_F(decode_model, recomputing_the_prefix_gives_the_cached_tokens_bit_for_bit) {
  EXPECT_EQ(gpu_tokens(false), gpu_tokens(true));
}

// Note [attention waves]: recomputing a prefix of 330 positions launches attention over 300+
// rows, more blocks than one wave of wide blocks holds, so it runs narrow blocks; the cached
// decode's one-row launches run wide ones. The logits agree to the last bit.
TEST_F(decode_model, narrow_attention_blocks_give_the_wide_ones_bits) {
  batch = 1;
  prompt = 300;
  new_tokens = 31;
  draw_prompts();
  int device = 0;
  int sms = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  ASSERT_GT(prompt * config_.heads, 2 * sms) << "the recomputed launches must not fit one wave of wide blocks";
  ASSERT_EQ(aisp::decode::attention_narrow_threads % config_.head_dim, 0) << "narrow blocks need head_dim to divide them";
  std::vector<float> cached_last, recomputed_last;
  const auto cached = gpu_tokens(true, nullptr, &cached_last);
  const auto recomputed = gpu_tokens(false, nullptr, &recomputed_last);
  EXPECT_EQ(recomputed, cached);
  EXPECT_EQ(recomputed_last, cached_last) << "after " << prompt + new_tokens - 1 << " positions";
}

// Note [paged cache]: K and V found through a block table (pages of 3 positions, so pages end
// mid-sequence and at no power of two) give the contiguous cache's logits to the last bit.
TEST_F(decode_model, a_paged_cache_decodes_as_the_contiguous_one_to_the_last_bit) {
  std::vector<float> slab_first, slab_last, paged_first, paged_last;
  const auto contiguous = gpu_tokens(true, &slab_first, &slab_last);
  paged_ = aisp::decode::paged_layout{2 * ((prompt + new_tokens + 2) / 3) + 5, 3};
  const auto paged = gpu_tokens(true, &paged_first, &paged_last);
  EXPECT_EQ(paged, contiguous);
  EXPECT_EQ(paged_first, slab_first) << "after the prefill";
  EXPECT_EQ(paged_last, slab_last) << "after the last step";
}

}  // namespace
