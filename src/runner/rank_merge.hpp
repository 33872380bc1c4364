// Note [ranks]: the ranks of a multi-GPU pair answer the judge as one worker. Each request goes
// to every rank; these fold their answers into the one answer a single worker would give, over
// the rank-major concatenation of the ranks' buffers (rank 0's elements first). Pure functions
// of the answers, so they are tested without processes.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp::ranks {

using nlohmann::json;
// Each output's element count on one rank (every rank holds the declared size).
using output_counts = std::map<std::string, std::size_t>;

// init: rank 0's answer; the audit as its worst rank's ("unavailable: ..." wins over "on").
[[nodiscard]] json merge_init(const std::vector<json>& replies);
// load: the slowest setup and warmup, what any rank's setup did (outputs written, inputs
// mutated, subnormals, access policy, library precision), every rank's buffers.
[[nodiscard]] json merge_load(const std::vector<json>& replies);
// sample: sample i is the slowest rank's sample i (Note [ranks]: a common start, the last
// rank's end) with that rank's audit window; the verified sample's fingerprint over all ranks,
// its listed pattern matches at global indices.
[[nodiscard]] json merge_sample(const std::vector<json>& replies, const output_counts& counts);
// probe and truth's values: each output's values, rank after rank.
[[nodiscard]] json concatenate_values(const std::vector<json>& per_rank_values);
// outputs: the probes around the call, worst rank first; files are joined by the caller.
[[nodiscard]] json merge_call_report(const std::vector<json>& replies);
// traffic: bytes summed over ranks (the declared work is the whole world's); unavailable if any is.
[[nodiscard]] json merge_traffic(const std::vector<json>& replies);

// A global element index (rank-major) as the rank that holds it and its index there.
struct rank_index {
  int rank = 0;
  std::size_t index = 0;
};
[[nodiscard]] rank_index locate(std::size_t global, std::size_t per_rank);

// truth's `extra` indices (global) split into each rank's local ones, and the answers put back
// in the order asked.
struct split_extra {
  std::vector<json> per_rank;  // {name: [local indices]} for each rank
  json order;                  // {name: [rank of each asked index]}
};
[[nodiscard]] split_extra split_extra_indices(const json& extra, const output_counts& counts, int world);
[[nodiscard]] json join_extra_values(const std::vector<json>& per_rank_extra, const json& order);

}  // namespace aisp::ranks
