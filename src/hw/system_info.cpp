#include "hw/system_info.hpp"

#include "audit/nvml_reader.hpp"
#include "hw/library_versions.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#ifndef AISP_VERSION
#define AISP_VERSION "0.0.0-dev"
#endif

namespace aisp {

std::string format_uuid(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    text += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

namespace {

int attribute(cudaDeviceAttr which, int device) {
  int value = 0;
  return cudaDeviceGetAttribute(&value, which, device) == cudaSuccess ? value : 0;
}

host_info probe_host() {
  host_info host;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) host.hostname = name;
  host.logical_cpus = std::thread::hardware_concurrency();
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) {
      host.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  if (meminfo >> key >> kib && key == "MemTotal:") host.memory_bytes = kib * 1024;
  utsname uts{};
  if (uname(&uts) == 0) host.kernel = std::string(uts.sysname) + " " + uts.release;
  return host;
}

}  // namespace

std::string aisp_version() { return AISP_VERSION; }

std::string gpu_absence_reason(cudaError_t status) {
  // Without the driver the runtime says "driver version is insufficient", which sends a user
  // with no GPU at all off to upgrade a driver (a user's walkthrough, 2026-12-04): say what is
  // missing first.
  if (access("/dev/nvidiactl", F_OK) != 0 && access("/proc/driver/nvidia/version", F_OK) != 0)
    return fmt::format("no NVIDIA GPU or driver on this machine (no /dev/nvidiactl; the CUDA runtime says {})", cudaGetErrorName(status));
  if (status != cudaSuccess) return fmt::format("no usable CUDA GPU ({}: {})", cudaGetErrorName(status), cudaGetErrorString(status));
  return "no CUDA GPU on this machine";
}

system_info probe_system() {
  system_info info;
  info.aisp_version = aisp_version();
  info.host = probe_host();
  cudaRuntimeGetVersion(&info.cuda_runtime_version);
  cudaDriverGetVersion(&info.cuda_driver_version);
  info.library_versions = read_library_versions();  // before the GPU check: a GPU-less host has them too
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    info.gpu_absence_reason = gpu_absence_reason(status);
    info.nvml_absence_reason = "no GPU";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return info;
  }
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp props{};
    if (cudaGetDeviceProperties(&props, device) != cudaSuccess) continue;
    gpu_info gpu;
    gpu.index = device;
    gpu.name = props.name;
    gpu.uuid = format_uuid(props.uuid);
    gpu.compute_major = props.major;
    gpu.compute_minor = props.minor;
    gpu.sm_count = props.multiProcessorCount;
    gpu.l2_bytes = static_cast<std::size_t>(props.l2CacheSize);
    gpu.persisting_l2_max_bytes = static_cast<std::size_t>(props.persistingL2CacheMaxSize);
    gpu.memory_bytes = props.totalGlobalMem;
    gpu.memory_bus_bits = props.memoryBusWidth;
    gpu.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, device) / 1e3;
    gpu.max_memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, device) / 1e3;
    info.gpus.push_back(gpu);
  }
  std::string why;
  if (const auto nvml = nvml_session::open(why)) {
    for (auto& gpu : info.gpus) {
      if (const auto reading = nvml->read(gpu.uuid)) gpu.telemetry = to_json(*reading);
    }
  } else {
    info.nvml_absence_reason = why;
  }
  return info;
}

nlohmann::json to_json(const system_info& info) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : info.gpus) {
    gpus.push_back({{"index", g.index}, {"name", g.name}, {"uuid", g.uuid},
                    {"compute_capability", fmt::format("{}.{}", g.compute_major, g.compute_minor)},
                    {"sm_count", g.sm_count}, {"l2_bytes", g.l2_bytes},
                    {"persisting_l2_max_bytes", g.persisting_l2_max_bytes},
                    {"memory_bytes", g.memory_bytes}, {"memory_bus_bits", g.memory_bus_bits},
                    {"max_sm_clock_mhz", g.max_sm_clock_mhz},
                    {"max_memory_clock_mhz", g.max_memory_clock_mhz}, {"telemetry", g.telemetry}});
  }
  return {{"aisp_version", info.aisp_version},
          {"cuda_driver_version", info.cuda_driver_version},
          {"cuda_runtime_version", info.cuda_runtime_version},
          {"library_versions", info.library_versions},
          {"gpus", gpus},
          {"gpu_absence_reason", info.gpu_absence_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.gpu_absence_reason)},
          {"nvml_absence_reason", info.nvml_absence_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.nvml_absence_reason)},
          {"host", {{"hostname", info.host.hostname}, {"cpu_model", info.host.cpu_model},
                    {"logical_cpus", info.host.logical_cpus}, {"memory_bytes", info.host.memory_bytes},
                    {"kernel", info.host.kernel}}}};
}

static double in_units(std::size_t bytes, double unit) { return static_cast<double>(bytes) / unit; }

std::string render_text(const system_info& info) {
  const auto version = [](int v) { return v == 0 ? std::string("none") : fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
  std::string text = fmt::format("aisp {}\nCUDA driver {}, runtime {}\n", info.aisp_version,
                                 version(info.cuda_driver_version), version(info.cuda_runtime_version));
  text += render_library_versions(info.library_versions);
  if (info.gpus.empty()) text += "GPU: none — " + info.gpu_absence_reason + "\n";
  for (const auto& g : info.gpus) {
    text += fmt::format("GPU {}: {} (sm_{}{}), {} SMs, L2 {:.0f} MiB (persisting max {:.0f} MiB), {:.1f} GiB, {}-bit bus, "
                        "max SM clock {:.0f} MHz, memory clock {:.0f} MHz\n  {}\n",
                        g.index, g.name, g.compute_major, g.compute_minor, g.sm_count, in_units(g.l2_bytes, 1048576.0),
                        in_units(g.persisting_l2_max_bytes, 1048576.0), in_units(g.memory_bytes, 1073741824.0), g.memory_bus_bits,
                        g.max_sm_clock_mhz, g.max_memory_clock_mhz, g.uuid);
    if (!g.telemetry.is_null()) {
      const auto& t = g.telemetry;
      text += fmt::format("  now: SM {} MHz, memory {} MHz, {} C, {:.0f} W of {:.0f} W, virtualization mode {}, "
                          "{} compute process(es), clock events: {}\n",
                          t["sm_clock_mhz"].get<unsigned>(), t["memory_clock_mhz"].get<unsigned>(),
                          t["temperature_c"].get<unsigned>(), t["power_w"].get<double>(), t["power_limit_w"].get<double>(),
                          t["virtualization_mode"].get<int>(), t["compute_processes"].get<int>(),
                          t["clock_event_reason_names"].dump());
    }
  }
  if (!info.gpus.empty() && !info.nvml_absence_reason.empty()) text += info.nvml_absence_reason + "\n";
  text += fmt::format("Host: {}, {} logical CPUs ({}), {:.1f} GiB memory, {}\n", info.host.hostname,
                      info.host.logical_cpus, info.host.cpu_model, in_units(info.host.memory_bytes, 1073741824.0),
                      info.host.kernel);
  return text;
}

}  // namespace aisp
