#include "runner/timeline_checks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "stats/summary.hpp"
#include "support/demangle.hpp"

namespace aisp {
namespace {

// L1: a sample with a handful of device operations that kept the device busy for under a
// quarter of it did its work elsewhere (a copy out, host compute, a copy back). Launch-bound
// honest variants are idle as much, but between many operations; they are not flagged.
// A sample that spent most of its window in idle gaps longer than a launch's latency did host
// work between its launches, however many empty kernels it launched to look busy.
constexpr double idle_busy_fraction = 0.25;
constexpr int idle_max_operations = 4;
constexpr double idle_long_gap_fraction = 0.5;
// C7: a sample whose device was busy under half of it, in short gaps, was bound by launches.
constexpr double launch_bound_busy_fraction = 0.5;
// C4: an escaped kernel that outran its own sample by this much was left spinning.
constexpr double spinning_overrun_s = 1e-3;

std::string first_of(const std::vector<std::string>& items) { return items.empty() ? "" : items.front(); }

// The first sample showing a finding, and how many did.
struct tally {
  int samples = 0;
  std::string example;
  void note(bool found, const std::string& what) {
    if (!found) return;
    if (samples++ == 0) example = what;
  }
};

// K6: launches of each kernel per call, in one sample; a multi-GPU sample's keyed by rank, since
// the sample's own kernels are those of whichever rank was slowest (ch04:tensor_parallel_mlp's
// baseline failed K6 on 2 x H200 when the slowest rank changed, 2026-11-28).
std::map<std::string, double> launches_per_call(const window_audit& a, int calls) {
  std::map<std::string, double> per_call;
  if (a.rank_kernel_launches.empty()) {
    for (const auto& [name, launches] : a.kernel_launches) per_call[name] = static_cast<double>(launches) / calls;
    return per_call;
  }
  for (std::size_t r = 0; r < a.rank_kernel_launches.size(); ++r)
    for (const auto& [name, launches] : a.rank_kernel_launches[r])
      per_call[fmt::format("rank {}: {}", r, readable_symbol(name))] = static_cast<double>(launches) / calls;
  return per_call;
}

// K6: every sample must run the same kernels as often per call. A variant that tunes while it is
// timed (tries another tile, another cuBLAS algorithm) changes them between samples. A pair with
// data-dependent launches (Note [data-dependent launches]) must run the same kernels, each as
// often as its inputs ask. "" = none.
std::string kernel_choice_change(const variant_slot& slot, bool counts_vary) {
  const int calls = std::max(1, slot.result.calls_per_sample);
  const window_audit* first = nullptr;
  std::map<std::string, double> expected;
  int sample = 0;
  for (const auto& a : slot.audits) {
    ++sample;
    if (!a.complete) continue;
    auto seen = launches_per_call(a, calls);
    if (counts_vary) {
      for (auto& [name, rate] : seen) rate = 1;  // which kernels, not how often
    }
    if (first == nullptr) {
      first = &a;
      expected = std::move(seen);
      continue;
    }
    if (seen == expected) continue;
    for (const auto& [name, rate] : seen) {
      const auto before = expected.find(name);
      const double was = before != expected.end() ? before->second : 0;
      if (was != rate)
        return fmt::format("audited sample {}: {} ran {:g} times per call, {:g} in the first", sample, readable_symbol(name), rate, was);
    }
    for (const auto& [name, rate] : expected) {
      if (seen.count(name) == 0)
        return fmt::format("audited sample {}: {} no longer ran ({:g} times per call in the first)", sample, readable_symbol(name), rate);
    }
  }
  return "";
}

// D5: NCCL kernels per call in each audited sample against the count the variant declares for
// the workload (its bucket layout). NCCL launches one kernel per collective outside a group.
// "" = as declared, or nothing declared.
std::string collective_count_change(const pair& declared, const workload& work, const variant_slot& slot) {
  if (declared.gpus() <= 1 || !slot.runs->collectives) return "";
  const auto expected = static_cast<double>(slot.runs->collectives(work));
  const int calls = std::max(1, slot.result.calls_per_sample);
  int sample = 0;
  for (const auto& a : slot.audits) {
    ++sample;
    if (!a.complete) continue;
    int launches = 0;
    for (const auto& [name, count] : a.kernel_launches) launches += library_of_kernel(name) == "NCCL" ? count : 0;
    const double per_call = static_cast<double>(launches) / calls;
    if (per_call != expected)
      return fmt::format("the workload ({}) declares {:g} collectives a call; audited sample {} ran {:g} NCCL kernels a call",
                         work.describe(), expected, sample, per_call);
  }
  return "";
}

}  // namespace

void check_device_timeline(const pair& declared, const workload& work, const variant_slot& slot, std::vector<check_result>& checks) {
  if (slot.audits.empty()) return;
  tally escaped_kernel, escaped_copy, foreign, other_device, idle, allocation, module, child, host_callback, policy, math,
      passthrough, unified;
  double overrun = 0;
  double window = 0;
  std::set<double> kernels_per_call;
  std::size_t complete = 0;
  bool saw_nccl = false;
  for (const auto& a : slot.audits) {
    if (!a.complete) continue;
    escaped_kernel.note(!a.escaped_kernels.empty(), first_of(a.escaped_kernels));
    if (!a.escaped_kernels.empty() && a.overrun_s > overrun) {
      overrun = a.overrun_s;
      window = a.window_s;
    }
    escaped_copy.note(!a.escaped_copies.empty(), first_of(a.escaped_copies));
    foreign.note(!a.foreign.empty(), first_of(a.foreign));
    other_device.note(!a.other_devices.empty() || a.api.device_switches > 0,
                      a.other_devices.empty() ? "cudaSetDevice to another device" : first_of(a.other_devices));
    const bool few_operations = a.kernels + a.copies + a.memsets <= idle_max_operations;
    idle.note((a.busy_fraction < idle_busy_fraction && few_operations) || a.long_gap_fraction > idle_long_gap_fraction,
              fmt::format("busy {:.1f}% of a {:.3g} s sample, {:.1f}% of it in idle gaps over {} us", 100 * a.busy_fraction,
                          a.window_s, 100 * a.long_gap_fraction, long_gap_ns / 1000));
    const bool managed = !a.unified_memory.empty() || a.managed_allocations > 0;
    unified.note(managed && !declared.allows_managed_memory(),
                 a.unified_memory.empty() ? fmt::format("{} managed allocations in the worker", a.managed_allocations)
                                          : fmt::format("{} ({} bytes migrated)", first_of(a.unified_memory), a.unified_memory_bytes));
    allocation.note(a.api.allocations > 0, fmt::format("{} allocation calls", a.api.allocations));
    module.note(a.api.module_loads > 0 || a.jit_compiles > 0,
                fmt::format("{} module loads, {} JIT compiles", a.api.module_loads, a.jit_compiles));
    child.note(!a.device_launched.empty(), first_of(a.device_launched));
    host_callback.note(a.api.host_callbacks > 0, fmt::format("{} host functions enqueued", a.api.host_callbacks));
    const bool policy_seen = a.api.access_policy > 0 || !a.access_policy_kernels.empty();
    policy.note(policy_seen && !declared.allows_access_policy_window(),
                a.access_policy_kernels.empty() ? "cudaStreamSetAttribute(access policy window)" : first_of(a.access_policy_kernels));
    math.note(a.api.math_mode_changes > 0, fmt::format("{} cublasSetMathMode calls", a.api.math_mode_changes));
    std::string library_kernel;
    ++complete;
    for (const auto& name : a.kernel_names) {
      saw_nccl = saw_nccl || library_of_kernel(name) == "NCCL";
      if (library_kernel.empty() && !library_of_kernel(name).empty())
        library_kernel = library_of_kernel(name) + " kernel " + readable_symbol(name);
    }
    passthrough.note(!library_kernel.empty() && slot.runs->library.empty(), library_kernel);
    const int calls = std::max(1, slot.result.calls_per_sample);
    kernels_per_call.insert(static_cast<double>(a.kernels + a.copies + a.memsets) / calls);
  }
  const auto report = [&](const tally& t, const verify::check_kind& kind, std::vector<std::string> extra = {}) {
    if (t.samples == 0) return;
    add_check(checks, kind, slot.label, false, fmt::format("{} of {} samples: {}", t.samples, slot.audits.size(), t.example),
              std::move(extra));
  };
  const bool spinning = overrun > std::max(spinning_overrun_s, 10 * window);
  std::vector<std::string> escaped_codes = spinning ? std::vector<std::string>{"T1", "C4"} : std::vector<std::string>{};
  if (declared.gpus() > 1) escaped_codes.emplace_back("D6");  // an asynchronous collective (Note [ranks])
  report(escaped_kernel, verify::checks::escaped_kernel, escaped_codes);
  report(escaped_copy, verify::checks::escaped_copy);
  report(foreign, verify::checks::foreign_activity);
  report(other_device, verify::checks::undeclared_device);
  // L1 needs most samples idle: one idle sample is a hiccup, not a pattern.
  if (2 * idle.samples > static_cast<int>(slot.audits.size())) report(idle, verify::checks::device_idle);
  report(allocation, verify::checks::device_allocation);
  report(module, verify::checks::module_load);
  report(child, verify::checks::child_kernels);
  report(host_callback, verify::checks::host_callback);
  report(policy, verify::checks::access_policy);
  report(math, verify::checks::math_mode);
  report(passthrough, verify::checks::library_passthrough);
  report(unified, verify::checks::unified_memory);
  // D2 (Note [ranks]): a variant of a multi-GPU pair that says it communicates through NCCL, yet
  // no audited sample (each the slowest rank's window) ran an NCCL kernel, skipped the collective.
  if (declared.gpus() > 1 && slot.runs->library.find("NCCL") != std::string::npos && complete > 0 && !saw_nccl)
    add_check(checks, verify::checks::collective_missing, slot.label, false,
              fmt::format("none of {} audited samples ran an NCCL kernel", complete));
  if (auto changed = collective_count_change(declared, work, slot); !changed.empty())
    add_check(checks, verify::checks::collective_count, slot.label, false, changed);
  const bool counts_vary = !declared.data_dependent_launches_reason().empty();
  if (auto changed = kernel_choice_change(slot, counts_vary); !changed.empty()) {
    add_check(checks, verify::checks::kernel_choice, slot.label, false, changed);
  }
  if (kernels_per_call.size() > 1 && !counts_vary) {
    add_check(checks, verify::checks::kernel_count, slot.label, false,
              fmt::format("device operations per call varied from {} to {} across samples", *kernels_per_call.begin(),
                          *kernels_per_call.rbegin()));
  }
}

void check_audit_coverage(const variant_slot& slot, std::vector<check_result>& checks) {
  const auto fail = [&](const std::string& why) { add_check(checks, verify::checks::device_audit, slot.label, false, why); };
  if (slot.worker != nullptr && !slot.worker->audit_tampering().empty()) {
    std::string calls;
    for (const auto& call : slot.worker->audit_tampering()) calls += (calls.empty() ? "" : ", ") + call;
    fail("the worker's own code called CUPTI to switch the audit off or take it over: " + calls);
  }
  if (slot.audit_state != "on") {
    fail("the device audit is " + slot.audit_state + "; --audit off runs without it, recorded");
    return;
  }
  if (slot.audits.empty()) {
    fail("no audited sample came back from the worker");
    return;
  }
  std::size_t incomplete = 0;
  std::size_t silent = 0;
  for (const auto& a : slot.audits) {
    incomplete += !a.complete;
    silent += a.complete && a.kernels + a.copies + a.memsets == 0;
  }
  // A dropped buffer can cost a window now and then; a switched-off activity kind costs most.
  if (10 * incomplete > slot.audits.size())
    fail(fmt::format("{} of {} audited samples lacked device timestamps for their own events", incomplete,
                     slot.audits.size()));
  // Every call of a CUDA pair puts work on the device: one silent window is a blind one.
  if (silent > 0)
    fail(fmt::format("{} of {} audited samples recorded no kernel, copy or memset at all (an activity kind switched off?)",
                     silent, slot.audits.size() - incomplete));
}

nlohmann::json summarize_device_audit(const variant_slot& slot) {
  nlohmann::json summary = {{"state", slot.audit_state}, {"samples", slot.audits.size()}};
  if (slot.audits.empty()) return summary;
  std::vector<double> busy;
  std::vector<double> long_gaps;
  std::vector<double> per_call;
  int launch_bound = 0;
  int cooperative = 0;
  int launches = 0;
  std::uint64_t migrated = 0;
  std::map<std::string, std::string> kernels;  // name -> library ("" = own)
  std::size_t incomplete = 0;
  const double calls = std::max(1, slot.result.calls_per_sample);
  for (const auto& a : slot.audits) {
    if (!a.complete) {
      ++incomplete;
      continue;
    }
    busy.push_back(a.busy_fraction);
    long_gaps.push_back(a.long_gap_fraction);
    per_call.push_back((a.kernels + a.copies + a.memsets) / calls);
    launch_bound += a.busy_fraction < launch_bound_busy_fraction && a.long_gap_fraction <= idle_long_gap_fraction;
    cooperative += a.cooperative_launches;
    launches += a.kernels;
    migrated += a.unified_memory_bytes;
    for (const auto& name : a.kernel_names) kernels.emplace(readable_symbol(name), library_of_kernel(name));
  }
  summary["incomplete_windows"] = incomplete;
  summary["busy_fraction_median"] = stats::median_of(busy);
  summary["long_gap_fraction_median"] = stats::median_of(long_gaps);
  summary["device_ops_per_call_median"] = stats::median_of(per_call);
  // C7: host time (the window) against GPU time (its busy part); launch-bound when most samples
  // kept the device busy under half the time in short gaps. Recorded, not failed: a small
  // kernel is honestly launch-bound, and the reader should know the speedup is the host's.
  summary["launch_bound_samples"] = launch_bound;
  summary["launch_bound"] = 2 * launch_bound > static_cast<int>(busy.size());
  // C8: how the kernels were launched.
  summary["launches"] = {{"regular", launches - cooperative}, {"cooperative", cooperative}};
  summary["unified_memory_bytes"] = migrated;
  // C10's migration half needs CUPTI's unified-memory counters, which some platforms refuse; the
  // managed-allocation half does not.
  if (slot.init_reply.is_object()) summary["unified_memory_counters"] = slot.init_reply.value("unified_memory_counters", "off");
  summary["kernels"] = kernels;
  // D7, a multi-GPU pair: each rank's (pipeline stage's) median busy share of the slowest rank's
  // window; 1 - busy is that rank's bubble. The sample is the slowest rank's time from a common
  // start (D4), so a bubble cannot leave the time; this says where it was.
  if (!slot.rank_busy.empty()) {
    std::vector<double> per_rank;
    for (std::size_t r = 0; r < slot.rank_busy.front().size(); ++r) {
      std::vector<double> shares;
      for (const auto& sample : slot.rank_busy) {
        if (r < sample.size()) shares.push_back(sample[r]);
      }
      per_rank.push_back(stats::median_of(shares));
    }
    summary["ranks_busy_median"] = per_rank;
  }
  return summary;
}

}  // namespace aisp
