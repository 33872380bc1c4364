// A plugin: a shared library of pairs (AISP_REGISTER), built with aisp_add_benchmark() from the
// installed CMake package and loaded with `aisp bench run --plugin lib.so`. See docs/tutorial.md.
#pragma once

// Bumped whenever a public header changes a type's layout or a function's signature: a plugin
// built against another ABI is refused before any of its pairs runs (Note [plugins]).
#define AISP_PLUGIN_ABI_VERSION 11  // 2: buffer_spec::derived_from; 3: ranks in run_context and reference_io; 4: pair::short_calls, dtype::i8, buffer_spec::derived_scale; 5: variant::collectives; 6: pair::items_per_call, pair::sequential_passes, run_context::record; 7: pair::judge_by_recorded, pair::data_dependent_launches; 8: pair::trades_latency; 9: pair::host_threads; 10: variant::host_threads; 11: run_context::deliver, pair::delivers

extern "C" {
// Defined in every plugin by aisp_add_benchmark() (cmake/package/aisp_plugin_abi.cpp): the ABI
// the plugin's headers declared.
int aisp_plugin_abi_version();
// The plugin's CUDA runtime's last error, cleared (cudaGetLastError in the plugin's own runtime).
int aisp_plugin_take_cuda_error();
}
