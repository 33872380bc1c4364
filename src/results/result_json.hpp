// The versioned JSON form of a suite result: everything the table shows, plus the raw samples.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "results/pair_result.hpp"
#include "support/json_file.hpp"  // write_json_file

namespace aisp {

inline constexpr const char* results_schema = "aisp.bench.run";

[[nodiscard]] nlohmann::json to_json(const pair_result& result);
[[nodiscard]] nlohmann::json to_json(const suite_result& suite);
// A run's results document from its artifacts folder or its results.json; contract_error (one
// line) when it is missing, truncated, not aisp's, or not shaped as aisp writes it (the pairs'
// targets, variants' names and lists its readers rely on: the message says where).
[[nodiscard]] nlohmann::json read_results_document(const std::string& run);
// The GPU a results document (or run header) was measured on: the first entry of
// `device.gpus`, or an empty object on a host without one.
[[nodiscard]] nlohmann::json primary_gpu(const nlohmann::json& results);

}  // namespace aisp
