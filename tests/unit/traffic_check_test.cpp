// W3 without a GPU: the rule that holds a call's counted bytes against the declared minimum.
#include <gtest/gtest.h>

#include "runner/traffic_check.hpp"

namespace aisp {
namespace {

TEST(traffic_shortfall, an_honest_call_moves_at_least_the_declared_bytes) {
  EXPECT_EQ(traffic_shortfall(8e6, 8.0004e6), "");
  EXPECT_EQ(traffic_shortfall(8e6, 40e6), "");  // a GEMM reads its tiles many times over
}

TEST(traffic_shortfall, a_skipped_third_or_half_is_caught_with_the_numbers) {
  const auto third = traffic_shortfall(24e6, 8e6);
  EXPECT_NE(third.find("33%"), std::string::npos) << third;
  EXPECT_NE(traffic_shortfall(24e6, 16e6), "");
}

TEST(traffic_shortfall, the_floor_leaves_room_for_the_counters_grain) {
  EXPECT_EQ(traffic_shortfall(100, traffic_floor * 100), "");
  EXPECT_NE(traffic_shortfall(100, traffic_floor * 100 - 1), "");
}

TEST(traffic_shortfall, nothing_declared_is_nothing_to_compare) { EXPECT_EQ(traffic_shortfall(0, 0), ""); }

TEST(traffic_shortfall, copy_engine_bytes_count_and_are_named) {
  // A peer copy: L2 saw 2% of it, the copy engines the rest (ch04:p2p_copy on the H200 pair).
  EXPECT_EQ(traffic_shortfall(2.684e8, 4.5e6 + 2.684e8, 2.684e8), "");
  const auto short_copy = traffic_shortfall(2.684e8, 4.5e6 + 1.0e8, 1.0e8);
  EXPECT_NE(short_copy.find("by copy engines"), std::string::npos) << short_copy;
}

}  // namespace
}  // namespace aisp
