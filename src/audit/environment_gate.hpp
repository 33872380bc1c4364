// The environment gate: reads the host facts that can bend a measurement (CPU governor, swap,
// cgroup limits, CPU affinity and NUMA nodes, virtualization, the judge's priority) and turns
// them into findings with VALIDITY.md codes. It only reads; nothing is changed (principle 7).
// Profiles: `strict` makes warnings failures; `portable` (the default where virtualization is
// seen, as on the lent machines) reports them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

enum class environment_profile { strict, portable };

struct environment_finding {
  std::string code;      // E5, E6, E11, E12, M7, E3
  std::string severity;  // info | warn | fail
  std::string what;
};

struct environment_report {
  environment_profile profile = environment_profile::portable;
  nlohmann::json readings;
  std::vector<environment_finding> findings;
  [[nodiscard]] bool failed() const;
};

// `root` prefixes every /proc and /sys path, so tests can plant a fake machine.
// `requested` is "strict", "portable" or "auto" (portable when virtualization is seen).
[[nodiscard]] environment_report read_environment(const std::string& requested, const std::string& root = "");

// Adds what NVML saw on the chosen GPU at run start: virtualization (E12), a clock already held
// down (E7), the power limit (E8), other processes holding a compute context (S8).
void add_gpu_findings(environment_report& report, const nlohmann::json& telemetry);

[[nodiscard]] nlohmann::json to_json(const environment_report& report);

// T7: the variable that shows an external profiler or tracer injected into this process tree
// (CUDA_INJECTION64_PATH from ncu and nsys, an LD_PRELOAD of a CUPTI or Nsight library, ...),
// as "NAME=value"; "" when none. `environment` is environ's layout (null-terminated).
[[nodiscard]] std::string external_profiler_of(const char* const* environment);

// `bench verify --audit off` under compute-sanitizer or a debugger: the run checks outputs and
// claims no timing (the audit is recorded off), so an attached tool is reported, not fatal: T7
// becomes a warning. Every other run keeps T7 a failure.
void allow_tools_for_unaudited_checks(environment_report& report);

}  // namespace aisp
