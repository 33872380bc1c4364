// A plugin that says it was built against another ABI: refused before any of its pairs runs.
#include "aisp/plugin.hpp"
#include "plugin_fixture.hpp"

extern "C" __attribute__((visibility("default"))) int aisp_plugin_abi_version() { return AISP_PLUGIN_ABI_VERSION + 1; }

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_other_abi:add_one")
                  .add_variant("baseline", "a loop", plugin_fixture::add_one)
                  .add_variant("optimized", "the same loop", plugin_fixture::add_one));
