#include <gtest/gtest.h>

#include "audit/nvml_reader.hpp"

namespace {

TEST(nvml_session, a_missing_library_is_reported_not_fatal) {
  std::string why;
  const auto session = aisp::nvml_session::open(why, "libnvidia-ml-that-does-not-exist.so.1");
  EXPECT_EQ(session, nullptr);
  EXPECT_NE(why.find("NVML unavailable"), std::string::npos) << why;
}

TEST(clock_event_reasons, names_each_set_bit_and_only_real_slowdowns_count_as_throttling) {
  EXPECT_TRUE(aisp::clock_event_reason_names(0).empty());
  EXPECT_EQ(aisp::clock_event_reason_names(0x1), std::vector<std::string>{"gpu_idle"});
  EXPECT_EQ(aisp::clock_event_reason_names(0x4 | 0x40),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_FALSE(aisp::is_throttled(0x1 | 0x2));
  EXPECT_TRUE(aisp::is_throttled(0x4));
  EXPECT_TRUE(aisp::is_throttled(0x20));
}

}  // namespace
