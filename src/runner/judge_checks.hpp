// Building blocks of the judge's checks: record a check with its battery codes, read a
// verified call's outputs, compare them with the truth, and read the process probes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"
#include "results/pair_result.hpp"
#include "runner/run_config.hpp"
#include "runner/variant_slot.hpp"
#include "verify/battery.hpp"
#include "verify/compare.hpp"

namespace aisp {

using raw_outputs = std::map<std::string, std::vector<unsigned char>>;

struct verified_outputs {
  raw_outputs outputs;
  nlohmann::json report;  // the worker's call report (probes)
};

void add_check(std::vector<check_result>& checks, const verify::check_kind& kind, const std::string& variant,
               bool passed, const std::string& detail, std::vector<std::string> extra_codes = {});

// Asks the worker for a verified call and reads (then deletes) its output files.
// With `input_seed`, the worker first regenerates the inputs from it (Note [fresh calls]).
// With `fill_base`, the outputs get a random pattern drawn from it instead of the poison, as most
// timed calls do (Note [challenge calls filled as timed ones], runner/benchmark_challenges.cpp).
[[nodiscard]] verified_outputs verified_call(variant_slot& slot, const run_config& config, const std::string& prefix,
                                             std::optional<std::uint64_t> input_seed = std::nullopt,
                                             std::optional<std::uint64_t> fill_base = std::nullopt);

// Compares every output with `expected`; returns whether all passed. Failures are recorded
// under `kind` with the comparison's code and the failure-pattern codes first.
bool compare_outputs(const pair& declared, const workload& work, const raw_outputs& actual,
                     const std::map<std::string, std::vector<double>, std::less<>>& expected, const tolerance* forced,
                     const verify::check_kind& kind, const std::string& label, const std::string& variant,
                     std::vector<check_result>& checks);

// The probes around a verified call: mutation, subnormals, threads, allocations, stdout,
// environment, priority. Records only failures (and M2 when an input changed while outputs
// were left unwritten).
// A pair that declares threads (Note [declared threads]) has its other threads' CPU after run()
// returned recorded in the report, not failed.
void check_call_probes(const nlohmann::json& report, const std::string& variant, bool outputs_unwritten,
                       std::vector<check_result>& checks, bool runs_in_a_process, int declared_threads = 1);
// Note [worker sandbox]: the calls a worker's sandbox denied, threads a static initializer
// started before main(), and channel copies it made.
void check_sandbox(const variant_slot& slot, std::vector<check_result>& checks);
// What a load (setup() and warmup) did: touched outputs (L2) or inputs (X3), planted subnormals
// (O9), left an L2 window or set-aside (X4), asked cuBLAS for reduced precision (W2).
void check_setup(const pair& declared, const variant& runs, const nlohmann::json& load, const std::string& variant,
                 std::vector<check_result>& checks);

// X4 outside run(): what the worker found pinning L2 (`found`, "" for nothing) after `when`.
void check_access_policy(const pair& declared, const std::string& found, const std::string& when,
                         const std::string& variant, std::vector<check_result>& checks);

// W2 outside run() too: reduced-precision cuBLAS policies (`asked`) in a variant that declares
// fp32 math and no precision change.
void check_library_precision(const variant& runs, const std::vector<std::string>& asked, const std::string& when,
                             const std::string& variant_label, std::vector<check_result>& checks);

// Notes [floating-point environment], [armed timers]: the thread's mode and the process's timers
// a worker's reply names ("fp_control", "timers"), kept on its slot; then a variant whose thread
// ran in another mode than the baseline's, with no declared precision change, fails
// fp-environment (K4), and a worker with a timer armed fails armed-timers (S8).
void note_worker_state(variant_slot& slot, const nlohmann::json& reply);
void check_fp_environment(const std::vector<variant_slot>& slots, std::vector<check_result>& checks);
void check_armed_timers(const std::vector<variant_slot>& slots, std::vector<check_result>& checks);

// Raw outputs widened to fp64, keyed by output name: a variant's outputs as the truth for another.
[[nodiscard]] std::map<std::string, std::vector<double>, std::less<>> widen_outputs(const pair& declared,
                                                                                   const raw_outputs& outputs);

[[nodiscard]] bool same_bytes(const raw_outputs& a, const raw_outputs& b);

}  // namespace aisp
