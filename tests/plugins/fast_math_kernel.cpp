// Built with -ffast-math (tests/CMakeLists.txt): the unit fast_math_unit.cpp's optimized variant runs.
#include <cstdint>

#include "aisp/run_context.hpp"

void add_one_in_a_fast_math_unit(aisp::run_context& ctx) {
  const auto n = ctx.param("n");
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0;
}
