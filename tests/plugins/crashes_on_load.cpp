// A plugin whose static initializer crashes (a null write): loading it must not take the judge
// down (Note [untrusted pairs]: it crashes the pair host, never the judge).
#include <csignal>

#include "plugin_fixture.hpp"

namespace {
const bool crashed = [] {
  std::raise(SIGSEGV);
  return true;
}();
}  // namespace

AISP_REGISTER(plugin_fixture::add_one_pair("plugin_crash:add_one").add_variant("baseline", "a loop", plugin_fixture::add_one));
