// The versioned JSON form of a suite result: everything the table shows, plus the raw samples.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "results/pair_result.hpp"

namespace aisp {

[[nodiscard]] nlohmann::json to_json(const pair_result& result);
[[nodiscard]] nlohmann::json to_json(const suite_result& suite);
// Writes atomically (temporary file, then rename), so a crash never leaves half a file.
void write_json_file(const std::string& path, const nlohmann::json& document);
// A run's results document from its artifacts folder or its results.json; contract_error (one
// line) when it is missing, truncated or not aisp's.
[[nodiscard]] nlohmann::json read_results_document(const std::string& run);

}  // namespace aisp
