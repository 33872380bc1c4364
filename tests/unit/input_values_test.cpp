// Note [wide inputs] and Note [repeated values] (runner/candidate_accuracy.cpp): which inputs a
// challenge level reshapes, and how; judge and worker both go through widen_draws.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "support/scattered_values.hpp"
#include "support/seeded_fill.hpp"

namespace {

// Name left empty: the streams' seeds do not need one here.
aisp::buffer_spec input_drawn(aisp::init_distribution init, aisp::dtype type = aisp::dtype::f64) {
  aisp::buffer_spec spec;
  spec.role = aisp::buffer_role::input;
  spec.type = type;
  spec.init = init;
  return spec;
}

std::vector<double> drawn(const aisp::buffer_spec& spec, aisp::input_values values, std::size_t count = 4096) {
  std::vector<double> x(count);
  aisp::fill_seeded(spec.type, spec.init, 3, x.data(), count);
  aisp::widen_draws(spec, values, x.data(), count);
  return x;
}

}  // namespace

TEST(input_values, repeated_moves_uniform_draws_to_the_middles_of_eighths) {
  const auto signed_spec = input_drawn(aisp::init_distribution::uniform_signed);
  const auto values = drawn(signed_spec, aisp::input_values::repeated);
  const std::set<double> distinct(values.begin(), values.end());
  EXPECT_EQ(distinct.size(), 16U) << "4096 draws take every one of the 16 middles";
  for (const double v : distinct) {
    EXPECT_GT(v, -1.0);
    EXPECT_LT(v, 1.0);
    EXPECT_DOUBLE_EQ(std::fmod(v * 16.0 + 16.0, 2.0), 1.0) << v << " is the middle of an eighth";
  }
  const auto unit = drawn(input_drawn(aisp::init_distribution::uniform_unit), aisp::input_values::repeated);
  EXPECT_EQ(std::set<double>(unit.begin(), unit.end()).size(), 8U);
  EXPECT_GT(*std::min_element(unit.begin(), unit.end()), 0.0) << "no zero: a log of the inputs stays finite";
}

TEST(input_values, each_level_reshapes_only_the_draws_it_is_for) {
  using aisp::init_distribution;
  using aisp::input_values;
  EXPECT_TRUE(aisp::widens(input_drawn(init_distribution::uniform_unit), input_values::repeated));
  EXPECT_FALSE(aisp::widens(input_drawn(init_distribution::uniform_unit), input_values::wide)) << "unit draws keep their range";
  EXPECT_FALSE(aisp::widens(input_drawn(init_distribution::small_integers), input_values::repeated)) << "integers repeat already";
  EXPECT_FALSE(aisp::widens(input_drawn(init_distribution::uniform_signed, aisp::dtype::i32), input_values::repeated));
  auto derived = input_drawn(init_distribution::uniform_signed);
  derived.derived_from.assign(1, 'w');
  EXPECT_FALSE(aisp::widens(derived, input_values::repeated)) << "a derived input follows its source";
  EXPECT_EQ(aisp::input_values_named("repeated"), input_values::repeated);
  EXPECT_EQ(aisp::input_values_named("widest"), input_values::widest);
  EXPECT_EQ(aisp::wide_input_scale(input_values::widest), 1024.0) << "past fp64's exp overflow at 709";
  EXPECT_TRUE(aisp::widens(input_drawn(init_distribution::uniform_signed), input_values::widest));
  const auto wide = drawn(input_drawn(init_distribution::uniform_signed), input_values::wide);
  EXPECT_GT(*std::max_element(wide.begin(), wide.end()), 4.0);
}

// Note [offset inputs] (support/seeded_fill.cpp): the draws moved far from 0 by a power of two
// the type keeps exactly, by the type's precision; a one-pass variance loses the spread there.
TEST(input_values, offset_moves_signed_draws_by_a_power_of_two_for_their_type) {
  using aisp::dtype;
  using aisp::init_distribution;
  using aisp::input_values;
  EXPECT_EQ(aisp::offset_input_shift(input_values::offset, dtype::f32), 64.0);
  EXPECT_EQ(aisp::offset_input_shift(input_values::offset, dtype::f64), 1048576.0);
  EXPECT_FALSE(aisp::widens(input_drawn(init_distribution::uniform_signed, dtype::bf16), input_values::offset))
      << "bf16 computed in fp32 cancels nothing";
  EXPECT_EQ(aisp::offset_input_shift(input_values::wide, dtype::f32), 0.0) << "only the offset level shifts";
  EXPECT_TRUE(aisp::widens(input_drawn(init_distribution::uniform_signed, dtype::f32), input_values::offset));
  EXPECT_FALSE(aisp::widens(input_drawn(init_distribution::uniform_unit), input_values::offset)) << "unit draws keep their range";
  EXPECT_EQ(aisp::input_values_named("offset"), input_values::offset);
  const auto spec = input_drawn(init_distribution::uniform_signed, dtype::f32);
  std::vector<float> x(4096);
  aisp::fill_seeded(spec.type, spec.init, 3, x.data(), x.size());
  const std::vector<float> centred = x;
  aisp::widen_draws(spec, input_values::offset, x.data(), x.size());
  double sum = 0;
  double centred_squares = 0;
  float one_pass_sum = 0.0f;
  float one_pass_squares = 0.0f;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i], centred[i] + 64.0f) << "exact: " << centred[i];
    sum += x[i];
    one_pass_sum += x[i];
    one_pass_squares += x[i] * x[i];
  }
  const double mean = sum / static_cast<double>(x.size());
  for (const float v : x) centred_squares += (v - mean) * (v - mean);
  const double variance = centred_squares / static_cast<double>(x.size());
  const float one_pass_mean = one_pass_sum / static_cast<float>(x.size());
  const double one_pass = one_pass_squares / static_cast<float>(x.size()) - one_pass_mean * one_pass_mean;
  EXPECT_NEAR(variance, 1.0 / 3.0, 0.02);
  EXPECT_GT(std::fabs(one_pass - variance) / variance, 1e-4) << "the level exists to expose this (fp32's bound: 1e-5): " << one_pass << " vs " << variance;
}

