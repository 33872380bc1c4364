// One worker of a pair run: which variant it runs, under which label, and what it collected.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "runner/worker_process.hpp"
#include "stats/stopping_rule.hpp"

namespace aisp {

enum class slot_role { baseline, candidate, noise_twin };

struct variant_slot {
  std::string label;  // the name in the results: baseline, optimized, ..., baseline_twin
  const variant* runs = nullptr;
  slot_role role = slot_role::candidate;
  std::unique_ptr<worker_process> worker;
  variant_result result;
  stats::stopping_rule rule;
  stats::stop_reason stopped = stats::stop_reason::keep_going;
  double sample_wall_estimate_s = 0;
  int timed_calls_to_verify = 3;                     // random timed calls still to fingerprint
  std::vector<nlohmann::json> timed_fingerprints;    // verified timed calls (X1, X7)
  std::vector<double> faults_per_call;               // minor page faults per timed call, per visit
};

}  // namespace aisp
