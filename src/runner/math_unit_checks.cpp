#include "runner/math_unit_checks.hpp"

#include <algorithm>
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

// A kernel's SASS, looked up in the aisp binary's table and then each plugin's; null where none
// lists it (a library's kernel, or no cuobjdump: `why` says which).
const kernel_sass* sass_of(const std::string& kernel, const run_config& config, std::string& why) {
  if (const auto* table = sass_math_units_of(config.executable, why)) {
    if (const auto found = table->find(kernel); found != table->end()) return &found->second;
  }
  for (const auto& plugin : config.plugins) {
    std::string plugin_why;
    if (const auto* table = sass_math_units_of(plugin, plugin_why)) {
      if (const auto found = table->find(kernel); found != table->end()) return &found->second;
    }
  }
  return nullptr;
}

std::set<std::string> kernels_of(const variant_slot& slot) {
  std::set<std::string> kernels;
  for (const auto& audit : slot.audits) kernels.insert(audit.kernel_names.begin(), audit.kernel_names.end());
  return kernels;
}

}  // namespace

void check_math_unit(const pair& declared, const variant_slot& slot, const run_config& config,
                     std::vector<check_result>& checks) {
  if (slot.role == slot_role::noise_twin || slot.audits.empty()) return;
  const auto kernels = kernels_of(slot);
  if (kernels.empty()) return;
  std::string why;
  bool listed = false;
  std::set<math_unit> evidence;
  std::string unknown;
  for (const auto& name : kernels) {
    if (const auto* sass = sass_of(name, config, why)) {
      listed = true;
      evidence.insert(sass->units.begin(), sass->units.end());
      if (sass->units.empty()) evidence.insert(math_unit::fp32_simt);
      continue;
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
                                !listed && !why.empty() ? " (" + why + ")" : "");
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

// Note [device fast math]
// The build-symmetry record (Note [plugin build symmetry]) reads a plugin's host compiler
// switches; nvcc's device-side --use_fast_math never reaches the host compiler, and red team
// four's GPU plugin built its candidate's unit with it: 3.05x "faster", every check passing (H200,
// 2026-12-04). The machine code shows it: --use_fast_math implies --ftz=true, and every FP32 add,
// multiply and fused multiply-add of such a kernel carries .FTZ, where an honest kernel's carry
// none, or only an intrinsic's own (__expf's scaling multiply; the lab's ex2.approx.ftz). So a
// candidate that declares no precision change, whose kernels include one built flush-to-zero
// (kernel_sass::flushes_subnormals) while none of the baseline's is, fails build-symmetry. A
// kernel no binary lists (a library's, or PyTorch's) is not judged.
void check_device_fast_math(const std::vector<variant_slot>& slots, const run_config& config, std::vector<check_result>& checks) {
  std::string why;
  const auto flushing = [&](const variant_slot& slot) {
    std::string found;
    for (const auto& name : kernels_of(slot)) {
      const auto* sass = sass_of(name, config, why);
      if (sass != nullptr && sass->flushes_subnormals() && found.empty())
        found = fmt::format("{} ({} of its {} FP32 adds and multiplies flush subnormals to zero)", readable_symbol(name),
                            sass->flushed_ops, sass->fp32_ops);
    }
    return found;
  };
  const auto baseline = std::find_if(slots.begin(), slots.end(), [](const variant_slot& s) { return s.role == slot_role::baseline; });
  if (baseline == slots.end() || baseline->audits.empty() || !flushing(*baseline).empty()) return;
  for (const auto& slot : slots) {
    if (slot.role != slot_role::candidate || !slot.runs->precision.empty() || slot.audits.empty()) continue;
    const auto kernel = flushing(slot);
    if (kernel.empty()) continue;
    add_check(checks, verify::checks::build_symmetry, slot.label, false,
              fmt::format("its kernel {} was built flush-to-zero (nvcc --use_fast_math or --ftz=true); none of the baseline's was, "
                          "and it declares no precision change",
                          kernel));
  }
}

}  // namespace aisp
