// Compiled into every plugin by aisp_add_benchmark(): the judge reads it to refuse a plugin built
// against other headers (Note [plugins] in src/harness/plugin_loader.cpp).
#include <cuda_runtime_api.h>

#include "aisp/plugin.hpp"

extern "C" __attribute__((visibility("default"))) int aisp_plugin_abi_version() { return AISP_PLUGIN_ABI_VERSION; }

// Whether the plugin's host code was compiled with optimization: the judge warns when it was not,
// since a debug build's timings say nothing about the code (a build with no CMAKE_BUILD_TYPE
// gets no -O flag).
extern "C" __attribute__((visibility("default"))) int aisp_plugin_built_optimized() {
#ifdef __OPTIMIZE__
  return 1;
#else
  return 0;
#endif
}

// The plugin's own CUDA runtime's last-error slot, read (and cleared) by the harness wherever it
// reads its own: a launch that failed silently in the plugin's run() is caught as X8.
extern "C" __attribute__((visibility("default"))) int aisp_plugin_take_cuda_error() { return static_cast<int>(cudaGetLastError()); }
