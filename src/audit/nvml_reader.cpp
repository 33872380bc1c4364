#include "audit/nvml_reader.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace aisp {
namespace {

// The few NVML declarations used here (NVML's ABI: opaque device handle, int return codes).
using nvml_return = int;
using nvml_device = struct nvml_device_opaque*;
constexpr nvml_return nvml_success = 0;
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_memory = 2;
constexpr int nvml_temperature_gpu = 0;

// Bits of the clock-event-reasons mask, in NVML's order.
// Checked against nvml.h of CUDA 13.0 with driver 580.159 on the lent H100 (2026-11-26).
struct reason_bit {
  std::uint64_t bit;
  const char* name;
  bool throttles;
};
constexpr reason_bit reason_bits[] = {
    {0x1, "gpu_idle", false},          {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},       {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},       {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true}, {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
};

template <class Function>
Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(dlsym(library, name));
}

}  // namespace

struct nvml_session::api {
  void* library = nullptr;
  nvml_return (*init)() = nullptr;
  nvml_return (*shutdown)() = nullptr;
  nvml_return (*by_uuid)(const char*, nvml_device*) = nullptr;
  nvml_return (*clock)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*reasons)(nvml_device, unsigned long long*) = nullptr;
  nvml_return (*temperature)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*power)(nvml_device, unsigned*) = nullptr;
  nvml_return (*power_limit)(nvml_device, unsigned*) = nullptr;
  nvml_return (*energy)(nvml_device, unsigned long long*) = nullptr;
  nvml_return (*virtualization)(nvml_device, int*) = nullptr;
  nvml_return (*processes)(nvml_device, unsigned*, void*) = nullptr;
  nvml_return (*memory)(nvml_device, void*) = nullptr;
  // Note [NVML handles]: the lookup by UUID is done once per device: the judge reads NVML twice
  // around every visit (8063 visits in the lab), and those reads cost 7.7 ms a visit on the H100
  // (2026-11-27) with the lookup in each.
  std::mutex handles_mutex;
  std::map<std::string, nvml_device> handles;

  bool device_of(const std::string& uuid, nvml_device& device) {
    const std::lock_guard lock(handles_mutex);
    if (const auto found = handles.find(uuid); found != handles.end()) {
      device = found->second;
      return true;
    }
    if (by_uuid(uuid.c_str(), &device) != nvml_success) return false;
    handles.emplace(uuid, device);
    return true;
  }
};

std::vector<std::string> clock_event_reason_names(std::uint64_t mask) {
  std::vector<std::string> names;
  for (const auto& r : reason_bits) {
    if ((mask & r.bit) != 0) names.emplace_back(r.name);
  }
  return names;
}

bool is_throttled(std::uint64_t mask) {
  for (const auto& r : reason_bits) {
    if (r.throttles && (mask & r.bit) != 0) return true;
  }
  return false;
}

bool is_thermally_throttled(std::uint64_t mask) {
  constexpr std::uint64_t thermal = 0x8 | 0x20 | 0x40;  // hw_slowdown, sw_thermal, hw_thermal
  return (mask & thermal) != 0;
}

nlohmann::json to_json(const gpu_telemetry& t) {
  return {{"sm_clock_mhz", t.sm_clock_mhz},       {"memory_clock_mhz", t.memory_clock_mhz},
          {"clock_event_reasons", t.clock_event_reasons},
          {"clock_event_reason_names", clock_event_reason_names(t.clock_event_reasons)},
          {"throttled", is_throttled(t.clock_event_reasons)},
          {"temperature_c", t.temperature_c},     {"power_w", t.power_w},
          {"power_limit_w", t.power_limit_w},     {"energy_j", t.energy_j},
          {"virtualization_mode", t.virtualization_mode}, {"compute_processes", t.compute_processes},
          {"memory_total_bytes", t.memory_total_bytes}, {"memory_free_bytes", t.memory_free_bytes}};
}

nvml_session::nvml_session(std::unique_ptr<api> functions) : api_(std::move(functions)) {}

nvml_session::~nvml_session() {
  if (api_ && api_->shutdown != nullptr) api_->shutdown();
  if (api_ && api_->library != nullptr) dlclose(api_->library);
}

