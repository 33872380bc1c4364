#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "support/spread_positions.hpp"

namespace {

using aisp::spread_positions;

TEST(spread_positions, are_distinct_in_range_and_as_many_as_asked) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const auto positions = spread_positions(seed, {7, 4096}, 8);
    ASSERT_EQ(positions.size(), 8u);
    EXPECT_EQ(std::set<std::size_t>(positions.begin(), positions.end()).size(), 8u);
    for (const std::size_t p : positions) EXPECT_LT(p, 7u * 4096u);
  }
}

// The fault of Note [spread positions]: a kernel that reads half of each row. Every seed puts
// as many positions in each half of the row as in the other, and some in each half of the rows.
TEST(spread_positions, hit_every_half_of_every_axis_for_every_seed) {
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    int second_half_of_row = 0;
    int lower_rows = 0;
    for (const std::size_t p : spread_positions(seed, {7, 4096}, 8)) {
      second_half_of_row += p % 4096 >= 2048 ? 1 : 0;
      lower_rows += p / 4096 >= 4 ? 1 : 0;
    }
    EXPECT_EQ(second_half_of_row, 4) << "seed " << seed;
    EXPECT_GT(lower_rows, 0) << "seed " << seed;
    EXPECT_LT(lower_rows, 8) << "seed " << seed;
  }
}

// A kernel that assumes 2:4 sparsity reads two of every four elements of a row: each residue
// mod 4 of the row's axis holds two of the eight positions, for every seed.
TEST(spread_positions, balance_the_residues_mod_four_along_every_axis) {
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    std::vector<int> column_residues(4, 0);
    std::vector<int> row_residues(4, 0);
    for (const std::size_t p : spread_positions(seed, {64, 4096}, 8)) {
      ++column_residues[p % 4096 % 4];
      ++row_residues[p / 4096 % 4];
    }
    EXPECT_EQ(column_residues, (std::vector<int>{2, 2, 2, 2})) << "seed " << seed;
    EXPECT_EQ(row_residues, (std::vector<int>{2, 2, 2, 2})) << "seed " << seed;
  }
}

TEST(spread_positions, take_every_element_of_a_buffer_no_larger_than_the_count) {
  EXPECT_EQ(spread_positions(3, {2, 3}, 8), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(spread_positions(3, {0, 5}, 8).empty());
}

TEST(spread_positions, stay_distinct_when_an_axis_is_shorter_than_the_count) {
  const auto positions = spread_positions(11, {3, 65}, 8);
  EXPECT_EQ(positions.size(), 8u);
  EXPECT_EQ(std::set<std::size_t>(positions.begin(), positions.end()).size(), positions.size());
}

// A timed call's 4,096 probes of a (2, 3000) output: the short axis makes many coincide, and
// random positions make up the count; a last column left unwritten is still hit.
TEST(spread_positions, make_up_the_count_when_short_axes_make_positions_coincide) {
  const auto positions = spread_positions(3, {2, 3000}, 4096);
  EXPECT_EQ(positions.size(), 4096u);
  EXPECT_EQ(std::set<std::size_t>(positions.begin(), positions.end()).size(), 4096u);
  EXPECT_TRUE(std::any_of(positions.begin(), positions.end(), [](std::size_t p) { return p % 3000 == 2999; }));
}

TEST(spread_positions, follow_a_buffers_declared_dims_when_they_account_for_its_elements) {
  aisp::buffer_spec spec;
  spec.dims = {"rows", "cols"};
  const aisp::workload work{aisp::workload_kind::validation, {{"rows", 7}, {"cols", 65}}};
  EXPECT_EQ(aisp::shape_of(spec, work, 7 * 65), (std::vector<std::int64_t>{7, 65}));
  EXPECT_EQ(aisp::shape_of(spec, work, 100), (std::vector<std::int64_t>{100})) << "dims that do not match: one flat axis";
  spec.dims.clear();
  EXPECT_EQ(aisp::shape_of(spec, work, 455), (std::vector<std::int64_t>{455}));
}

TEST(spread_positions, differ_from_seed_to_seed) {
  EXPECT_EQ(spread_positions(5, {1 << 20}, 8), spread_positions(5, {1 << 20}, 8));
  EXPECT_NE(spread_positions(5, {1 << 20}, 8), spread_positions(6, {1 << 20}, 8));
}

}  // namespace
