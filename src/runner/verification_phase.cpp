#include "runner/verification_phase.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "runner/worker_protocol.hpp"
#include "verify/compare.hpp"
#include "verify/reference_runner.hpp"
#include "verify/tolerance.hpp"

namespace aisp {
namespace {

std::vector<unsigned char> read_and_remove(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  AISP_EXPECTS(file.good(), "worker output file " + path + " is missing");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  file.close();
  std::remove(path.c_str());
  return bytes;
}

nlohmann::json dump_outputs(variant_slot& slot, const run_config& config, const std::string& prefix) {
  return slot.worker->request({{"op", "outputs"}, {"prefix", prefix}}, config.worker_timeout_s).at("files");
}

void record(std::vector<check_result>& checks, const std::string& check, const std::string& variant,
            const verify::comparison& outcome) {
  checks.push_back({check, outcome.reason_code, outcome.passed(), variant, outcome.describe()});
}

}  // namespace

void verify_against_reference(const pair& declared, std::vector<variant_slot>& slots,
                              const run_config& config, const std::string& pair_dir,
                              std::vector<check_result>& checks) {
  for (const auto& work : declared.workloads()) {
    if (work.kind == workload_kind::benchmark) continue;
    const auto reference = verify::compute_reference(declared, work, config.seed);
    const std::string check = fmt::format("reference:{} {}", workload_kind_name(work.kind), work.describe());
    for (auto& slot : slots) {
      if (slot.role == slot_role::noise_twin) continue;
      slot.worker->request({{"op", "load"}, {"workload", protocol::workload_to_json(work)}}, config.worker_timeout_s);
      const auto files = dump_outputs(slot, config, pair_dir + "/" + slot.label + ".validation");
      for (const auto& spec : declared.buffers()) {
        if (spec.role != buffer_role::output) continue;
        const auto actual = read_and_remove(files.at(spec.name).get<std::string>());
        const auto outcome = verify::compare_output(spec.name, spec.type, actual, reference.find(spec.name)->second,
                                                    verify::effective_tolerance(declared, spec.type));
        record(checks, check, slot.label, outcome);
      }
    }
  }
}

void verify_against_baseline(const pair& declared, std::vector<variant_slot>& slots,
                             const run_config& config, const std::string& pair_dir,
                             std::vector<check_result>& checks) {
  variant_slot* baseline = nullptr;
  for (auto& slot : slots) {
    if (slot.role == slot_role::baseline) baseline = &slot;
  }
  AISP_EXPECTS(baseline != nullptr, "no baseline slot");
  const auto baseline_files = dump_outputs(*baseline, config, pair_dir + "/baseline.benchmark");
  std::map<std::string, std::vector<double>> expected;
  for (const auto& spec : declared.buffers()) {
    if (spec.role != buffer_role::output) continue;
    expected[spec.name] = verify::widen(spec.type, read_and_remove(baseline_files.at(spec.name).get<std::string>()));
  }
  const std::string check = "baseline-match:benchmark " + declared.benchmark_workload().describe();
  for (auto& slot : slots) {
    if (slot.role != slot_role::candidate) continue;
    const auto files = dump_outputs(slot, config, pair_dir + "/" + slot.label + ".benchmark");
    for (const auto& spec : declared.buffers()) {
      if (spec.role != buffer_role::output) continue;
      const auto actual = read_and_remove(files.at(spec.name).get<std::string>());
      record(checks, check, slot.label,
             verify::compare_output(spec.name, spec.type, actual, expected[spec.name],
                                    verify::effective_tolerance(declared, spec.type)));
    }
  }
}

}  // namespace aisp