std::unique_ptr<nvml_session> nvml_session::open(std::string& why, const char* library) {
  auto functions = std::make_unique<api>();
  functions->library = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (functions->library == nullptr) {
    const char* error = dlerror();
    why = std::string("NVML unavailable: ") + (error != nullptr ? error : library);
    return nullptr;
  }
  auto* lib = functions->library;
  functions->init = symbol<decltype(functions->init)>(lib, "nvmlInit_v2");
  functions->shutdown = symbol<decltype(functions->shutdown)>(lib, "nvmlShutdown");
  functions->by_uuid = symbol<decltype(functions->by_uuid)>(lib, "nvmlDeviceGetHandleByUUID");
  functions->clock = symbol<decltype(functions->clock)>(lib, "nvmlDeviceGetClockInfo");
  functions->reasons = symbol<decltype(functions->reasons)>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
  if (functions->reasons == nullptr)
    functions->reasons = symbol<decltype(functions->reasons)>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  functions->temperature = symbol<decltype(functions->temperature)>(lib, "nvmlDeviceGetTemperature");
  functions->power = symbol<decltype(functions->power)>(lib, "nvmlDeviceGetPowerUsage");
  functions->power_limit = symbol<decltype(functions->power_limit)>(lib, "nvmlDeviceGetEnforcedPowerLimit");
  functions->energy = symbol<decltype(functions->energy)>(lib, "nvmlDeviceGetTotalEnergyConsumption");
  functions->virtualization = symbol<decltype(functions->virtualization)>(lib, "nvmlDeviceGetVirtualizationMode");
  functions->processes = symbol<decltype(functions->processes)>(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  functions->memory = symbol<decltype(functions->memory)>(lib, "nvmlDeviceGetMemoryInfo");
  if (functions->init == nullptr || functions->by_uuid == nullptr || functions->shutdown == nullptr) {
    why = "NVML unavailable: nvmlInit_v2 or nvmlDeviceGetHandleByUUID missing";
    dlclose(lib);
    return nullptr;
  }
  if (const nvml_return status = functions->init(); status != nvml_success) {
    why = "NVML unavailable: nvmlInit_v2 returned " + std::to_string(status);
    dlclose(lib);
    return nullptr;
  }
  return std::unique_ptr<nvml_session>(new nvml_session(std::move(functions)));
}

std::optional<gpu_telemetry> nvml_session::read(const std::string& uuid) const {
  nvml_device device = nullptr;
  if (!api_->device_of(uuid, device)) return std::nullopt;
  gpu_telemetry t;
  const auto ok = [](nvml_return status) { return status == nvml_success; };
  if (api_->clock != nullptr) {
    (void)ok(api_->clock(device, nvml_clock_sm, &t.sm_clock_mhz));
    (void)ok(api_->clock(device, nvml_clock_memory, &t.memory_clock_mhz));
  }
  unsigned long long mask = 0;
  if (api_->reasons != nullptr && ok(api_->reasons(device, &mask))) t.clock_event_reasons = mask;
  if (api_->temperature != nullptr) (void)ok(api_->temperature(device, nvml_temperature_gpu, &t.temperature_c));
  unsigned milliwatts = 0;
  if (api_->power != nullptr && ok(api_->power(device, &milliwatts))) t.power_w = milliwatts / 1e3;
  if (api_->power_limit != nullptr && ok(api_->power_limit(device, &milliwatts))) t.power_limit_w = milliwatts / 1e3;
  unsigned long long millijoules = 0;
  if (api_->energy != nullptr && ok(api_->energy(device, &millijoules))) t.energy_j = static_cast<double>(millijoules) / 1e3;
  int mode = -1;
  if (api_->virtualization != nullptr && ok(api_->virtualization(device, &mode))) t.virtualization_mode = mode;
  // A zero-sized query answers with the count (NVML_ERROR_INSUFFICIENT_SIZE when non-zero).
  unsigned count = 0;
  if (api_->processes != nullptr) {
    const nvml_return status = api_->processes(device, &count, nullptr);
    if (status == nvml_success || status == 7) t.compute_processes = static_cast<int>(count);
  }
  struct {
    unsigned long long total, free, used;  // nvmlMemory_t
  } memory{};
  if (api_->memory != nullptr && ok(api_->memory(device, &memory))) {
    t.memory_total_bytes = memory.total;
    t.memory_free_bytes = memory.free;
  }
  return t;
}

std::optional<visit_telemetry> nvml_session::read_visit(const std::string& uuid, bool with_energy) const {
  nvml_device device = nullptr;
  if (!api_->device_of(uuid, device) || api_->reasons == nullptr || api_->energy == nullptr)
    return std::nullopt;
  unsigned long long mask = 0;
  unsigned long long millijoules = 0;
  if (api_->reasons(device, &mask) != nvml_success || (with_energy && api_->energy(device, &millijoules) != nvml_success))
    return std::nullopt;
  return visit_telemetry{mask, static_cast<double>(millijoules) / 1e3};
}

}  // namespace aisp
