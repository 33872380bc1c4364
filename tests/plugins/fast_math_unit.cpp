// K4 through a plugin (Note [plugin build symmetry]): the optimized variant's loop lives in a unit
// built with -ffast-math (fast_math_kernel.cpp), the registering unit is clean, and neither ran
// the lab's K4 launcher, as a user's plugin does not (tests/CMakeLists.txt). A red team's plugin
// of this shape passed build-symmetry, which read the aisp binary's switches (2026-12-04).
#include "plugin_fixture.hpp"

void add_one_in_a_fast_math_unit(aisp::run_context& ctx);  // fast_math_kernel.cpp

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_k4:fast_math_unit")
                  .add_variant("baseline", "a loop", plugin_fixture::add_one)
                  .add_variant("optimized", "the same loop in a unit built with -ffast-math", add_one_in_a_fast_math_unit));
