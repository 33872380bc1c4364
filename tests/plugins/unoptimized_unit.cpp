// K4 through a plugin (Note [unoptimized unit]): both variants run the same loop, the baseline's
// from a unit built with -O0 (unoptimized_kernel.cpp; tests/CMakeLists.txt) while the rest of the
// plugin is optimized, as a red team's plugin read 7.48x "faster" with every check passing
// (round eleven, 2026-12-05).
#include "plugin_fixture.hpp"

void add_one_in_an_unoptimized_unit(aisp::run_context& ctx);  // unoptimized_kernel.cpp

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_k4:unoptimized_unit")
                  .add_variant("baseline", "the same loop in a unit built with -O0", add_one_in_an_unoptimized_unit)
                  .add_variant("optimized", "a loop", plugin_fixture::add_one));
