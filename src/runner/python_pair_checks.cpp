#include "runner/python_pair_checks.hpp"

#include <string>

#include "harness/plugin_loader.hpp"
#include "runner/judge_checks.hpp"
#include "verify/battery.hpp"

namespace aisp {

void waive_runtime_checks(const pair& declared, std::vector<check_result>& checks) {
  if (!is_python_pair(declared.target())) return;
  // Note [compilers in the sandbox]: recorded with the pair's reason, so a reader sees it.
  if (const auto reason = subprocess_reason(declared); !reason.empty())
    add_check(checks, verify::checks::sandbox, "pair", true, "its workers may start processes: " + reason);
  for (auto& check : checks) {
    if (check.passed) continue;
    if (check.check != verify::checks::allocation_in_run.name && check.check != verify::checks::page_faults.name) continue;
    check.passed = true;
    check.codes.clear();
    check.detail = "not applicable to a Python pair (the interpreter and PyTorch allocate in every call): " + check.detail;
  }
}

}  // namespace aisp