// Note [scattered challenge values] (runner/benchmark_challenges.cpp): the declared draws, but for
// a secret few elements a level each, at positions that change with the seed.
namespace {

struct scattered_draws {
  std::vector<double> declared;
  std::vector<double> scattered;
  std::size_t changed = 0;
};

scattered_draws scattered_with(const aisp::buffer_spec& spec, const std::vector<aisp::input_values>& levels, std::uint64_t seed,
                               std::size_t count = 1 << 16) {
  scattered_draws d;
  d.declared.resize(count);
  aisp::fill_seeded(spec.type, spec.init, seed, d.declared.data(), count);
  d.scattered = d.declared;
  d.changed = aisp::scatter_levels(spec, levels, seed, d.scattered.data(), count);
  return d;
}

std::vector<std::size_t> changed_positions(const scattered_draws& d) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < d.declared.size(); ++i)
    if (d.scattered[i] != d.declared[i]) at.push_back(i);
  return at;
}

}  // namespace

TEST(scattered_values, a_few_elements_a_level_change_at_secret_positions) {
  using aisp::input_values;
  const auto spec = input_drawn(aisp::init_distribution::uniform_signed);
  const auto first = scattered_with(spec, {input_values::wide, input_values::wider}, 11);
  const auto at = changed_positions(first);
  EXPECT_GE(at.size(), aisp::scattered_per_level) << "both levels land";
  EXPECT_LE(at.size(), 2 * aisp::scattered_per_level) << "and nothing else changes";
  bool past_eight = false;
  for (const auto i : at) {
    const double ratio = first.scattered[i] / first.declared[i];
    EXPECT_TRUE(ratio == 8.0 || ratio == 128.0) << i << ": " << ratio << ", never two levels on one element";
    past_eight = past_eight || std::fabs(first.scattered[i]) > 8.0;
  }
  EXPECT_TRUE(past_eight) << "the x128 level's elements leave the x8 range";
  EXPECT_LT(at.front() * 4, first.declared.size()) << "the positions spread over the buffer, not one end";
  EXPECT_GT(at.back() * 4, 3 * first.declared.size());
  EXPECT_NE(changed_positions(scattered_with(spec, {input_values::wide, input_values::wider}, 12)), at) << "another seed, other places";
}

TEST(scattered_values, repeats_copy_an_element_near_or_far_before_and_carry_no_mark) {
  const auto spec = input_drawn(aisp::init_distribution::uniform_signed);
  std::size_t near = 0;
  std::size_t far = 0;
  for (const std::uint64_t seed : {5u, 6u, 7u}) {
    const auto d = scattered_with(spec, {aisp::input_values::repeated}, seed);
    const auto at = changed_positions(d);
    ASSERT_FALSE(at.empty());
    for (const auto i : at) {
      std::size_t back = 1;
      while (back <= i && d.scattered[i] != d.scattered[i - back]) ++back;
      EXPECT_LE(back, i) << i << " repeats an element before it";
      (back <= 16 ? near : far) += 1;
      EXPECT_NE(std::fmod(std::fabs(d.scattered[i]) * 16.0, 1.0), 0.0) << "not on the dense level's grid";
    }
  }
  EXPECT_GT(near, 8U) << "half a few places before";
  EXPECT_GT(far, 8U) << "and half farther than a look at the 16 before finds (red team seventeen's lead)";
}

TEST(scattered_values, non_integers_go_only_into_small_integer_draws) {
  using aisp::init_distribution;
  using aisp::input_values;
  const auto integers = scattered_with(input_drawn(init_distribution::small_integers), {input_values::non_integers}, 7);
  const auto at = changed_positions(integers);
  ASSERT_FALSE(at.empty());
  for (const auto i : at) EXPECT_EQ(integers.scattered[i], integers.declared[i] + 0.5);
  EXPECT_EQ(scattered_with(input_drawn(init_distribution::uniform_signed), {input_values::non_integers}, 7).changed, 0U);
  EXPECT_EQ(scattered_with(input_drawn(init_distribution::uniform_unit), {input_values::wide}, 7).changed, 0U) << "unit draws keep their range";
  auto derived = input_drawn(init_distribution::uniform_signed);
  derived.derived_from = "w";
  EXPECT_EQ(scattered_with(derived, {input_values::wide, input_values::repeated}, 7).changed, 0U) << "a derived input follows its source";
  EXPECT_EQ(scattered_with(input_drawn(aisp::init_distribution::uniform_signed), {input_values::offset}, 7).changed, 0U)
      << "a few shifted elements cancel nothing: Note [offset inputs]";
}
