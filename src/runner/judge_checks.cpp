#include "runner/judge_checks.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "aisp/check.hpp"
#include "harness/fp_mode_sampler.hpp"
#include "verify/failure_patterns.hpp"
#include "verify/tolerance.hpp"

namespace aisp {
namespace {

// One read of the whole file: outputs of hundreds of MiB at the benchmark size (an
// istreambuf_iterator copy went byte by byte).
std::vector<unsigned char> read_and_remove(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  AISP_EXPECTS(file.good(), "worker output file " + path + " is missing");
  const auto size = static_cast<std::size_t>(file.tellg());
  std::vector<unsigned char> bytes(size);
  file.seekg(0);
  file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  AISP_EXPECTS(static_cast<std::size_t>(file.gcount()) == size, "worker output file " + path + " could not be read whole");
  file.close();
  std::remove(path.c_str());
  return bytes;
}

}  // namespace

void add_check(std::vector<check_result>& checks, const verify::check_kind& kind, const std::string& variant,
               bool passed, const std::string& detail, std::vector<std::string> extra_codes) {
  check_result result;
  result.check = std::string(kind.name);
  result.passed = passed;
  result.variant = variant;
  result.detail = detail;
  if (!passed) {
    result.codes = std::move(extra_codes);
    for (auto code : kind.codes) {
      if (std::find(result.codes.begin(), result.codes.end(), code) == result.codes.end()) result.codes.emplace_back(code);
    }
  }
  checks.push_back(std::move(result));
}

verified_outputs verified_call(variant_slot& slot, const run_config& config, const std::string& prefix,
                               std::optional<std::uint64_t> input_seed, std::optional<std::uint64_t> fill_base) {
  verified_outputs result;
  nlohmann::json request = {{"op", "outputs"}, {"prefix", prefix}};
  if (input_seed) request["input_seed"] = *input_seed;
  if (fill_base) request["fill_base"] = *fill_base;
  result.report = slot.worker->request(request, config.worker_timeout_s);
  for (const auto& [name, path] : result.report.at("files").items()) {
    result.outputs[name] = read_and_remove(path.get<std::string>());
  }
  return result;
}

bool compare_outputs(const pair& declared, const workload& work, const raw_outputs& actual,
                     const std::map<std::string, std::vector<double>, std::less<>>& expected, const tolerance* forced,
                     const verify::check_kind& kind, const std::string& label, const std::string& variant,
                     std::vector<check_result>& checks) {
  bool all_passed = true;
  for (const auto& spec : declared.buffers()) {
    if (spec.role != buffer_role::output) continue;
    const auto tol = forced != nullptr ? *forced : verify::effective_tolerance(declared, spec.type, variant);
    const auto& raw = actual.at(spec.name);
    const auto& truth = expected.find(spec.name)->second;
    const auto outcome = verify::compare_output(spec.name, spec.type, raw, truth, tol);
    std::vector<std::string> codes;
    if (!outcome.passed()) {
      codes.push_back(outcome.reason_code);
      for (auto& c : verify::failure_pattern_codes(spec, work, raw, truth, tol, outcome, declared.gpus())) codes.push_back(std::move(c));
    }
    add_check(checks, kind, variant, outcome.passed(), label + ": " + outcome.describe(), std::move(codes));
    all_passed = all_passed && outcome.passed();
  }
  return all_passed;
}

// Note [late writes]: a host worker's other threads sit blocked once run() returned, using no
// CPU at all; a helper woken to finish a call uses its wake-up and its share of the work.
constexpr double late_helper_cpu_s = 20e-6;

void check_call_probes(const nlohmann::json& report, const std::string& variant, bool outputs_unwritten,
                       std::vector<check_result>& checks, bool runs_in_a_process, int declared_threads) {
  const auto& before = report.at("before");
  const auto& after = report.at("after");
  const auto mutated = report.at("mutated_inputs").get<std::vector<std::string>>();
  if (!mutated.empty()) {
    std::string names;
    for (const auto& m : mutated) names += (names.empty() ? "" : ", ") + m;
    std::vector<std::string> extra;
    if (outputs_unwritten) extra.push_back("M2");  // written through an input instead of the output
    add_check(checks, verify::checks::input_mutation, variant, false, "run() changed input " + names, extra);
  }
  if (const auto launch = report.value("launch_error", std::string()); !launch.empty())
    add_check(checks, verify::checks::launch_error, variant, false, "run() left a failed launch unchecked: " + launch);
  if (const auto subnormals = report.at("subnormal_inputs").get<std::size_t>(); subnormals > 0)
    add_check(checks, verify::checks::subnormal_inputs, variant, false,
              fmt::format("{} subnormal input values (the harness never draws them)", subnormals));
  const auto delta = [&](const char* key) { return after.value(key, 0LL) - before.value(key, 0LL); };
  if (delta("threads") > 0)
    add_check(checks, verify::checks::background_thread, variant, false,
              fmt::format("{} more threads after run() than before", delta("threads")));
  // A process alive as run() returns works outside the timed span (where processes may start).
  // An executable pair's variant is a process started in setup (Note [executable pairs]): only
  // one started by the call counts.
  if (const auto children = runs_in_a_process ? delta("children") : after.value("children", 0LL); children > 0)
    add_check(checks, verify::checks::child_process, variant, false,
              fmt::format("{} process{} started by the variant still alive after run() returned", children, children == 1 ? "" : "es"));
  // Note [allocation counter]: each family counted on its own.
  static constexpr std::array<std::pair<const char*, const char*>, 3> allocators{
      {{"allocations", "operator new calls"},
       {"c_allocations", "malloc-family calls (malloc, calloc, realloc, posix_memalign, ...)"},
       {"mappings", "mmap calls"}}};
  const auto caller = report.value("allocation_caller", std::string());
  for (const auto& [key, what] : allocators) {
    if (delta(key) > 0)
      add_check(checks, verify::checks::allocation_in_run, variant, false,
                fmt::format("run() made {} {}{}{}", delta(key), what,
                            std::string_view(key) != "allocations" && !caller.empty() ? ", the latest from " + caller : "",
                            // Note [declared threads]: a thread started in run() allocates its state (a user's std::thread).
                            declared_threads > 1 ? "; a declared pool's threads are started in setup(): a thread made in run() "
                                                   "allocates"
                                                 : ""));
  }
  if (const auto late = report.value("late_outputs", std::vector<std::string>{}); !late.empty())
    add_check(checks, verify::checks::late_write, variant, false,
              fmt::format("{} changed after run() returned (and, on a GPU, the device synchronized)", fmt::join(late, ", ")));
  // A host pair's other threads used CPU after run() returned: work finished behind its back
  // (a declared pool's threads spin before they sleep: Note [declared threads]).
  if (const double helper_s = report.value("helper_cpu_after_return_s", 0.0); declared_threads <= 1 && helper_s > late_helper_cpu_s)
    add_check(checks, verify::checks::late_write, variant, false,
              fmt::format("other threads used {:.0f} us of CPU after run() returned", helper_s * 1e6));
  if (delta("stdout_bytes") > 0)
    add_check(checks, verify::checks::stdout_write, variant, false,
              fmt::format("run() wrote {} bytes to stdout", delta("stdout_bytes")));
  if (before.at("environment_hash") != after.at("environment_hash"))
    add_check(checks, verify::checks::environment_change, variant, false, "run() changed the process environment");
  // Issue 16: a re-pinned or re-scheduled worker (a helper process cannot be started: Note [worker sandbox]).
  if (after.value("scheduler", 0) != report.value("initial_scheduler", after.value("scheduler", 0)))
    add_check(checks, verify::checks::scheduling_change, variant, false,
              fmt::format("scheduling policy {} after run(), {} when the worker started", after.value("scheduler", 0),
                          report.value("initial_scheduler", 0)));
  if (after.value("affinity_hash", std::uint64_t{0}) != report.value("initial_affinity_hash", after.value("affinity_hash", std::uint64_t{0})))
    add_check(checks, verify::checks::scheduling_change, variant, false, "the worker's CPU affinity changed since it started");
  const int initial = report.value("initial_priority", before.at("priority").get<int>());
  if (delta("priority") != 0 || after.at("priority").get<int>() != initial)
    add_check(checks, verify::checks::priority_change, variant, false,
              fmt::format("nice value {} after run(), {} when the worker started", after.at("priority").get<int>(), initial));
}

void check_sandbox(const variant_slot& slot, std::vector<check_result>& checks) {
  const auto started = slot.init_reply.is_object() ? slot.init_reply : nlohmann::json::object();  // null: init failed
  std::string what;
  std::vector<std::string> codes;
  for (const auto& denied : slot.worker->sandbox_denials()) {
    what += fmt::format("{}{} x{}", what.empty() ? "" : ", ", denied.value("what", "?"), denied.value("count", 0));
    codes.push_back(denied.value("code", "V1"));
  }
  if (const int copies = started.value("stray_channel_copies", 0); copies > 0) {
    what += fmt::format("{}{} copies of the judge's channel made before main()", what.empty() ? "" : ", ", copies);
    codes.emplace_back("V1");
  }
  if (!what.empty()) add_check(checks, verify::checks::sandbox, slot.label, false, "the sandbox denied: " + what, codes);
  // The sandbox fails closed, as the audit does: an unconfined worker could fork, signal or write
  // the judge's channel unseen.
  if (const auto state = started.value("sandbox", std::string("on")); state != "on")
    add_check(checks, verify::checks::sandbox_kill, slot.label, false, "the worker ran without its sandbox (" + state + ")");
  // Note [two clocks]: a replaced clock reports what it likes, in either direction.
  if (const auto clocks = started.value("interposed_clocks", std::vector<std::string>{}); !clocks.empty())
    add_check(checks, verify::checks::wall_clock, slot.label, false,
              fmt::format("the worker's clocks are not the system's: {}", fmt::join(clocks, ", ")));
  if (const auto threads = started.value("threads_at_start", std::size_t{1}); threads > 1)
    add_check(checks, verify::checks::background_thread, slot.label, false,
              fmt::format("{} threads ran before main() (a static initializer started them)", threads - 1));
}

void check_setup(const pair& declared, const variant& runs, const nlohmann::json& load, const std::string& variant,
                 std::vector<check_result>& checks) {
  check_access_policy(declared, load.value("access_policy", std::string()), "setup()", variant, checks);
  check_library_precision(runs, load.value("library_precision", std::vector<std::string>{}), "setup() or warmup", variant, checks);
  if (const auto touched = load.at("setup_wrote_outputs").get<std::size_t>(); touched > 0)
    add_check(checks, verify::checks::setup_touches_outputs, variant, false,
              fmt::format("setup() wrote {} output elements (outputs were poisoned before it)", touched));
  if (const auto subnormals = load.value("setup_subnormal_inputs", std::size_t{0}); subnormals > 0)
    add_check(checks, verify::checks::subnormal_inputs, variant, false,
              fmt::format("setup() left {} subnormal input values (the harness never draws them)", subnormals));
  const auto mutated = load.at("setup_mutated_inputs").get<std::vector<std::string>>();
  if (!mutated.empty())
    add_check(checks, verify::checks::input_mutation, variant, false, "setup() changed input " + mutated.front());
}

void check_access_policy(const pair& declared, const std::string& found, const std::string& when,
                         const std::string& variant, std::vector<check_result>& checks) {
  if (found.empty() || declared.allows_access_policy_window()) return;
  add_check(checks, verify::checks::access_policy, variant, false,
            fmt::format("{} after {}; the pair does not declare allow_access_policy_window()", found, when));
}

void check_library_precision(const variant& runs, const std::vector<std::string>& asked, const std::string& when,
                             const std::string& variant_label, std::vector<check_result>& checks) {
  if (asked.empty() || runs.math != math_unit::fp32_simt || !runs.precision.empty()) return;
  add_check(checks, verify::checks::library_precision, variant_label, false,
            fmt::format("{} in {}; the variant declares fp32 math and no precision change", asked.front(), when));
}

// Note [floating-point environment]
// K4 reads how each unit was compiled; a variant can also switch its thread's floating-point mode
// at run time, as -ffast-math's start-up code does: flush-to-zero and denormals-are-zero in
// MXCSR (_mm_setcsr, torch.set_flush_denormal). The same loop then skips the subnormal slow path
// and its outputs move by ~1e-39: 1.88x "faster" in a C++ plugin and 1.18x in a Python pair with
// every check passed (red team, round five, 2026-12-04). The worker reads its thread's mode after
// setup() and after every visit of samples (harness/process_probes.hpp); a variant that ran in a
// mode the baseline's worker never did, and declares no precision change, fails. A mode set and
// restored inside one call of run() is not seen (as fast intrinsics in the code are not), nor an
// executable pair's program's (another process).
void note_worker_state(variant_slot& slot, const nlohmann::json& reply) {
  if (const auto timers = reply.find("timers"); timers != reply.end() && timers->is_number_integer())
    slot.armed_timers = std::max(slot.armed_timers, timers->get<int>());
  if (const auto state = reply.find("state"); state != reply.end() && state->is_object()) {  // Note [worker state]
    if (std::find(slot.worker_states.begin(), slot.worker_states.end(), *state) == slot.worker_states.end())
      slot.worker_states.push_back(*state);
    slot.last_worker_state = *state;
  }
  const auto keep_mode = [&slot](unsigned value) {
    if (std::find(slot.fp_modes.begin(), slot.fp_modes.end(), value) == slot.fp_modes.end()) slot.fp_modes.push_back(value);
  };
  if (const auto sampled = reply.find("fp_sampled"); sampled != reply.end() && sampled->is_object()) {  // Note [sampled fp mode]
    for (const auto& value : sampled->value("modes", std::vector<unsigned>{})) keep_mode(value);
    slot.fp_sampled.taken += sampled->value("taken", std::uint64_t{0});
    slot.fp_sampled.armed_windows += sampled->value("armed_windows", std::uint64_t{0});
  }
  const auto mode = reply.find("fp_control");
  if (mode == reply.end() || !mode->is_number_unsigned()) return;
  keep_mode(mode->get<unsigned>());
}

// Note [armed timers]
// A plugin's static initializer runs in every worker, and a Python pair file's module code in
// every worker that loads it: one armed a CPU-time timer whose SIGPROF handler burned 2 ms of
// each 4 on the timed thread, and only the candidate's setup() disarmed it. The baseline and its
// twin were taxed alike (a tight noise floor), in timed and truth calls alike (timed-slower
// passed), on the timed thread (no helper's CPU): 2.15x and 2.42x "faster" with every check
// passed (red team, round five, 2026-12-04). aisp arms no timer in a worker, so a worker that
// holds one after setup() or a visit (an interval timer armed, a POSIX timer created) fails:
// its samples were interrupted by a handler aisp did not write.
void check_armed_timers(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  for (const auto& slot : slots) {
    if (slot.armed_timers == 0) continue;
    add_check(checks, verify::checks::armed_timers, slot.label, false,
              fmt::format("its worker held {} armed timer{} (setitimer or timer_create) after setup() or a visit: a signal handler "
                          "ran on the timed thread between the calls' work",
                          slot.armed_timers, slot.armed_timers == 1 ? "" : "s"));
  }
}

namespace {

std::string describe_fp_mode(unsigned mode) {
  constexpr unsigned flush_to_zero = 1u << 15;
  constexpr unsigned denormals_are_zero = 1u << 6;
  static constexpr const char* rounding[] = {"nearest", "down", "up", "toward zero"};
  return fmt::format("MXCSR {:#06x}: flush-to-zero {}, denormals-are-zero {}, rounding {}", mode, (mode & flush_to_zero) ? "on" : "off",
                     (mode & denormals_are_zero) ? "on" : "off", rounding[(mode >> 13) & 3u]);
}

}  // namespace

void check_fp_environment(const std::vector<variant_slot>& slots, std::vector<check_result>& checks) {
  // Note [sampled fp mode]: a thread that took none of the signals set inside its timed
  // windows kept them out (ignored them, or replaced their handler).
  for (const auto& slot : slots) {
    if (slot.fp_sampled.taken > 0 || slot.fp_sampled.armed_windows < fp_mode_unsampled_windows) continue;
    add_check(checks, verify::checks::fp_environment, slot.label, false,
              fmt::format("the harness's floating-point mode sampler set {} signals inside the timed calls and none arrived: they "
                          "were kept out of them (ignored, or their handler replaced)",
                          slot.fp_sampled.armed_windows));
  }
  const auto baseline = std::find_if(slots.begin(), slots.end(), [](const variant_slot& s) { return s.role == slot_role::baseline; });
  if (baseline == slots.end() || baseline->fp_modes.empty()) return;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate || !slot.runs->precision.empty() || slot.fp_modes.empty()) continue;
    const auto other = std::find_if(slot.fp_modes.begin(), slot.fp_modes.end(), [&](unsigned mode) {
      return std::find(baseline->fp_modes.begin(), baseline->fp_modes.end(), mode) == baseline->fp_modes.end();
    });
    add_check(checks, verify::checks::fp_environment, slot.label, other == slot.fp_modes.end(),
              other == slot.fp_modes.end()
                  ? "the baseline's floating-point mode throughout"
                  : fmt::format("its thread ran in {}, the baseline's in {}; the variant declares no precision change", describe_fp_mode(*other),
                                describe_fp_mode(baseline->fp_modes.front())));
  }
}

std::map<std::string, std::vector<double>, std::less<>> widen_outputs(const pair& declared, const raw_outputs& outputs) {
  std::map<std::string, std::vector<double>, std::less<>> values;
  for (const auto& spec : declared.buffers()) {
    if (spec.role == buffer_role::output) values[spec.name] = verify::widen(spec.type, outputs.at(spec.name));
  }
  return values;
}

bool same_bytes(const raw_outputs& a, const raw_outputs& b) { return a == b; }

}  // namespace aisp
