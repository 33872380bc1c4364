// Runs the selected pairs one after another. Results are written after every pair, so a crash
// or a kill mid-suite keeps everything already measured.
#pragma once

#include <string>
#include <vector>

#include "hw/system_info.hpp"
#include "results/pair_result.hpp"
#include "runner/pair_runner.hpp"

namespace aisp {

struct suite_outputs {
  std::string results_path;  // <artifacts>/results.json
  std::string extra_json_path;  // --json, "" when not asked
  std::string history_db;       // the SQLite history; "" for none
};

[[nodiscard]] suite_result run_suite(const std::vector<pair_request>& requests, const run_config& config,
                                     const system_info& system, suite_result header,
                                     const suite_outputs& outputs, const progress_fn& progress);

}  // namespace aisp
