// Loads users' plugins into the registry, in the judge and in every worker (Note [plugins]).
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aisp {

class pair;

// A plugin loaded into this process.
struct loaded_plugin {
  std::string path;                  // canonical
  std::optional<bool> optimized;     // its host code compiled with optimization; unknown for older plugins
  std::vector<std::string> targets;  // the pairs it registered
  bool python_bridge = false;        // aisp's own Python bridge (lib/aisp beside this executable)
  bool exec_bridge = false;          // aisp's own executable-pairs bridge (the same place)
  // Note [plugin build symmetry]: what build-symmetry holds a library plugin's pairs to ("" for
  // the bridges, whose pairs are the judge's own code); read in the pair host, not sent back.
  std::string math_record{};
};

// Loads each plugin once. A missing file, a library
// that is not an aisp plugin, another ABI, a duplicate target or a broken contract is a
// contract_error naming the plugin: a one-line error and exit 2 at the CLI.
void load_plugins(const std::vector<std::string>& paths);

// The first error waiting in a loaded plugin's own CUDA runtime (each plugin's slot is read and
// cleared), cudaSuccess when none: the harness reads it beside its own last-error slot (X8).
[[nodiscard]] cudaError_t take_plugin_cuda_errors();

// aisp's own run-time module `file_name` (the Python bridge, the HTTP server): lib/aisp/ beside
// bin/, in the build tree and in an install.
[[nodiscard]] std::string aisp_module_path(std::string_view file_name);
// aisp_module_path("libaisp_python.so").
[[nodiscard]] std::string python_bridge_path();
// aisp_module_path("libaisp_exec.so").
[[nodiscard]] std::string exec_bridge_path();

// Which of aisp's own bridges the library at `path` is, if any (judged by its path).
enum class plugin_kind : std::uint8_t { library, python_bridge, exec_bridge };
[[nodiscard]] plugin_kind kind_of_plugin(const std::string& path);

// Whether `target` was registered by aisp's own Python bridge (Note [python bridge]); judged by
// the bridge's path, so a pair cannot claim it with a tag.
[[nodiscard]] bool is_python_pair(std::string_view target);
// The same for the executable-pairs bridge (Note [executable pairs] in src/exec_bridge/).
[[nodiscard]] bool is_exec_pair(std::string_view target);

// Note [compilers in the sandbox]: a Python pair that declared allow_subprocesses(reason) carries
// this tag plus the reason; its workers may start processes (torch.compile's ptxas), and any
// still alive when a verified call returns fails `child-process`.
inline constexpr std::string_view subprocess_tag_prefix = "subprocesses: ";
// A Python pair's declared reason for turning torch's backend switches inside its calls
// (Note [watched python state]), carried as a tag as the subprocess reason is; "" without one.
inline constexpr std::string_view switches_tag_prefix = "switches in calls: ";
// The reason a pair's workers may start processes; "" for every pair but a Python pair that said
// so and an executable pair (whose variants are processes).
[[nodiscard]] std::string subprocess_reason(const pair& declared);
[[nodiscard]] std::string switches_reason(const pair& declared);

// Every plugin loaded so far, in load order.
[[nodiscard]] const std::vector<loaded_plugin>& loaded_plugins();
// A plugin another process loaded for this one (Note [untrusted pairs]: the judge's pair host),
// listed with the ones loaded here.
void record_hosted_plugin(loaded_plugin plugin);

}  // namespace aisp
