// What the two bridges (Python pairs, executable pairs) read alike from a pair declared in JSON:
// the sizes, the buffers with their dims, the tolerance and the goal. The Python package
// (python/aisp) writes this JSON for a pair file; an executable pair file is this JSON
// (docs/worker_protocol.md, "Executable variants").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"

namespace aisp::bridge {

struct declared_buffer {
  std::string name;
  std::vector<std::string> dims;
  bool is_output = false;
};

// {"n": 1024, ...}
[[nodiscard]] param_map params_of(const nlohmann::json& sizes);
[[nodiscard]] nlohmann::json sizes_of(const workload& work);
// The buffer's shape at `work`, with a leading `world` dim when the pair has ranks.
[[nodiscard]] nlohmann::json shape_of(const declared_buffer& buffer, const workload& work, std::int64_t world);

// Declares on `p`: "summary", "backend", "sizes" {benchmark, validation[], held_out[]}, "buffers"
// [{name, role, dtype, dims, init}], "tolerance", "goal", "exact_math", "fixed_inputs"; returns
// the buffers in declaration order. Throws on a missing or malformed field.
std::vector<declared_buffer> declare_common(pair& p, const nlohmann::json& declared);

}  // namespace aisp::bridge
