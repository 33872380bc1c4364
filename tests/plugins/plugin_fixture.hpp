// A small honest host pair for the plugin fixtures (tests/plugins/): y = x + 1 over n fp64.
#pragma once

#include <cstdint>
#include <string>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace plugin_fixture {

inline void add_one(aisp::run_context& ctx) {
  const auto n = ctx.param("n");
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0;
}

[[nodiscard]] inline std::int64_t elements(const aisp::workload& w) { return w.get("n"); }

// The pair without its variants, so each fixture adds its own.
inline aisp::pair add_one_pair(std::string target) {
  return aisp::pair(std::move(target))
      .summary("y = x + 1 over n fp64 (plugin fixture)")
      .on(aisp::backend::host)
      .benchmark_size({{"n", std::int64_t{1} << 20}})
      .validation_size({{"n", 1}})
      .validation_size({{"n", 1001}})
      .held_out_size({{"n", 4099}})
      .input("x", aisp::dtype::f64, elements)
      .output("y", aisp::dtype::f64, elements)
      .work([](const aisp::workload& w) {
        const double n = static_cast<double>(w.get("n"));
        return aisp::work_amount{.bytes = 16.0 * n, .flops = n};
      })
      .reference([](aisp::reference_io& io) {
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + 1.0;
      });
}

}  // namespace plugin_fixture
