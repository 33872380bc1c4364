#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "audit/build_flags.hpp"
#include "audit/unoptimized_code.hpp"

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

// Note [unoptimized unit]: GCC's last -O wins, none is -O0; only a mix of levels is reported.
TEST(unoptimized_units, names_unoptimized_levels_only_beside_an_optimized_unit) {
  const std::vector<std::string> mixed = {"GNU C++20 -O2 -fPIC", "GNU C++20 -O2 -O0 -fPIC", "GNU C++20 -fPIC", "GNU C++20 -Og"};
  EXPECT_EQ(aisp::unoptimized_units(mixed), (std::vector<std::string>{"-O0", "-Og"}));
  const std::vector<std::string> all_debug = {"GNU C++20 -O3 -O0", "GNU C++20 -g"};
  EXPECT_TRUE(aisp::unoptimized_units(all_debug).empty()) << "a whole debug build is the optimized flag's warning, not K4";
  const std::vector<std::string> levels = {"GNU C++20 -O2", "GNU C++20 -O3", "GNU C++20 -O", "GNU C++20 -Os", "GNU C++20 -O0 -O2"};
  EXPECT_TRUE(aisp::unoptimized_units(levels).empty()) << "optimized units at different levels are not unoptimized";
  EXPECT_TRUE(aisp::unoptimized_units({}).empty());
}

// Note [unoptimized function]: this optimized test binary (its static CUDA runtime included) has
// no function that opens as -O0 code does; a file that is not ELF has none either.
TEST(unoptimized_functions, finds_none_in_an_optimized_binary_or_a_file_that_is_not_elf) {
  EXPECT_EQ(aisp::unoptimized_functions(aisp::elf_image(self_path()), 5), std::vector<std::string>{});
  EXPECT_TRUE(aisp::unoptimized_functions(aisp::elf_image("/proc/self/status")).empty());
  EXPECT_TRUE(aisp::unoptimized_functions(aisp::elf_image("/nonexistent/aisp")).empty());
}

TEST(describe_unit_math_record, names_each_recorded_switch_in_words) {
  EXPECT_EQ(aisp::describe_unit_math_record("none"), "");
  EXPECT_EQ(aisp::describe_unit_math_record("use_fast_math__math_pragma"),
            "nvcc -use_fast_math, a math pragma or optimize attribute in the source");
  EXPECT_EQ(aisp::describe_unit_math_record("fast_math"), "-ffast-math or -Ofast");
}

// The compiler launcher, with `echo` as the compiler: the command it would run, one line.
std::string launch(const std::string& arguments) {
  const std::string command = std::string(AISP_RECORD_MATH_FLAGS) + " echo " + arguments;
  std::FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[512];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  if (pipe != nullptr) pclose(pipe);
  return out;
}

std::string source_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(record_math_flags, records_host_and_nvcc_switches_per_unit) {
  const auto plain = source_file("aisp_k4_plain.cu", "__global__ void k() {}\n");
  EXPECT_NE(launch("-O3 -c " + plain).find("-DAISP_TU_MATH_FLAGS=none"), std::string::npos);
  EXPECT_NE(launch("-use_fast_math -c " + plain).find("-DAISP_TU_MATH_FLAGS=use_fast_math"), std::string::npos);
  EXPECT_NE(launch("-Xcompiler=-ffast-math --ftz=true -c " + plain).find("-DAISP_TU_MATH_FLAGS=fast_math__flush_to_zero"),
            std::string::npos);
  EXPECT_NE(launch("-fno-fast-math -c " + plain).find("-DAISP_TU_MATH_FLAGS=none"), std::string::npos);
}

TEST(record_math_flags, finds_math_pragmas_and_attributes_in_the_source) {
  const auto pragma = source_file("aisp_k4_pragma.cpp", "#pragma GCC optimize(\"fast-math\")\nint f();\n");
  EXPECT_NE(launch("-c " + pragma).find("-DAISP_TU_MATH_FLAGS=math_pragma"), std::string::npos);
  const auto attribute = source_file("aisp_k4_attribute.cpp", "__attribute__((optimize(\"-funsafe-math-optimizations\"))) int f();\n");
  EXPECT_NE(launch("-c " + attribute).find("-DAISP_TU_MATH_FLAGS=math_pragma"), std::string::npos);
  const auto benign = source_file("aisp_k4_benign.cpp", "#pragma GCC optimize(\"O3\")\n#pragma once\n");
  EXPECT_NE(launch("-c " + benign).find("-DAISP_TU_MATH_FLAGS=none"), std::string::npos);
}

}  // namespace
