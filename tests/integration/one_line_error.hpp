// Bad input is one line on stderr and exit code 2: the shared assertion of the error tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "../test_support.hpp"

namespace aisp::testing {

// Runs `aisp ARGS` (after the environment assignments in `env`) and expects exit 2 and one line
// that contains `says`.
inline void expect_one_line_error(const std::string& args, const std::string& says, const std::string& env = "") {
  const auto run = run_command(env + (env.empty() ? "" : " ") + aisp_binary() + " " + args);
  EXPECT_EQ(run.exit_code, 2) << args << ":\n" << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << args << ":\n" << run.output;
  EXPECT_NE(run.output.find(says), std::string::npos) << args << ":\n" << run.output;
}

}  // namespace aisp::testing
