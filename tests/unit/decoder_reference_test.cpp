// labs/decode's fp64 model (labs/decode/decoder_reference.hpp), the truth its GPU decoder will be
// checked against: the weights' layout, and each layer's math on cases with a known answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <set>
#include <vector>

#include "../../labs/decode/decode_pair_parts.hpp"
#include "../../labs/decode/decoder_reference.hpp"
#include "../../labs/decode/speculation.hpp"

namespace {

using aisp::decode::decoder_config;
using aisp::decode::decoder_reference;

double dot(const double* a, const double* b, int n) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

TEST(decoder_weights, lie_end_to_end_in_the_layout_with_nothing_left_over) {
  const decoder_config c;
  const aisp::decode::weight_layout at{c};
  EXPECT_EQ(at.qkv(0), static_cast<std::int64_t>(c.vocab) * c.d_model);
  EXPECT_EQ(at.qkv(1) - at.qkv(0), c.per_layer());
  EXPECT_EQ(at.down(0) + static_cast<std::int64_t>(c.d_model) * c.ffn, at.qkv(1)) << "down is a layer's last matrix";
  EXPECT_EQ(at.head() + static_cast<std::int64_t>(c.vocab) * c.d_model, c.parameters()) << "the head is the last";
  const auto w = aisp::decode::seeded_weights(c, 3);
  EXPECT_EQ(static_cast<std::int64_t>(w.size()), c.parameters());
  for (double v : w) EXPECT_EQ(static_cast<double>(aisp::decode::round_to_bf16(static_cast<float>(v))), v) << "not a bf16 value";
}

TEST(decoder_prompts, map_uniform_draws_to_every_id_and_clamp_the_rest) {
  EXPECT_EQ(aisp::decode::token_of_draw(0.0, 97), 0);
  EXPECT_EQ(aisp::decode::token_of_draw(0.5, 97), 48);
  EXPECT_EQ(aisp::decode::token_of_draw(0.9999999, 97), 96);
  EXPECT_EQ(aisp::decode::token_of_draw(1.5, 97), 96);
  EXPECT_EQ(aisp::decode::token_of_draw(-2.0, 97), 0);
  EXPECT_EQ(aisp::decode::token_of_draw(std::nan(""), 97), 0);
}

TEST(decoder_config, the_benchmark_model_has_about_a_billion_weights) {
  const auto c = aisp::decode::one_billion();
  EXPECT_NEAR(static_cast<double>(c.parameters()), 1.104e9, 0.01e9);
  EXPECT_EQ(c.heads % c.kv_heads, 0);
}

TEST(decoder_layers, rms_norm_gives_unit_root_mean_square) {
  const auto out = aisp::decode::rms_norm({3.0, -4.0, 12.0, 0.5}, 0.0);
  EXPECT_NEAR(dot(out.data(), out.data(), 4) / 4.0, 1.0, 1e-15);
  EXPECT_NEAR(out[1] / out[0], -4.0 / 3.0, 1e-15) << "a scale, not a shift";
}

TEST(decoder_layers, rope_keeps_norms_and_makes_scores_depend_on_the_distance_only) {
  const int dim = 8;
  const std::vector<double> q0{0.3, -1.2, 0.7, 2.0, -0.4, 0.9, 1.1, -0.6};
  const std::vector<double> k0{-0.8, 0.5, 1.4, -0.2, 0.6, -1.0, 0.3, 0.75};
  auto rotated = [&](std::vector<double> v, int position) {
    aisp::decode::apply_rope(v.data(), dim, position, 10000.0);
    return v;
  };
  EXPECT_EQ(rotated(q0, 0), q0) << "position 0 is the identity";
  EXPECT_NEAR(dot(rotated(q0, 37).data(), rotated(q0, 37).data(), dim), dot(q0.data(), q0.data(), dim), 1e-12);
  const double near = dot(rotated(q0, 9).data(), rotated(k0, 4).data(), dim);
  EXPECT_NEAR(dot(rotated(q0, 1009).data(), rotated(k0, 1004).data(), dim), near, 1e-10) << "same distance, same score";
  EXPECT_GT(std::fabs(dot(rotated(q0, 9).data(), rotated(k0, 2).data(), dim) - near), 1e-3) << "another distance, another score";
}

TEST(decoder_layers, grouped_attention_over_one_key_returns_each_group_its_value) {
  decoder_config c;
  c.heads = 4;
  c.kv_heads = 2;
  c.head_dim = 2;
  const std::vector<double> q{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> keys{0.5, -1, 2, 0.25};
  const std::vector<double> values{10, 11, 20, 21};  // KV head 0, then KV head 1
  EXPECT_EQ(aisp::decode::grouped_attention(c, q, keys, values), (std::vector<double>{10, 11, 10, 11, 20, 21, 20, 21}));
}

TEST(decoder_layers, grouped_attention_equals_multi_head_attention_on_repeated_kv_heads) {
  decoder_config grouped;
  grouped.heads = 4;
  grouped.kv_heads = 2;
  grouped.head_dim = 3;
  decoder_config repeated = grouped;
  repeated.kv_heads = 4;
  std::vector<double> q(12);
  std::vector<double> keys(5 * 6);
  std::vector<double> values(5 * 6);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(1.0 + static_cast<double>(i));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    keys[i] = std::cos(0.3 * static_cast<double>(i));
    values[i] = std::sin(0.7 * static_cast<double>(i));
  }
  std::vector<double> wide_keys;
  std::vector<double> wide_values;
  for (int j = 0; j < 5; ++j) {
    for (int head = 0; head < 4; ++head) {  // KV head h / 2 of `grouped` for query head h
      for (int i = 0; i < 3; ++i) {
        wide_keys.push_back(keys[static_cast<std::size_t>(j * 6 + head / 2 * 3 + i)]);
        wide_values.push_back(values[static_cast<std::size_t>(j * 6 + head / 2 * 3 + i)]);
      }
    }
  }
  const auto a = aisp::decode::grouped_attention(grouped, q, keys, values);
  const auto b = aisp::decode::grouped_attention(repeated, q, wide_keys, wide_values);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-15);
}

