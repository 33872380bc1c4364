#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "support/shell_quote.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"

namespace {

using aisp::dtype;
using aisp::init_distribution;

std::vector<double> draw(std::uint64_t seed, init_distribution init, std::size_t count, dtype type = dtype::f64) {
  std::vector<unsigned char> bytes(count * aisp::dtype_size(type));
  aisp::fill_seeded(type, init, aisp::buffer_stream_id(seed, "x"), bytes.data(), count);
  std::vector<double> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = aisp::load_as_double(type, bytes.data(), i);
  return values;
}

TEST(fill_seeded, the_same_seed_and_name_give_the_same_values_and_another_seed_does_not) {
  EXPECT_EQ(draw(7, init_distribution::uniform_signed, 1000), draw(7, init_distribution::uniform_signed, 1000));
  EXPECT_NE(draw(7, init_distribution::uniform_signed, 1000), draw(8, init_distribution::uniform_signed, 1000));
  EXPECT_NE(aisp::buffer_stream_id(7, "x"), aisp::buffer_stream_id(7, "y"));
}

TEST(fill_seeded, element_i_does_not_depend_on_the_buffer_length) {
  const auto short_draw = draw(3, init_distribution::uniform_signed, 10);
  const auto long_draw = draw(3, init_distribution::uniform_signed, 1000);
  EXPECT_TRUE(std::equal(short_draw.begin(), short_draw.end(), long_draw.begin()));
}

TEST(fill_seeded, uniform_signed_covers_minus_one_to_one_with_mean_near_zero_and_no_constants) {
  const auto values = draw(11, init_distribution::uniform_signed, 100000);
  const auto [lowest, highest] = std::minmax_element(values.begin(), values.end());
  EXPECT_GE(*lowest, -1.0);
  EXPECT_LT(*highest, 1.0);
  EXPECT_LT(*lowest, -0.99);
  EXPECT_GT(*highest, 0.99);
  double mean = 0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  EXPECT_NEAR(mean, 0.0, 0.01);  // sd of the mean: 0.577 / sqrt(1e5) = 0.0018
  EXPECT_GT(std::set<double>(values.begin(), values.end()).size(), 99000u);
}

TEST(fill_seeded, small_integers_are_exact_integers_in_minus_8_to_8) {
  for (double v : draw(5, init_distribution::small_integers, 10000, dtype::bf16)) {
    EXPECT_EQ(v, std::floor(v));
    EXPECT_GE(v, -8.0);
    EXPECT_LE(v, 8.0);
  }
}

TEST(fill_seeded, index_permutation_holds_each_index_once) {
  auto values = draw(9, init_distribution::index_permutation, 1000, dtype::i32);
  std::sort(values.begin(), values.end());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], static_cast<double>(i));
}

}  // namespace

TEST(dtype_smallest_normal, is_the_first_normal_value_of_each_float_encoding_and_zero_for_integers) {
  EXPECT_EQ(aisp::dtype_smallest_normal(dtype::f64), std::numeric_limits<double>::min());
  EXPECT_EQ(aisp::dtype_smallest_normal(dtype::f32), std::numeric_limits<float>::min());
  EXPECT_EQ(aisp::dtype_smallest_normal(dtype::f16), aisp::half_bits_to_float(0x0400));  // exponent field 1
  EXPECT_EQ(aisp::dtype_smallest_normal(dtype::bf16), aisp::bf16_bits_to_float(0x0080));
  for (const dtype integer : {dtype::i32, dtype::i64, dtype::u8}) EXPECT_EQ(aisp::dtype_smallest_normal(integer), 0);
}

TEST(shell_quote, a_word_survives_the_shell_whatever_quotes_it_holds) {
  EXPECT_EQ(aisp::shell_quoted("it's"), "'it'\\''s'");
  EXPECT_EQ(aisp::shell_quoted(""), "''");
  EXPECT_EQ(aisp::shell_word("labs/host:matrix_sum"), "labs/host:matrix_sum");  // plain: as it is
  EXPECT_EQ(aisp::shell_word("a b"), "'a b'");
  EXPECT_EQ(aisp::shell_word(""), "''");
}
