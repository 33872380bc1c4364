// Note [wide inputs] and Note [repeated values] (runner/candidate_accuracy.cpp): which inputs a
// challenge level reshapes, and how; judge and worker both go through widen_draws.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "aisp/buffer_spec.hpp"
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
  const auto wide = drawn(input_drawn(init_distribution::uniform_signed), input_values::wide);
  EXPECT_GT(*std::max_element(wide.begin(), wide.end()), 4.0);
}
