// A plugin whose pair takes a target the lab already has.
#include "plugin_fixture.hpp"

AISP_REGISTER(plugin_fixture::add_one_pair("labs/host:matrix_sum")
                  .add_variant("baseline", "a loop", plugin_fixture::add_one)
                  .add_variant("optimized", "the same loop", plugin_fixture::add_one));
