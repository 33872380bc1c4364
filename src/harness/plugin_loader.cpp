#include "harness/plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/plugin.hpp"
#include "aisp/registry.hpp"
#include "audit/build_flags.hpp"
#include "support/readable_error.hpp"

namespace aisp {
namespace {

// Note [plugins]: a plugin is a MODULE library whose AISP_REGISTER statics add its pairs to the
// registry of the process that loads it: the judge (for the contract, references and sizes) and
// every worker (for run()), which loads it after its sandbox is in place, so a plugin's static
// initializers run confined like the rest of its code. It carries no copy of aisp: its calls
// into the harness resolve against the `aisp` executable, which exports its symbols
// (ENABLE_EXPORTS, the whole core linked in), so there is one registry. aisp's static CUDA
// runtime keeps its symbols hidden, so a plugin with CUDA code links its own static runtime: it
// shares the process's primary context, streams and allocations with aisp's, and the device
// audit sees its work like any other (CUPTI watches the driver). It keeps its own last-error
// slot: every plugin exports aisp_plugin_take_cuda_error() (aisp_plugin_abi.cpp), which the
// harness reads wherever it reads its own (X8).
// Its headers' ABI is checked once it is loaded; its statics have run by then, but they only
// build pair descriptions, and a duplicate or broken one is recorded, never thrown
// (registry::add).
using abi_function = int (*)();

std::vector<abi_function>& plugin_error_slots() {
  static std::vector<abi_function> slots;
  return slots;
}

std::vector<loaded_plugin>& plugins_so_far() {
  static std::vector<loaded_plugin> plugins;
  return plugins;
}

loaded_plugin load_one(const std::string& path) {
  std::error_code error;
  AISP_EXPECTS(std::filesystem::is_regular_file(path, error), "plugin '" + path + "': no such file");
  const auto& known = registry::instance();
  const std::size_t pairs_before = known.pairs().size();
  std::set<std::string> targets_before;
  for (const auto& declared : known.pairs()) targets_before.insert(declared.target());
  const std::size_t broken_before = known.broken().size();
  // RTLD_NOW: an unresolved symbol is an error here, not a crash in the middle of a run.
  void* handle = dlopen(std::filesystem::absolute(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    AISP_EXPECTS(false, "plugin '" + path + "' could not be loaded: " + std::string(why != nullptr ? why : "unknown dlopen error"));
  }
  const auto abi = reinterpret_cast<abi_function>(dlsym(handle, "aisp_plugin_abi_version"));
  AISP_EXPECTS(abi != nullptr, "plugin '" + path + "' is not an aisp plugin (no aisp_plugin_abi_version: build it with aisp_add_benchmark)");
  AISP_EXPECTS(abi() == AISP_PLUGIN_ABI_VERSION,
               fmt::format("plugin '{}' was built against aisp plugin ABI {}, this aisp ({}) has ABI {}: rebuild it against these headers",
                           path, abi(), AISP_VERSION, AISP_PLUGIN_ABI_VERSION));
  // A plugin that registers at run time (the Python bridge, Note [python bridge]) does it here,
  // after the ABI matched, and says in one line why it could not.
  // A bridge's pairs come from the user's files, not from the bridge library: name the flag.
  const auto kind = kind_of_plugin(path);
  const std::string prefix = kind == plugin_kind::python_bridge ? "--python: "
                             : kind == plugin_kind::exec_bridge ? "--exec: "
                                                                : "plugin '" + path + "': ";
  if (const auto late = reinterpret_cast<const char* (*)()>(dlsym(handle, "aisp_plugin_register")); late != nullptr) {
    const char* why = late();
    AISP_EXPECTS(why == nullptr, prefix + without_source_locations(why != nullptr ? why : ""));
  }
  if (known.broken().size() > broken_before) {
    std::string why;
    for (std::size_t i = broken_before; i < known.broken().size(); ++i)
      why += (why.empty() ? "" : ", ") + without_source_locations(known.broken()[i]);
    AISP_EXPECTS(false, prefix + "breaks the benchmark contract: " + why);
  }
  AISP_EXPECTS(known.pairs().size() > pairs_before, "plugin '" + path + "' registers no pair (AISP_REGISTER)");
  // Older plugins of this ABI may lack it: then only the poisoned outputs catch a silent failure.
  if (const auto slot = reinterpret_cast<abi_function>(dlsym(handle, "aisp_plugin_take_cuda_error")); slot != nullptr)
    plugin_error_slots().push_back(slot);
  loaded_plugin plugin{.path = std::filesystem::canonical(path).string(), .optimized = std::nullopt, .targets = {}};
  if (const auto optimized = reinterpret_cast<abi_function>(dlsym(handle, "aisp_plugin_built_optimized")); optimized != nullptr)
    plugin.optimized = optimized() != 0;
  // The registry keeps its pairs in name order: a plugin's are the names that were not there.
  for (const auto& declared : known.pairs())
    if (targets_before.count(declared.target()) == 0) plugin.targets.push_back(declared.target());
  plugin.python_bridge = kind_of_plugin(plugin.path) == plugin_kind::python_bridge;
  plugin.exec_bridge = kind_of_plugin(plugin.path) == plugin_kind::exec_bridge;
  if (!plugin.python_bridge && !plugin.exec_bridge) {
    const auto build = read_plugin_build(plugin.path);
    plugin.math_record = build.math_record;
    // Note [unoptimized unit] (audit/build_flags.cpp): the optimized answer is one unit's; any
    // unit the binary recorded as unoptimized makes the plugin's build a debug one too.
    if (build.unoptimized_unit && plugin.optimized == true) plugin.optimized = false;
  }
  return plugin;
}

}  // namespace

cudaError_t take_plugin_cuda_errors() {
  cudaError_t first = cudaSuccess;
  for (const auto slot : plugin_error_slots()) {
    const auto code = static_cast<cudaError_t>(slot());
    if (first == cudaSuccess) first = code;
  }
  return first;
}

void load_plugins(const std::vector<std::string>& paths) {
  static std::set<std::string> loaded;  // the same file named twice is loaded once
  for (const auto& path : paths) {
    std::error_code error;
    if (loaded.count(std::filesystem::weakly_canonical(path, error).string()) != 0) continue;
    auto plugin = load_one(path);
    loaded.insert(plugin.path);
    plugins_so_far().push_back(std::move(plugin));
  }
}

const std::vector<loaded_plugin>& loaded_plugins() { return plugins_so_far(); }

void record_hosted_plugin(loaded_plugin plugin) { plugins_so_far().push_back(std::move(plugin)); }

std::string aisp_module_path(std::string_view file_name) {
  std::error_code error;
  const auto bin = std::filesystem::read_symlink("/proc/self/exe", error).parent_path();
  return (bin.parent_path() / "lib" / "aisp" / file_name).string();
}

std::string python_bridge_path() { return aisp_module_path("libaisp_python.so"); }

std::string exec_bridge_path() { return aisp_module_path("libaisp_exec.so"); }

plugin_kind kind_of_plugin(const std::string& path) {
  std::error_code error;
  const auto canonical = std::filesystem::weakly_canonical(path, error);
  if (canonical == std::filesystem::weakly_canonical(python_bridge_path(), error)) return plugin_kind::python_bridge;
  if (canonical == std::filesystem::weakly_canonical(exec_bridge_path(), error)) return plugin_kind::exec_bridge;
  return plugin_kind::library;
}

namespace {
bool registered_by(bool loaded_plugin::*bridge, std::string_view target) {
  for (const auto& plugin : plugins_so_far()) {
    if (plugin.*bridge && std::find(plugin.targets.begin(), plugin.targets.end(), target) != plugin.targets.end()) return true;
  }
  return false;
}
}  // namespace

bool is_python_pair(std::string_view target) { return registered_by(&loaded_plugin::python_bridge, target); }
bool is_exec_pair(std::string_view target) { return registered_by(&loaded_plugin::exec_bridge, target); }

namespace {

// A bridge pair's reason carried in a tag (only a bridge's pairs: a C++ pair's tags are its own).
std::string bridge_reason(const pair& declared, std::string_view prefix) {
  if (!is_python_pair(declared.target()) && !is_exec_pair(declared.target())) return "";
  for (const auto& tag : declared.tags())
    if (tag.starts_with(prefix)) return tag.substr(prefix.size());
  return "";
}

}  // namespace

std::string subprocess_reason(const pair& declared) { return bridge_reason(declared, subprocess_tag_prefix); }
std::string switches_reason(const pair& declared) { return bridge_reason(declared, switches_tag_prefix); }

}  // namespace aisp
