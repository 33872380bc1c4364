// What this machine is: its GPUs (read through the CUDA runtime, never changed) and its host.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include <nlohmann/json.hpp>

namespace aisp {

struct gpu_info {
  int index = 0;
  std::string name;
  std::string uuid;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t persisting_l2_max_bytes = 0;
  std::size_t memory_bytes = 0;
  int memory_bus_bits = 0;
  double max_sm_clock_mhz = 0;
  double max_memory_clock_mhz = 0;
  nlohmann::json telemetry;  // NVML readings (clocks, reasons, power, energy...), null without NVML
};

struct host_info {
  std::string hostname;
  std::string cpu_model;
  unsigned logical_cpus = 0;
  std::size_t memory_bytes = 0;
  std::string kernel;
};

struct system_info {
  std::string aisp_version;
  int cuda_driver_version = 0;   // e.g. 13000
  int cuda_runtime_version = 0;
  std::vector<gpu_info> gpus;
  std::string gpu_absence_reason;  // why no GPU is usable; "" when one is
  std::string nvml_absence_reason; // why NVML telemetry is missing; "" when it was read
  nlohmann::json library_versions;  // cuBLAS, cuBLASLt, cuDNN, NCCL, CUPTI (hw/library_versions.hpp)
  host_info host;
};

[[nodiscard]] system_info probe_system();
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the form NVML and nvidia-smi use.
[[nodiscard]] std::string format_uuid(const cudaUUID_t& uuid);
[[nodiscard]] nlohmann::json to_json(const system_info& info);
[[nodiscard]] std::string render_text(const system_info& info);
[[nodiscard]] std::string aisp_version();
// Why there is no GPU to use, after cudaGetDeviceCount returned `status` (or found none): a
// machine without the NVIDIA driver is said to be one first.
[[nodiscard]] std::string gpu_absence_reason(cudaError_t status);

}  // namespace aisp
