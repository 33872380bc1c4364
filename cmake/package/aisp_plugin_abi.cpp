// Compiled into every plugin by aisp_add_benchmark(): the judge reads it to refuse a plugin built
// against other headers (Note [plugins] in src/harness/plugin_loader.cpp).
#include "aisp/plugin.hpp"

extern "C" __attribute__((visibility("default"))) int aisp_plugin_abi_version() { return AISP_PLUGIN_ABI_VERSION; }
