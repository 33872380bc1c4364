#include "runner/python_pair_checks.hpp"

#include <map>
#include <string>

#include "harness/plugin_loader.hpp"
#include "runner/judge_checks.hpp"
#include "verify/battery.hpp"

namespace aisp {

void waive_runtime_checks(const pair& declared, std::vector<check_result>& checks) {
  if (!is_python_pair(declared.target())) return;
  // Note [compilers in the sandbox]: recorded with the pair's reason, so a reader sees it.
  if (const auto reason = subprocess_reason(declared); !reason.empty())
    add_check(checks, verify::checks::sandbox, "baseline", true, "its workers may start processes: " + reason);
  // Why each cannot apply (docs/python_pairs.md): measured on the H100 with PyTorch 2.11, 2026-11-28.
  static const std::map<std::string, std::string> not_applicable = {
      {std::string(verify::checks::allocation_in_run.name), "the interpreter and PyTorch allocate in every call"},
      {std::string(verify::checks::page_faults.name), "the interpreter and PyTorch allocate in every call"},
      {std::string(verify::checks::library_passthrough.name), "every PyTorch variant is library calls: there is no custom kernel to pass off"},
      {std::string(verify::checks::math_mode.name), "PyTorch sets cuBLAS's math mode around each matmul (9 calls a call in an MLP block); "
                                       "the precision stays judged against the fp64 reference"},
  };
  for (auto& check : checks) {
    if (check.passed) continue;
    const auto why = not_applicable.find(check.check);
    if (why == not_applicable.end()) continue;
    check.passed = true;
    check.codes.clear();
    check.detail = "not applicable to a Python pair (" + why->second + "): " + check.detail;
  }
}

}  // namespace aisp