TEST(decoder_reference, decoding_with_the_cache_equals_recomputing_the_prefix) {
  const decoder_config c;
  decoder_reference model{c, aisp::decode::seeded_weights(c, 1)};
  const std::vector<int> tokens{5, 17, 3, 88, 42, 42, 0, 96};
  std::vector<double> cached;
  for (int t : tokens) cached = model.step(t);
  EXPECT_EQ(model.cached_tokens(), 8);
  model.clear_cache();
  std::vector<double> again;
  for (int t : tokens) again = model.step(t);
  EXPECT_EQ(cached, again);
  for (double logit : cached) EXPECT_TRUE(std::isfinite(logit));
}

TEST(decoder_reference, greedy_decoding_is_fixed_by_the_weights_and_not_a_constant) {
  const std::vector<int> prompt{1, 2, 3, 4};
  const decoder_config c;
  decoder_reference model{c, aisp::decode::seeded_weights(c, 1)};
  const auto tokens = model.greedy(prompt, 32);
  ASSERT_EQ(tokens.size(), 32u);
  EXPECT_EQ(model.greedy(prompt, 32), tokens);
  EXPECT_GE(std::set<int>(tokens.begin(), tokens.end()).size(), 5u) << "a random model that repeats one token tests nothing";
  EXPECT_NE((decoder_reference{c, aisp::decode::seeded_weights(c, 7)}.greedy(prompt, 32)), tokens);
  EXPECT_THROW((decoder_reference{c, std::vector<double>(5)}), std::invalid_argument) << "weights of another model";
}

TEST(speculation, accepts_the_drafts_up_to_the_first_the_target_disagrees_with) {
  using aisp::decode::accepted_drafts;
  // proposal: the last token, then the drafts; verified: the target's token after each.
  EXPECT_EQ(accepted_drafts(std::vector<int>{7, 1, 2, 3}, std::vector<int>{1, 2, 3, 9}), 3) << "all, and the target's next";
  EXPECT_EQ(accepted_drafts(std::vector<int>{7, 1, 2, 3}, std::vector<int>{1, 5, 3, 9}), 1) << "a later match counts for nothing";
  EXPECT_EQ(accepted_drafts(std::vector<int>{7, 1, 2, 3}, std::vector<int>{4, 2, 3, 9}), 0);
  EXPECT_EQ(accepted_drafts(std::vector<int>{7}, std::vector<int>{4}), 0) << "no drafts: the target's token alone";
  EXPECT_THROW(static_cast<void>(accepted_drafts(std::vector<int>{7, 1}, std::vector<int>{1})), std::exception);
  EXPECT_EQ(aisp::decode::draft_layers(16), 4);
  EXPECT_EQ(aisp::decode::draft_layers(2), 1);
  EXPECT_EQ(aisp::decode::late_scale_of(3), 0.125);
}

// Note [controlled acceptance]: along the target's own greedy tokens, how often the draft (the
// target with its late layers silenced) picks the token the target picks.
double draft_agreement(int shift) {
  const auto c = aisp::decode::small_model();
  const auto weights = aisp::decode::seeded_weights(c, 5);
  decoder_reference target{c, weights};
  decoder_reference draft{c, weights};
  const int from = aisp::decode::draft_layers(c.layers);
  target.scale_late_layers(from, aisp::decode::late_scale_of(shift));
  draft.scale_late_layers(from, 0.0);
  const auto argmax = [](const std::vector<double>& logits) {
    return static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  };
  int token = 3, agreed = 0;
  constexpr int steps = 48;
  for (int i = 0; i < steps; ++i) {
    const int next = argmax(target.step(token));
    agreed += argmax(draft.step(token)) == next ? 1 : 0;
    token = next;
  }
  return static_cast<double>(agreed) / steps;
}

TEST(speculation, a_smaller_late_scale_makes_the_draft_agree_more_often) {
  const double plain = draft_agreement(0), middling = draft_agreement(3), close = draft_agreement(6);
  // The small model (2 layers, a 1-layer draft), 2026-11-28: 0.65, 0.96 and 1.00.
  EXPECT_LT(plain, middling);
  EXPECT_LE(middling, close);
  EXPECT_LT(plain, 0.8) << "the plain model's later layer changes many tokens";
  EXPECT_GT(close, 0.9);
}

}  // namespace
