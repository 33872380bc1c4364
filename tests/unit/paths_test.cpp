// File names of targets and programs found on PATH (src/support/paths.hpp).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/paths.hpp"

namespace aisp {
namespace {

TEST(file_safe, turns_a_target_into_one_file_name) {
  EXPECT_EQ(file_safe("labs/gemm:bf16_4096"), "labs_gemm_bf16_4096");
  EXPECT_EQ(file_safe("ch08:loop_unrolling_optimized"), "ch08_loop_unrolling_optimized");
}

TEST(find_program, finds_an_executable_on_path_or_in_the_fallbacks_only) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "aisp_find_program";
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "extra");
  fs::create_directories(dir / "bin" / "adir");  // a directory is no program
  std::ofstream(dir / "bin" / "runnable") << "#!/bin/sh\n";
  fs::permissions(dir / "bin" / "runnable", fs::perms::owner_all);
  std::ofstream(dir / "bin" / "plain") << "not executable\n";
  fs::permissions(dir / "bin" / "plain", fs::perms::owner_read | fs::perms::owner_write);
  std::ofstream(dir / "extra" / "elsewhere") << "#!/bin/sh\n";
  fs::permissions(dir / "extra" / "elsewhere", fs::perms::owner_all);

  const char* saved = std::getenv("PATH");
  const std::string old_path = saved != nullptr ? saved : "";
  setenv("PATH", ("/nonexistent::" + (dir / "bin").string()).c_str(), 1);
  EXPECT_EQ(find_program("runnable"), (dir / "bin" / "runnable").string());
  EXPECT_EQ(find_program("plain"), "");
  EXPECT_EQ(find_program("adir"), "");
  EXPECT_EQ(find_program("elsewhere"), "");
  EXPECT_EQ(find_program("elsewhere", {(dir / "extra").string()}), (dir / "extra" / "elsewhere").string());
  setenv("PATH", old_path.c_str(), 1);
}

}  // namespace
}  // namespace aisp
