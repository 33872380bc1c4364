// An honest plugin built with -O0 (tests/CMakeLists.txt): aisp loads it and warns that its
// timings would measure a debug build.
#include "plugin_fixture.hpp"

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_debug:add_one")
                  .add_variant("baseline", "a loop", plugin_fixture::add_one)
                  .add_variant("optimized", "the same loop", plugin_fixture::add_one));
