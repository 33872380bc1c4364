// The quarantine list: targets whose checks failed under --verify-phase quarantine, with why.
// It persists next to the runs (artifacts/quarantine.json) until a clean run lifts the target.
#pragma once

#include <string>
#include <vector>

#include "results/pair_result.hpp"

namespace aisp {

struct quarantine_entry {
  std::string target;
  std::vector<std::string> codes;
  std::string reason;
  std::string run;       // the artifacts folder of the run that quarantined it
  std::string since;     // ISO 8601 UTC
};

// Reads the file; a missing file is an empty list, a malformed one throws contract_error.
[[nodiscard]] std::vector<quarantine_entry> load_quarantine(const std::string& path);
void save_quarantine(const std::string& path, const std::vector<quarantine_entry>& entries);
// Adds each flagged pair of `suite` (replacing an older entry) and lifts clean ones.
void update_quarantine(std::vector<quarantine_entry>& entries, const suite_result& suite);

}  // namespace aisp
