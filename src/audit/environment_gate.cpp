#include "audit/environment_gate.hpp"

#include <sched.h>
#include <unistd.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "aisp/check.hpp"

namespace aisp {
namespace {

std::string first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

std::set<std::string> governors(const std::string& root) {
  std::set<std::string> found;
  std::error_code ignored;
  for (const auto& cpu : std::filesystem::directory_iterator(root + "/sys/devices/system/cpu", ignored)) {
    const auto name = cpu.path().filename().string();
    if (!name.starts_with("cpu") || name.size() < 4 || !std::isdigit(static_cast<unsigned char>(name[3]))) continue;
    const auto governor = first_line(cpu.path().string() + "/cpufreq/scaling_governor");
    if (!governor.empty()) found.insert(governor);
  }
  return found;
}

// Active swap devices: /proc/swaps lines after the header.
int swap_devices(const std::string& root) {
  std::ifstream swaps(root + "/proc/swaps");
  std::string line;
  int count = -1;
  while (std::getline(swaps, line)) count += !line.empty();
  return std::max(count, 0);
}

int numa_nodes(const std::string& root) {
  int count = 0;
  std::error_code ignored;
  for (const auto& node : std::filesystem::directory_iterator(root + "/sys/devices/system/node", ignored)) {
    const auto name = node.path().filename().string();
    count += name.starts_with("node") && name.size() > 4 && std::isdigit(static_cast<unsigned char>(name[4]));
  }
  return count;
}

bool hypervisor_flag(const std::string& root) {
  std::ifstream cpuinfo(root + "/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("flags")) return line.find(" hypervisor") != std::string::npos;
  }
  return false;
}

}  // namespace

bool environment_report::failed() const {
  for (const auto& f : findings) {
    if (f.severity == "fail") return true;
  }
  return false;
}

environment_report read_environment(const std::string& requested, const std::string& root) {
  AISP_EXPECTS(requested == "strict" || requested == "portable" || requested == "auto",
               "--env-profile must be strict, portable or auto, not '" + requested + "'");
  environment_report report;
  const auto govs = governors(root);
  const int swaps = swap_devices(root);
  const std::string cpu_max = first_line(root + "/sys/fs/cgroup/cpu.max");
  const std::string memory_max = first_line(root + "/sys/fs/cgroup/memory.max");
  const bool virtualized = hypervisor_flag(root);
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  const int usable_cpus = sched_getaffinity(0, sizeof affinity, &affinity) == 0 ? CPU_COUNT(&affinity) : 0;
  const int nice = getpriority(PRIO_PROCESS, 0);
  report.profile = requested == "strict" || (requested == "auto" && !virtualized) ? environment_profile::strict
                                                                                   : environment_profile::portable;
  report.readings = {{"cpu_governors", govs},      {"swap_devices", swaps},   {"cgroup_cpu_max", cpu_max},
                     {"cgroup_memory_max", memory_max}, {"hypervisor_flag", virtualized},
                     {"usable_cpus", usable_cpus}, {"numa_nodes", numa_nodes(root)}, {"nice", nice}};
  const std::string warn = report.profile == environment_profile::strict ? "fail" : "warn";
  const auto add = [&report](std::string code, std::string severity, std::string what) {
    report.findings.push_back({std::move(code), std::move(severity), std::move(what)});
  };
  for (const auto& g : govs) {
    if (g != "performance") add("E6", warn, "CPU frequency governor '" + g + "' (not performance): host-side timing varies");
  }
  if (govs.empty()) add("E6", "info", "no CPU frequency governor exposed (common in VMs)");
  if (swaps > 0) add("M7", warn, fmt::format("{} swap device(s) active: host buffers may be paged out", swaps));
  if (!cpu_max.empty() && !cpu_max.starts_with("max")) add("E11", warn, "cgroup cpu.max limits this run: " + cpu_max);
  if (!memory_max.empty() && memory_max != "max") add("E11", "info", "cgroup memory.max: " + memory_max);
  if (virtualized) add("E12", warn, "the CPU reports a hypervisor: this is a virtual machine");
  if (nice != 0) add("E3", warn, fmt::format("the judge runs at nice {}; workers inherit it", nice));
  add("E5", "info", fmt::format("{} usable CPUs across {} NUMA node(s); all workers share this affinity", usable_cpus,
                                numa_nodes(root)));
  // T7 fails in every profile: the profiler's instrumentation is in every sample, and its CUPTI
  // subscription is the one the device audit needs.
  if (const auto profiler = external_profiler_of(environ); !profiler.empty())
    add("T7", "fail", "an external profiler is attached (" + profiler + "): its overhead is in every sample and the "
                      "device audit cannot subscribe; run without it, or profile on its own");
  return report;
}

void allow_tools_for_unaudited_checks(environment_report& report) {
  for (auto& finding : report.findings) {
    if (finding.code != "T7" || finding.severity != "fail") continue;
    finding.severity = "warn";
    finding.what += " (allowed: bench verify --audit off checks outputs and makes no timing claim)";
  }
}

std::string external_profiler_of(const char* const* environment) {
  static constexpr std::string_view injection_variables[] = {"CUDA_INJECTION64_PATH=", "NVTX_INJECTION64_PATH=",
                                                             "NSYS_PROFILING_SESSION_ID=", "NV_COMPUTE_PROFILER_PERFMON_ENABLED="};
  static constexpr std::string_view preloaded_tools[] = {"cupti", "nsys", "Nsight", "nvperf", "ToolsInjection", "libnvtx"};
  for (const char* const* entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    for (const auto prefix : injection_variables) {
      if (variable.starts_with(prefix) && variable.size() > prefix.size()) return std::string(variable);
    }
    if (!variable.starts_with("LD_PRELOAD=")) continue;
    for (const auto tool : preloaded_tools) {
      if (variable.find(tool) != std::string_view::npos) return std::string(variable);
    }
  }
  return "";
}

void add_gpu_findings(environment_report& report, const nlohmann::json& telemetry) {
  if (telemetry.is_null()) return;
  const std::string warn = report.profile == environment_profile::strict ? "fail" : "warn";
  const auto add = [&report](std::string code, std::string severity, std::string what) {
    report.findings.push_back({std::move(code), std::move(severity), std::move(what)});
  };
  if (const int mode = telemetry.value("virtualization_mode", -1); mode > 0)
    add("E12", warn, fmt::format("NVML virtualization mode {} (1 = passthrough)", mode));
  if (telemetry.value("throttled", false))
    add("E7", warn, "the GPU clock is held down at run start: " + telemetry["clock_event_reason_names"].dump());
  add("E8", "info", fmt::format("power {:.0f} W of a {:.0f} W limit at run start", telemetry.value("power_w", 0.0),
                                telemetry.value("power_limit_w", 0.0)));
  if (const int others = telemetry.value("compute_processes", -1); others > 0)
    add("S8", warn, fmt::format("{} process(es) already hold a compute context on this GPU", others));
}

nlohmann::json to_json(const environment_report& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings) findings.push_back({{"code", f.code}, {"severity", f.severity}, {"what", f.what}});
  return {{"profile", report.profile == environment_profile::strict ? "strict" : "portable"},
          {"readings", report.readings},
          {"findings", findings},
          {"failed", report.failed()}};
}

}  // namespace aisp
