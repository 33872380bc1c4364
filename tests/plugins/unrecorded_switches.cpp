// An honest plugin built without -frecord-gcc-switches and without the K4 launcher
// (tests/CMakeLists.txt): nothing says how its units were built, so build-symmetry fails with
// how to build it (Note [plugin build symmetry]).
#include "plugin_fixture.hpp"

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_k4:unrecorded")
                  .add_variant("baseline", "a loop", plugin_fixture::add_one)
                  .add_variant("optimized", "the same loop", plugin_fixture::add_one));
