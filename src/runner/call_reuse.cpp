#include "runner/call_reuse.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "runner/challenge_battery.hpp"
#include "runner/judge_checks.hpp"
#include "runner/sampling_rounds.hpp"
#include "runner/worker_protocol.hpp"
#include "stats/summary.hpp"

namespace aisp {
namespace {

// Both rules: slower by over `factor` where nothing can be reused, and by over `factor` more than
// the baseline's own ratio, counted up to its bound (Note [baseline reuse bound]).
bool reused(double candidate_ratio, double baseline_ratio, double factor, double baseline_bound) {
  return candidate_ratio > factor && candidate_ratio > factor * std::min(baseline_ratio, baseline_bound);
}

}  // namespace

// Note [input reuse]: Note [fresh calls] gives every timed call new inputs, so a result kept
// from an earlier call is stale. A pair whose meaning needs fixed inputs turns that off, and a
// red team's variant then hashed the inputs and copied the answer it kept: 45x faster on the
// host, 6.8x on an H200, every output check passed (2026-12-03). Its calls on fresh inputs cost
// the full work again. So each worker takes reuse_samples more samples, untimed in the
// verdict, with inputs refreshed before each as for any other pair (the outputs checks already
// meet such inputs: fresh-after-setup, fresh-after-warmup); an honest variant's time does not
// depend on whether its inputs changed since the last call (the L2 is flushed before a cold
// sample either way), so its ratio stays near the baseline's.
std::optional<std::string> input_reuse_problem(double candidate_ratio, double baseline_ratio) {
  if (!reused(candidate_ratio, baseline_ratio, input_reuse_factor, input_reuse_baseline_bound)) return std::nullopt;
  return fmt::format("on fresh inputs its calls took {:.2f}x its timed median (the baseline's {:.2f}x): its timed calls on the pair's "
                     "fixed inputs reused an earlier call's work",
                     candidate_ratio, baseline_ratio);
}

// Note [batch reuse]: a hot sample is a batch of calls after one input refresh and one output
// fill, and a graph sample replays calls captured back to back, so every call of a batch but
// the first meets what the one before it left: the same inputs, and outputs that already hold
// the answer. A variant that skips the work when nothing changed (an output sentinel still in
// place; in a capture, every call after the first) ran 3.6x faster in --mode hot for a red
// team (2026-12-03), every output check passed: the batch's outputs are right. One call a
// sample, on fresh inputs, costs the full work again, with no capture and no flush (as warm as
// a hot call: the fill leaves the inputs in cache). Each worker takes reuse_samples of them, the
// fixed cost of an empty window taken off (Note [batch reuse] in variant_session.cpp); an
// honest call costs about its share of a batch, so its ratio stays near the baseline's (the
// host sampler's hot batches are not flushed either, host_sampler.cpp).
std::optional<std::string> batch_reuse_problem(double candidate_ratio, double baseline_ratio, timing_mode mode, bool host) {
  if (!reused(candidate_ratio, baseline_ratio, batch_reuse_factor, host ? batch_reuse_host_lend : batch_reuse_baseline_bound))
    return std::nullopt;
  return fmt::format("one call a sample on fresh inputs took {:.2f}x its timed {} median (the baseline's {:.2f}x): its batched calls "
                     "reused the work of the batch's earlier calls",
                     candidate_ratio, timing_mode_name(mode), baseline_ratio);
}

std::optional<std::string> baseline_reuse_problem(double baseline_ratio, double bound, std::string_view where) {
  if (baseline_ratio <= bound) return std::nullopt;
  return fmt::format("{}: the baseline's calls took {:.2f}x its timed median, over {:.1f}x: it does more where nothing can be "
                     "reused (or reuses work in its timed calls), and would lend every candidate that much",
                     where, baseline_ratio, bound);
}

namespace {

double median_of(std::vector<double> values) { return values.empty() ? 0.0 : stats::summarize(values).median; }

// The median of reuse_samples more samples of a worker, requested with `how` (the sample
// request's own fields) and less the empty window the worker reports, over its timed median;
// 0 where either is missing. Each is its own request and each is verified against the baseline
// (a timed-call fingerprint on a secret seed): a red team's variants told these samples from
// the timed ones (the first fresh inputs after many cached calls; a fresh fill after a fresh
// fill in hot mode) and wrote junk there fast, 62x and 3.1x (2026-12-03). Now junk fails
// timed-call, and honest work costs its full time.
double extra_sample_ratio(variant_slot& slot, const run_config& config, const nlohmann::json& how) {
  std::vector<double> timed;
  for (const auto& s : slot.result.samples) timed.push_back(s.duration_s);
  if (timed.empty()) return 0;
  std::vector<double> extra, empty_windows;
  for (int i = 0; i < reuse_samples; ++i) {
    nlohmann::json request = {{"op", "sample"},       {"count", 1},          {"audit", false},
                              {"fresh_inputs", true}, {"input_base", secret_seed()}, {"fill_base", secret_seed()},
                              {"verify_chance", 1.0}, {"probes", timed_call_probes}};
    request.update(how);
    const auto reply = slot.worker->request(request, config.worker_timeout_s);
    for (const auto& s : reply.value("samples", nlohmann::json::array())) extra.push_back(protocol::sample_from_json(s).duration_s);
    if (reply.contains("empty_window_s")) empty_windows.push_back(reply.at("empty_window_s").get<double>());
    keep_verified_samples(slot, reply, true);
  }
  const double timed_median = median_of(timed);
  if (timed_median <= 0 || extra.empty()) return 0;
  return std::max(median_of(extra) - median_of(empty_windows), 0.0) / timed_median;
}

// Every non-twin slot's ratio, then each candidate judged against the baseline's.
template <typename Problem>
void judge_reuse(std::vector<variant_slot>& slots, const run_config& config, const nlohmann::json& how, const verify::check_kind& kind,
                 const char* passed_as, double baseline_bound, Problem problem, std::vector<check_result>& checks) {
  std::map<std::string, double> ratio;
  for (auto& slot : slots) {
    if (slot.role != slot_role::noise_twin) ratio[slot.label] = extra_sample_ratio(slot, config, how);
  }
  const double baseline = ratio.count("baseline") > 0 ? ratio["baseline"] : 0.0;
  if (baseline <= 0) return;
  const auto lends = baseline_reuse_problem(baseline, baseline_bound, passed_as);
  add_check(checks, kind, "baseline", !lends.has_value(),
            lends.value_or(fmt::format("{}: {:.2f}x its timed median (at most {:.1f}x)", passed_as, baseline, baseline_bound)));
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate || ratio[slot.label] <= 0) continue;
    const auto found = problem(ratio[slot.label], baseline);
    add_check(checks, kind, slot.label, !found.has_value(),
              found.value_or(fmt::format("{}: {:.2f}x its timed median (the baseline's {:.2f}x)", passed_as, ratio[slot.label], baseline)));
  }
}

}  // namespace

void check_input_reuse(std::vector<variant_slot>& slots, const pair& declared, const run_config& config, std::vector<check_result>& checks) {
  if (!declared.has_fixed_inputs() || config.verify_only) return;
  judge_reuse(slots, config, nlohmann::json::object(), verify::checks::input_reuse, "fresh inputs", input_reuse_baseline_bound,
              input_reuse_problem, checks);
}

void check_batch_reuse(std::vector<variant_slot>& slots, const pair& declared, const run_config& config, std::vector<check_result>& checks) {
  const timing_mode mode = config.mode;  // the pair's own (timing_for), set by run_pair
  if (mode == timing_mode::cold || config.verify_only || declared.gpus() > 1) return;
  judge_reuse(slots, config, {{"one_call", true}}, verify::checks::batch_reuse, "one call a sample", batch_reuse_baseline_bound,
              [mode, host = declared.where() == backend::host](double candidate, double baseline) {
                return batch_reuse_problem(candidate, baseline, mode, host);
              },
              checks);
}

}  // namespace aisp
