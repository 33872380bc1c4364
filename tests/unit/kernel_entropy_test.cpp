// Note [verified after the call]: the worker's draw after each sample.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "support/kernel_entropy.hpp"

namespace {

TEST(kernel_entropy, draws_differ_and_fill_all_64_bits) {
  std::set<std::uint64_t> seen;
  std::uint64_t ored = 0;
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t draw = aisp::kernel_entropy();
    seen.insert(draw);
    ored |= draw;
  }
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_EQ(ored, ~std::uint64_t{0});
}

TEST(kernel_entropy, a_chance_takes_its_share_of_draws) {
  EXPECT_FALSE(aisp::drawn_with_chance(0, 0.0));
  EXPECT_FALSE(aisp::drawn_with_chance(0, -1.0));
  EXPECT_TRUE(aisp::drawn_with_chance(~std::uint64_t{0}, 1.0));
  EXPECT_TRUE(aisp::drawn_with_chance(0, 1e-9));
  EXPECT_FALSE(aisp::drawn_with_chance(~std::uint64_t{0}, 0.999));
  EXPECT_TRUE(aisp::drawn_with_chance(std::uint64_t{1} << 63, 0.5000001));
  EXPECT_FALSE(aisp::drawn_with_chance(std::uint64_t{1} << 63, 0.5));
  int taken = 0;
  for (int i = 0; i < 8000; ++i) taken += aisp::drawn_with_chance(aisp::kernel_entropy(), 0.125) ? 1 : 0;
  EXPECT_GT(taken, 850);  // 1000 expected; sd ~30
  EXPECT_LT(taken, 1150);
}

}  // namespace
