#include "runner/math_unit_checks.hpp"

#include <set>
#include <string>

#include <fmt/format.h>

#include "audit/math_unit_evidence.hpp"
#include "runner/judge_checks.hpp"
#include "support/demangle.hpp"

namespace aisp {
namespace {

std::string names_of(const std::set<math_unit>& units) {
  std::string text;
  for (auto unit : units) text += (text.empty() ? "" : ", ") + std::string(math_unit_name(unit));
  return text.empty() ? "none" : text;
}

bool has_fp32_float_inputs(const pair& declared) {
  for (const auto& spec : declared.buffers()) {
    if (spec.role == buffer_role::input && (spec.type == dtype::f32 || spec.type == dtype::f64)) return true;
  }
  return false;
}

}  // namespace

void check_math_unit(const pair& declared, const variant_slot& slot, const run_config& config,
                     std::vector<check_result>& checks) {
  if (slot.role == slot_role::noise_twin || slot.audits.empty()) return;
  std::set<std::string> kernels;
  for (const auto& audit : slot.audits) kernels.insert(audit.kernel_names.begin(), audit.kernel_names.end());
  if (kernels.empty()) return;
  std::string why;
  const sass_math_table* table = sass_math_units_of(config.executable, why);
  std::set<math_unit> evidence;
  std::string unknown;
  for (const auto& name : kernels) {
    if (table != nullptr) {
      if (const auto found = table->find(name); found != table->end()) {
        evidence.insert(found->second.begin(), found->second.end());
        if (found->second.empty()) evidence.insert(math_unit::fp32_simt);
        continue;
      }
    }
    if (const auto unit = library_kernel_math_unit(name)) {
      evidence.insert(*unit);
    } else if (unknown.empty()) {
      unknown = readable_symbol(name);
    }
  }
  const variant& runs = *slot.runs;
  const auto declared_unit = std::string(math_unit_name(runs.math));
  if (runs.math != math_unit::fp32_simt && evidence.count(runs.math) == 0) {
    if (!unknown.empty()) {
      check_result note;
      note.check = std::string(verify::checks::math_unit.name);
      note.variant = slot.label;
      note.detail = fmt::format("declares {}; not verified: {} is a kernel whose unit is unknown{}", declared_unit, unknown,
                                table == nullptr ? " (" + why + ")" : "");
      checks.push_back(note);
      return;
    }
    add_check(checks, verify::checks::math_unit, slot.label, false,
              fmt::format("declares {} (its FLOP ceiling); its kernels' instructions show {}", declared_unit, names_of(evidence)));
    return;
  }
  std::set<math_unit> narrower;
  for (auto unit : evidence) {
    if (math_unit_mantissa_bits(unit) < math_unit_mantissa_bits(runs.math)) narrower.insert(unit);
  }
  if (!narrower.empty() && runs.precision.empty() && has_fp32_float_inputs(declared)) {
    add_check(checks, verify::checks::math_unit, slot.label, false,
              fmt::format("declares {} and no precision change, but its kernels run {} on fp32 inputs", declared_unit,
                          names_of(narrower)),
              {"W2"});
    return;
  }
  add_check(checks, verify::checks::math_unit, slot.label, true,
            fmt::format("declares {}; its kernels show {}", declared_unit, names_of(evidence)));
}

}  // namespace aisp
