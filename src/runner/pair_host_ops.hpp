// The requests a worker answers as a pair host (Note [untrusted pairs], pair_host.cpp): it loads
// a plugin in its sandbox and gives the judge the pairs as data, their functions' values at a
// workload, and their fp64 references.
#pragma once

#include <nlohmann/json.hpp>

namespace aisp::pair_host_ops {

// {"plugin": path} -> {"plugin": {path, optimized, targets, python_bridge, exec_bridge}, "pairs": [declarations]}
[[nodiscard]] nlohmann::json load(const nlohmann::json& request);
// {"target", "workload"} -> evaluation_of (pair_declaration.hpp)
[[nodiscard]] nlohmann::json evaluate(const nlohmann::json& request);
// {"target", "workload", "world", "inputs": {name: base64 doubles}, "outputs": {name: count}} -> {"outputs": {name: base64}}
[[nodiscard]] nlohmann::json reference(const nlohmann::json& request);

}  // namespace aisp::pair_host_ops
