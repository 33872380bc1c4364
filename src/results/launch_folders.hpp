// Note [launch]: the artifacts of a launch across hosts, as `aisp bench merge` reads them. The
// run's folder holds `launch-rank-<r>/` per launch rank; launch rank 0's has results.json, a
// rank host's has only its launch manifest (launch.json) and its workers' logs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

// Each folder as given, except a launch's run folder (no results.json, no launch.json, but
// launch-rank-<r>/ inside), which becomes its launch ranks' folders in rank order.
[[nodiscard]] std::vector<std::string> expand_launch_folders(const std::vector<std::string>& folders);

// For a folder with a launch manifest and no results: a results document with no pairs whose
// header carries the manifest (`launch`, host, GPUs, worker logs), to record in the history.
// nullopt for any other folder. Throws one line when the manifest is malformed.
[[nodiscard]] std::optional<nlohmann::json> launch_only_document(const std::string& folder);

}  // namespace aisp
