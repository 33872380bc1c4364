// NVML through dlopen (no link dependency, no nvml.h on the build machines): read-only
// telemetry of one GPU — clocks, clock-event (throttle) reasons, temperature, power and its
// limit, the total-energy counter, the virtualization mode and the compute processes on it.
// Nothing is ever set (principle 7).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp {

struct gpu_telemetry {
  unsigned sm_clock_mhz = 0;
  unsigned memory_clock_mhz = 0;
  std::uint64_t clock_event_reasons = 0;  // raw NVML bitmask
  unsigned temperature_c = 0;
  double power_w = 0;
  double power_limit_w = 0;
  double energy_j = 0;                    // total since the driver loaded
  int virtualization_mode = -1;           // 0 none, 1 passthrough, 2 vGPU, 3 host vGPU, 4 host vSGA
  int compute_processes = -1;             // processes holding a compute context, this one included
  std::uint64_t memory_total_bytes = 0;   // 0 when NVML could not say
  std::uint64_t memory_free_bytes = 0;    // E4: what a pair's buffers must fit in
};

// The two readings taken around every visit of samples: cheap enough to repeat thousands of times.
struct visit_telemetry {
  std::uint64_t clock_event_reasons = 0;
  double energy_j = 0;  // 0 when not asked for
};

// Names of the set bits of an NVML clock-event-reasons mask.
[[nodiscard]] std::vector<std::string> clock_event_reason_names(std::uint64_t mask);
// True when a reason other than idle or the application-clock setting holds the clock down.
[[nodiscard]] bool is_throttled(std::uint64_t mask);
// True when a thermal reason (software or hardware thermal slowdown, hardware slowdown) is set (E7).
[[nodiscard]] bool is_thermally_throttled(std::uint64_t mask);
[[nodiscard]] nlohmann::json to_json(const gpu_telemetry& telemetry);

class nvml_session {
 public:
  // Loads libnvidia-ml.so.1 and initializes NVML; nullptr with `why` set where that fails.
  static std::unique_ptr<nvml_session> open(std::string& why, const char* library = "libnvidia-ml.so.1");
  ~nvml_session();
  nvml_session(const nvml_session&) = delete;
  nvml_session& operator=(const nvml_session&) = delete;

  // By the CUDA UUID ("GPU-xxxxxxxx-..."), which NVML shares; nullopt when not found.
  [[nodiscard]] std::optional<gpu_telemetry> read(const std::string& uuid) const;
  // The clock-event reasons, and the energy counter when `with_energy` (each NVML read costs
  // milliseconds on the H100, and the visits need only the reasons).
  [[nodiscard]] std::optional<visit_telemetry> read_visit(const std::string& uuid, bool with_energy = true) const;

 private:
  struct api;
  explicit nvml_session(std::unique_ptr<api> functions);
  std::unique_ptr<api> api_;
};

}  // namespace aisp
