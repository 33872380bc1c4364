// `aisp hw`: runs the probe groups on one GPU, caches every measurement per device UUID and
// driver (beside the ceilings derived from them), and answers later calls from that cache until
// `--refresh`. The ceilings feed SOL % and the physics gate of every run on this card.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/ceilings.hpp"
#include "hw/probe_result.hpp"

namespace aisp {

[[nodiscard]] const std::vector<std::string>& hw_groups();  // all, memory, cache, fp32, tensor, pcie, launch, p2p, nccl

struct hw_report {
  std::string gpu_name;
  std::string uuid;
  int driver_version = 0;
  std::string measured_at;             // ISO 8601, UTC, of the newest measurement
  std::vector<probe_result> probes;    // of the requested groups
  bool from_cache = false;             // nothing was measured this time
  ceiling_set ceilings;                // from everything cached for this card
  std::string cache_file;
};

using hw_progress = std::function<void(const std::string& line)>;

// Throws cuda_error when no GPU is usable and contract_error for an unknown group.
// No GPU to measure (none found, or the driver cannot be reached): `aisp hw` exits 3, as a run
// that measured nothing does (Note [nothing measured]), not 2, which is bad usage.
class no_gpu_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[nodiscard]] hw_report run_hw(const std::string& group, int device, bool refresh, const hw_progress& progress);

// The ceilings of a set of probes: memory = the best copy/triad median, fp32 = the FMA median.
[[nodiscard]] ceiling_set ceilings_from(const std::vector<probe_result>& probes);

[[nodiscard]] nlohmann::json to_json(const hw_report& report);
[[nodiscard]] std::string render_text(const hw_report& report);

}  // namespace aisp
