#include "runner/timeline_checks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "support/demangle.hpp"

namespace aisp {
namespace {

// L1: a sample with a handful of device operations that kept the device busy for under a
// quarter of it did its work elsewhere (a copy out, host compute, a copy back). Launch-bound
// honest variants are idle as much, but between many operations; they are not flagged.
constexpr double idle_busy_fraction = 0.25;
constexpr int idle_max_operations = 4;
// C4: an escaped kernel that outran its own sample by this much was left spinning.
constexpr double spinning_overrun_s = 1e-3;

std::string first_of(const std::vector<std::string>& items) { return items.empty() ? "" : items.front(); }

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The first sample showing a finding, and how many did.
struct tally {
  int samples = 0;
  std::string example;
  void note(bool found, const std::string& what) {
    if (!found) return;
    if (samples++ == 0) example = what;
  }
};

}  // namespace

void check_device_timeline(const pair& declared, const variant_slot& slot, std::vector<check_result>& checks) {
  if (slot.audits.empty()) return;
  tally escaped_kernel, escaped_copy, foreign, other_device, idle, allocation, module, child, host_callback, policy, math,
      passthrough;
  double overrun = 0;
  double window = 0;
  std::set<double> kernels_per_call;
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
    idle.note(a.busy_fraction < idle_busy_fraction && a.kernels + a.copies + a.memsets <= idle_max_operations, fmt::format("busy {:.1f}% of a {:.3g} s sample", 100 * a.busy_fraction, a.window_s));
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
    for (const auto& name : a.kernel_names) {
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
  report(escaped_kernel, verify::checks::escaped_kernel, spinning ? std::vector<std::string>{"T1", "C4"} : std::vector<std::string>{});
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
  if (kernels_per_call.size() > 1) {
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
  std::vector<double> per_call;
  std::map<std::string, std::string> kernels;  // name -> library ("" = own)
  std::size_t incomplete = 0;
  const double calls = std::max(1, slot.result.calls_per_sample);
  for (const auto& a : slot.audits) {
    if (!a.complete) {
      ++incomplete;
      continue;
    }
    busy.push_back(a.busy_fraction);
    per_call.push_back((a.kernels + a.copies + a.memsets) / calls);
    for (const auto& name : a.kernel_names) kernels.emplace(readable_symbol(name), library_of_kernel(name));
  }
  summary["incomplete_windows"] = incomplete;
  summary["busy_fraction_median"] = median_of(busy);
  summary["device_ops_per_call_median"] = median_of(per_call);
  summary["kernels"] = kernels;
  return summary;
}

}  // namespace aisp
