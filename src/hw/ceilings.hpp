// The ceilings a result is judged against: what `aisp hw` measured on this card (cached per
// device UUID and driver), else the card's datasheet; for host pairs, this host's aggregate copy
// bandwidth, measured once per run. SOL % and the physics gate divide by these.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"

namespace aisp {

struct ceiling_set {
  std::string source;              // "measured", "datasheet h100", "host copy", or "" (none known)
  double memory_bytes_per_s = 0;   // read + written bytes per second
  double fp32_flops_per_s = 0;
  // Dense tensor-core peaks: the larger of the cuBLASLt probe and the datasheet (Note [tensor
  // ceilings] in ceilings.cpp: a library's rate is not the hardware's limit); 0 = not known.
  double tf32_flops_per_s = 0;
  double fp16_flops_per_s = 0;
  double bf16_flops_per_s = 0;
  double fp8_flops_per_s = 0;
  // Pinned host<->device copy bandwidth, each direction (aisp hw pcie, else the datasheet).
  double pcie_h2d_bytes_per_s = 0;
  double pcie_d2h_bytes_per_s = 0;
  // One GPU's bandwidth to its peers, one direction (aisp hw p2p, else the datasheet's NVLink / 2).
  double interconnect_bytes_per_s = 0;
  // The bandwidth ceiling of a data path: device memory, or both PCIe directions together.
  [[nodiscard]] double bandwidth_ceiling(data_path path) const;
  // The FLOP/s ceiling of one math unit (0 when not known).
  [[nodiscard]] double flops_ceiling(math_unit unit) const;
  [[nodiscard]] bool known() const { return memory_bytes_per_s > 0 || fp32_flops_per_s > 0; }
  // Note [ranks]: the ceilings of `gpus` such GPUs working on one job: memory and math add up;
  // the interconnect stays one GPU's link (its bytes are what one rank sends), PCIe one link's.
  [[nodiscard]] ceiling_set for_gpus(int gpus) const;
  // Note [special-function peak]: an SM of sm_90 or sm_100 returns 16 special-function (MUFU)
  // results per clock against 128 FP32 FMAs, i.e. 256 FLOP (CUDA C++ Programming Guide,
  // arithmetic instruction throughput): the MUFU peak is the FP32 peak / 16, at the same clock as
  // the FMA probe measured. (sm_80 has 64 FP32 lanes: / 8 there; the lab's cards are sm_90.)
  [[nodiscard]] double special_function_ops_per_s() const { return fp32_flops_per_s / 16; }
};

[[nodiscard]] nlohmann::json to_json(const ceiling_set& c);
[[nodiscard]] ceiling_set ceiling_set_from_json(const nlohmann::json& j);

// $AISP_CACHE_DIR, else $XDG_CACHE_HOME/aisp, else ~/.cache/aisp.
[[nodiscard]] std::filesystem::path cache_directory();
[[nodiscard]] std::filesystem::path ceilings_cache_file(const std::string& uuid, int driver_version);
// Measured ceilings of this card and driver, or nullopt (never measured, or an unreadable cache).
[[nodiscard]] std::optional<ceiling_set> load_cached_ceilings(const std::string& uuid, int driver_version);

// The measured ceilings when cached, else the datasheet of the device's name, else none.
[[nodiscard]] ceiling_set gpu_ceilings(const std::string& device_name, const std::string& uuid, int driver_version);
// Every hardware thread copying its own 64 MiB at once, best of three rounds in which every copier
// held a CPU: no honest host pair moves memory faster than the whole host can. A loaded machine
// does not lower it (Note [host ceiling under load]).
[[nodiscard]] ceiling_set host_ceilings();

// A round counts where its slowest copier was on a CPU this share of its wall time.
inline constexpr double clean_round_share = 0.8;
// One round of that copy: its wall time and each copier's CPU time.
struct copy_round {
  double wall_s = 0;
  std::vector<double> copier_cpu_s;
  [[nodiscard]] double slowest_copier_cpu_s() const;
  [[nodiscard]] bool copiers_held_their_cpus() const;  // Note [host ceiling under load]
};
// The ceiling from rounds of `bytes` copied by each copier (Note [host ceiling under load]).
[[nodiscard]] ceiling_set host_copy_ceiling(const std::vector<copy_round>& rounds, std::size_t bytes);

}  // namespace aisp
