// Built with -O0 (tests/CMakeLists.txt): the baseline of unoptimized_unit.cpp's pair runs here.
#include <cstdint>

#include "aisp/run_context.hpp"

void add_one_in_an_unoptimized_unit(aisp::run_context& ctx) {
  const auto n = ctx.param("n");
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0;
}
