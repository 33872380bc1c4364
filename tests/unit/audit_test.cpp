#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "audit/build_flags.hpp"

namespace {

std::string self_path() {
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  return n > 0 ? std::string(path.data(), static_cast<std::size_t>(n)) : "";
}

TEST(recorded_compile_switches, reads_the_switches_this_test_binary_was_built_with) {
  const auto lines = aisp::recorded_compile_switches(self_path());
  ASSERT_FALSE(lines.empty()) << "the build records switches with -frecord-gcc-switches";
  bool saw_optimization = false;
  for (const auto& line : lines) saw_optimization = saw_optimization || line.find("-O") != std::string::npos;
  EXPECT_TRUE(saw_optimization);
  EXPECT_TRUE(aisp::unsafe_math_flags(lines).empty()) << "the honest build uses no value-changing math flags";
}

TEST(recorded_compile_switches, an_unreadable_or_non_elf_file_has_none) {
  EXPECT_TRUE(aisp::recorded_compile_switches("/nonexistent/aisp").empty());
  EXPECT_TRUE(aisp::recorded_compile_switches("/proc/self/status").empty());
}

TEST(unsafe_math_flags, finds_each_value_changing_flag_once_and_ignores_look_alikes) {
  const std::vector<std::string> lines = {"GNU C++20 12.2.0 -O3 -ffast-math -Wall", "GNU C++20 -Ofast -ffast-math",
                                          "GNU C++20 -fno-fast-math -O2 -ffast-math-extra"};
  EXPECT_EQ(aisp::unsafe_math_flags(lines), (std::vector<std::string>{"-ffast-math", "-Ofast"}));
}

}  // namespace
