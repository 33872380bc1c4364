// Note [audit tampering]: the device audit is one CUPTI subscriber in the worker, and a pair's
// code runs in the same process. The executable therefore defines the CUPTI entry points that
// switch recording off or take it over (activity disable, finalize, unsubscribe, callbacks
// disabled, buffer callbacks replaced, a second subscribe) and forwards each to libcupti after
// noting it, unless the audit itself made the call. A pair that reaches libcupti behind these
// (dlsym) still shows in the audited windows: events without device timestamps, or samples with
// no device activity (timeline_checks.cpp: check_audit_coverage).
#pragma once

#include <string>
#include <vector>

namespace aisp {

// While one lives on this thread, CUPTI calls are the audit's own and are not noted.
class audit_own_calls {
 public:
  audit_own_calls();
  ~audit_own_calls();
  audit_own_calls(const audit_own_calls&) = delete;
  audit_own_calls& operator=(const audit_own_calls&) = delete;
};

// The tampering calls made since the last take, each once ("cuptiActivityDisable(kind 10)").
[[nodiscard]] std::vector<std::string> take_audit_tampering();

}  // namespace aisp
