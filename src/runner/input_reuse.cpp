#include "runner/input_reuse.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "runner/challenge_battery.hpp"
#include "runner/worker_protocol.hpp"
#include "stats/summary.hpp"

namespace aisp {

// Note [input reuse]: Note [fresh calls] gives every timed call new inputs, so a result kept
// from an earlier call is stale. A pair whose meaning needs fixed inputs turns that off, and a
// red team's variant then hashed the inputs and copied the answer it kept: 45x faster on the
// host, 6.8x on an H200, every output check passed (2026-12-03). Its calls on fresh inputs cost
// the full work again. So each worker takes input_reuse_samples more samples, untimed in the
// verdict, with inputs refreshed before each as for any other pair (the outputs checks already
// meet such inputs: fresh-after-setup, fresh-after-warmup); an honest variant's time does not
// depend on whether its inputs changed since the last call (the L2 is flushed before a cold
// sample either way), so its ratio stays near the baseline's.
std::optional<std::string> input_reuse_problem(double candidate_ratio, double baseline_ratio) {
  if (!(candidate_ratio > input_reuse_factor && candidate_ratio > input_reuse_factor * baseline_ratio)) return std::nullopt;
  return fmt::format("on fresh inputs its calls took {:.2f}x its timed median (the baseline's {:.2f}x): its timed calls on the pair's "
                     "fixed inputs reused an earlier call's work",
                     candidate_ratio, baseline_ratio);
}

namespace {

double median_of(std::vector<double> values) { return values.empty() ? 0.0 : stats::summarize(values).median; }

// The fresh-input median over the timed median of one worker; 0 where either is missing.
double fresh_ratio(variant_slot& slot, const run_config& config) {
  std::vector<double> timed;
  for (const auto& s : slot.result.samples) timed.push_back(s.duration_s);
  if (timed.empty()) return 0;
  const auto reply = slot.worker->request({{"op", "sample"},
                                           {"count", input_reuse_samples},
                                           {"audit", false},
                                           {"fresh_inputs", true},
                                           {"input_base", secret_seed()},
                                           {"fill_base", secret_seed()}},
                                          config.worker_timeout_s);
  std::vector<double> fresh;
  for (const auto& s : reply.value("samples", nlohmann::json::array())) fresh.push_back(protocol::sample_from_json(s).duration_s);
  const double timed_median = median_of(timed);
  return timed_median > 0 && !fresh.empty() ? median_of(fresh) / timed_median : 0.0;
}

}  // namespace

void check_input_reuse(std::vector<variant_slot>& slots, const pair& declared, const run_config& config, std::vector<check_result>& checks) {
  if (!declared.has_fixed_inputs() || config.verify_only) return;
  std::map<std::string, double> ratio;
  for (auto& slot : slots) {
    if (slot.role != slot_role::noise_twin) ratio[slot.label] = fresh_ratio(slot, config);
  }
  const double baseline = ratio.count("baseline") > 0 ? ratio["baseline"] : 0.0;
  if (baseline <= 0) return;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate || ratio[slot.label] <= 0) continue;
    const auto problem = input_reuse_problem(ratio[slot.label], baseline);
    add_check(checks, verify::checks::input_reuse, slot.label, !problem.has_value(),
              problem.value_or(fmt::format("fresh inputs: {:.2f}x its timed median (the baseline's {:.2f}x)", ratio[slot.label], baseline)));
  }
}

}  // namespace aisp
