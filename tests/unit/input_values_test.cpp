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

TEST(scattered_values, repeats_copy_an_element_a_few_places_before_and_carry_no_mark) {
  const auto spec = input_drawn(aisp::init_distribution::uniform_signed);
  const auto d = scattered_with(spec, {aisp::input_values::repeated}, 5);
  const auto at = changed_positions(d);
  ASSERT_FALSE(at.empty());
  for (const auto i : at) {
    bool copied = false;
    for (std::size_t back = 1; back <= 16 && back <= i; ++back) copied = copied || d.scattered[i] == d.scattered[i - back];
    EXPECT_TRUE(copied) << i << " repeats one of the 16 elements before it";
    EXPECT_NE(std::fmod(std::fabs(d.scattered[i]) * 16.0, 1.0), 0.0) << "not on the dense level's grid";
  }
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
}
