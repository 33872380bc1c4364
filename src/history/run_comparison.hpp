// `bench compare-runs A B`: for every target and variant in both runs, the ratio of B's median to
// A's with a bootstrap CI computed on the stored samples (not on the medians), and whether the
// change is real. Runs on different cards, drivers, modes or sizes are compared with a warning
// (`--strict` refuses them instead).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/history_store.hpp"
#include "stats/bootstrap.hpp"

namespace aisp {

struct variant_change {
  std::string target;
  std::string variant;
  double median_a_s = 0;
  double median_b_s = 0;
  stats::ratio_estimate time_ratio;  // B / A: below 1 is faster
  std::string verdict;               // faster | slower | unchanged (within the CI and 1%)
};

struct run_comparison {
  std::int64_t run_a = 0;
  std::int64_t run_b = 0;
  // Where the runs came from when they are not the history's (compare-runs of two folders): the
  // ids are then a throwaway history's and are not shown.
  std::string folder_a;
  std::string folder_b;
  std::vector<std::string> warnings;  // different card, driver, mode, launch gate or benchmark size
  std::vector<variant_change> changes;
};

// history_error when either run is unknown.
[[nodiscard]] run_comparison compare_runs(history_store& history, std::int64_t run_a, std::int64_t run_b);
[[nodiscard]] nlohmann::json to_json(const run_comparison& comparison);
[[nodiscard]] std::string render_text(const run_comparison& comparison);

}  // namespace aisp
