// K4 through a plugin (Note [unoptimized function]): both variants run the same loop, the
// baseline's function compiled without optimization by an attribute, which no recorded switch
// shows, as a red team's plugin read 7.49x "faster" with every check passing (round eleven,
// 2026-12-05). The plugin's units are all built optimized.
#include <cstdint>

#include "plugin_fixture.hpp"

namespace {

__attribute__((optimize("O0"))) void add_one_unoptimized(aisp::run_context& ctx) {
  const auto n = ctx.param("n");
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] + 1.0;
}

}  // namespace

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_k4:unoptimized_function")
                  .add_variant("baseline", "the same loop in a function built with optimize(\"O0\")", add_one_unoptimized)
                  .add_variant("optimized", "a loop", plugin_fixture::add_one));
