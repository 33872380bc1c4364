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

// {"n": 1024, ...}: each a whole number from 0 to 2^62; `where` names the object in errors.
[[nodiscard]] param_map params_of(const nlohmann::json& sizes, const std::string& where);
[[nodiscard]] param_map params_of(const nlohmann::json& sizes);

// Note [declared fields]: one-line errors naming the field, for what a bridge reads beyond these.
[[noreturn]] void wrong_field(const std::string& where, const std::string& wanted, const nlohmann::json& got);
[[nodiscard]] const nlohmann::json& field_of(const nlohmann::json& object, const std::string& where, const std::string& name);
[[nodiscard]] std::string text_of(const nlohmann::json& value, const std::string& where);
[[nodiscard]] double number_of(const nlohmann::json& value, const std::string& where);
[[nodiscard]] const nlohmann::json& list_of(const nlohmann::json& value, const std::string& where);
[[nodiscard]] std::vector<std::string> texts_of(const nlohmann::json& value, const std::string& where);
[[nodiscard]] nlohmann::json sizes_of(const workload& work);
// The buffer's shape at `work`, with a leading `world` dim when the pair has ranks.
[[nodiscard]] nlohmann::json shape_of(const declared_buffer& buffer, const workload& work, std::int64_t world);

// The "threads" field of a pair or of one of its variants (Note [declared threads used]): a whole
// number from 1 to 4096, or 0 where it is absent (a variant then runs on the pair's count).
[[nodiscard]] int threads_field(const nlohmann::json& declared, const std::string& where);

// A field of `object` outside `known` is refused in one line, with the known one nearest to it: a
// misspelt optional field ("tolernace") was ignored, its default taken (a user's walkthrough,
// 2026-12-04).
void refuse_unknown_fields(const nlohmann::json& object, const std::vector<std::string>& known, const std::string& where);

// A variant's "precision" (what it computes in, where the baseline's differs: "bf16 matmul, fp32
// accumulate") and its "tolerance" {rtol, atol, max_rel_l2, reason}, onto `v`; a tolerance
// without a precision is refused (it is what the precision change costs).
void declare_precision(variant& v, const nlohmann::json& declared, const std::string& where);

// Declares on `p`: "summary", "backend", "sizes" {benchmark, validation[], held_out[]}, "buffers"
// [{name, role, dtype, dims, init}], "tolerance", "goal", "exact_math", "fixed_inputs"; returns
// the buffers in declaration order. Throws a one-line std::runtime_error naming a missing or
// malformed field (Note [declared fields]).
std::vector<declared_buffer> declare_common(pair& p, const nlohmann::json& declared);

}  // namespace aisp::bridge
