// Work reused from call to call where the timing lets calls see the same data. Note [input
// reuse]: a pair that fixes its inputs gets the same inputs in every timed call, so a variant
// could keep its answer from call to call; a few more samples of every worker with fresh inputs
// show it, the time of a call that cannot reuse anything. Note [batch reuse]: hot and graph
// modes time a batch of calls on one fill, so a variant could do the work once a batch; a few
// more samples of one call each, on fresh inputs, show it the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aisp/pair.hpp"
#include "harness/timing.hpp"
#include "results/pair_result.hpp"
#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

// A candidate slower by over the factor where it cannot reuse (fresh inputs; one call) than in
// its timed samples, and by over the factor more than the baseline's own ratio, reused work. A
// batch's calls meet the same inputs again, and a host call of microseconds gains from that
// honestly (its branches learn them): an unrolled loop of sines read 1.34-1.50x one call at a
// time on fresh inputs, its baseline 1.12-1.21x (2026-12-03), hence 2 there.
inline constexpr double input_reuse_factor = 1.5;
inline constexpr double batch_reuse_factor = 2.0;
inline constexpr int reuse_samples = 9;
// Note [baseline reuse bound]: the most the baseline's own ratio may be, and lend a candidate.
// A red team's baseline burned 400x its call on inputs that changed, so its fresh-input ratio
// (394x) let a candidate that kept its answer (175x) pass input-reuse, 136x "faster" (host,
// 2026-12-04). Honest baselines: input reuse 0.7-1.0x (the inputs change, the flushed work does
// not); batch reuse up to 2.85x (ch01:batched_launches, whose one-call samples pay every tiny
// launch; H200, 2026-12-03).
inline constexpr double input_reuse_baseline_bound = 2.5;
inline constexpr double batch_reuse_baseline_bound = 4.0;
// On the host no launch costs a one-call sample more than its share of a batch: honest baselines
// read 1.12-1.21x there, and a red team's baseline that redid its work three times on inputs that
// changed since its last call read 2.0x, which lent its candidate (recomputing a sixth of a hot
// batch's calls) a 5.2-6.3x "faster" with a ratio of 2.75-3.46x (round six, 2026-12-04). A host
// baseline lends at most this (it still fails only over batch_reuse_baseline_bound).
inline constexpr double batch_reuse_host_lend = 1.25;

// The rules alone: a failure's detail, or nullopt. Ratios are the extra samples' median over the
// timed median; the baseline's counts up to its bound.
[[nodiscard]] std::optional<std::string> input_reuse_problem(double candidate_ratio, double baseline_ratio);
[[nodiscard]] std::optional<std::string> batch_reuse_problem(double candidate_ratio, double baseline_ratio, timing_mode mode,
                                                             bool host = false);
// The baseline's own ratio over its bound: it does more where nothing can be reused, or reused work itself.
[[nodiscard]] std::optional<std::string> baseline_reuse_problem(double baseline_ratio, double bound, std::string_view where);

// For a pair with fixed inputs (and not `bench verify`): the fresh-input samples of every
// non-twin slot, and the check of each candidate.
void check_input_reuse(std::vector<variant_slot>& slots, const pair& declared, const run_config& config, std::vector<check_result>& checks);

// For a pair timed in hot or graph mode (one GPU, not `bench verify`): one-call samples of every
// non-twin slot, and the check of each candidate.
void check_batch_reuse(std::vector<variant_slot>& slots, const pair& declared, const run_config& config, std::vector<check_result>& checks);

}  // namespace aisp
