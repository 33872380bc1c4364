// A plugin whose pair has no optimized variant: the contract refuses it at load.
#include "plugin_fixture.hpp"

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_broken:add_one").add_variant("baseline", "a loop", plugin_fixture::add_one));
