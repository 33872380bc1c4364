#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "aisp/check.hpp"
#include "audit/environment_gate.hpp"

namespace {

// A fake machine under a temporary root: the gate reads /proc and /sys through it.
class fake_machine : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("aisp_fake_root_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
    write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
    write("proc/swaps", "Filename Type Size Used Priority\n/swapfile file 1024 0 -2\n");
    write("sys/fs/cgroup/cpu.max", "200000 100000\n");
    write("sys/fs/cgroup/memory.max", "max\n");
    write("proc/cpuinfo", "processor : 0\nflags : fpu vme sse2 hypervisor avx\n");
    std::filesystem::create_directories(root_ / "sys/devices/system/node/node0");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  [[nodiscard]] bool has(const aisp::environment_report& report, const std::string& code, const std::string& severity) const {
    return std::any_of(report.findings.begin(), report.findings.end(),
                       [&](const auto& f) { return f.code == code && f.severity == severity; });
  }
  std::filesystem::path root_;
};

TEST_F(fake_machine, portable_reports_the_governor_swap_cgroup_and_hypervisor_as_warnings) {
  const auto report = aisp::read_environment("auto", root_.string());
  EXPECT_EQ(report.profile, aisp::environment_profile::portable) << "auto picks portable when a hypervisor is seen";
  EXPECT_TRUE(has(report, "E6", "warn"));
  EXPECT_TRUE(has(report, "M7", "warn"));
  EXPECT_TRUE(has(report, "E11", "warn"));
  EXPECT_TRUE(has(report, "E12", "warn"));
  EXPECT_FALSE(report.failed());
  EXPECT_EQ(report.readings["swap_devices"], 1);
  EXPECT_EQ(report.readings["numa_nodes"], 1);
  EXPECT_EQ(report.readings["cgroup_cpu_max"], "200000 100000");
}

TEST_F(fake_machine, strict_turns_the_same_warnings_into_failures) {
  const auto report = aisp::read_environment("strict", root_.string());
  EXPECT_TRUE(has(report, "E12", "fail"));
  EXPECT_TRUE(report.failed());
}

TEST_F(fake_machine, a_quiet_bare_metal_machine_has_no_warnings) {
  write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  write("proc/swaps", "Filename Type Size Used Priority\n");
  write("sys/fs/cgroup/cpu.max", "max 100000\n");
  write("proc/cpuinfo", "processor : 0\nflags : fpu vme sse2 avx\n");
  const auto report = aisp::read_environment("auto", root_.string());
  EXPECT_EQ(report.profile, aisp::environment_profile::strict);
  for (const auto& f : report.findings) EXPECT_NE(f.severity, "fail") << f.code << " " << f.what;
  EXPECT_FALSE(has(report, "M7", "fail"));
}

TEST(read_environment, an_unknown_profile_is_a_contract_error) {
  EXPECT_THROW((void)aisp::read_environment("lenient"), aisp::contract_error);
}

}  // namespace

namespace {

TEST(add_gpu_findings, reports_virtualization_throttling_power_and_other_processes) {
  auto report = aisp::read_environment("portable");
  const auto before = report.findings.size();
  const nlohmann::json telemetry = {{"virtualization_mode", 1}, {"throttled", true},
                                    {"clock_event_reason_names", {"sw_power_cap"}}, {"power_w", 120.0},
                                    {"power_limit_w", 700.0}, {"compute_processes", 2}};
  aisp::add_gpu_findings(report, telemetry);
  std::vector<std::string> codes;
  for (std::size_t i = before; i < report.findings.size(); ++i) codes.push_back(report.findings[i].code);
  EXPECT_EQ(codes, (std::vector<std::string>{"E12", "E7", "E8", "S8"}));
  aisp::add_gpu_findings(report, nlohmann::json(nullptr));
  EXPECT_EQ(report.findings.size(), before + 4) << "no telemetry, no findings";
}

}  // namespace

TEST(external_profiler, ncu_and_nsys_injection_and_a_preloaded_cupti_are_found) {
  const char* ncu[] = {"HOME=/root", "CUDA_INJECTION64_PATH=/opt/nsight-compute/target/libInterceptorInjectionTarget.so", nullptr};
  EXPECT_EQ(aisp::external_profiler_of(ncu), std::string(ncu[1]));
  const char* preload[] = {"LD_PRELOAD=/usr/local/cuda/lib64/libcupti.so", nullptr};
  EXPECT_EQ(aisp::external_profiler_of(preload), std::string(preload[0]));
  const char* nsys[] = {"NSYS_PROFILING_SESSION_ID=3", nullptr};
  EXPECT_FALSE(aisp::external_profiler_of(nsys).empty());
}

TEST(external_profiler, an_ordinary_environment_and_an_empty_injection_variable_are_not) {
  const char* plain[] = {"PATH=/usr/bin", "LD_PRELOAD=/usr/lib/libjemalloc.so", "CUDA_INJECTION64_PATH=", nullptr};
  EXPECT_EQ(aisp::external_profiler_of(plain), "");
  EXPECT_EQ(aisp::external_profiler_of(nullptr), "");
}

TEST(external_profiler, an_unaudited_verify_run_reports_the_tool_and_keeps_other_failures) {
  aisp::environment_report report;
  report.findings = {{"T7", "fail", "an external profiler is attached (NVTX_INJECTION64_PATH=x)"}, {"E6", "fail", "governor"}};
  aisp::allow_tools_for_unaudited_checks(report);
  EXPECT_EQ(report.findings[0].severity, "warn");
  EXPECT_NE(report.findings[0].what.find("makes no timing claim"), std::string::npos);
  EXPECT_EQ(report.findings[1].severity, "fail") << "only T7 is relaxed";
  EXPECT_TRUE(report.failed());
  report.findings.pop_back();
  EXPECT_FALSE(report.failed());
}
