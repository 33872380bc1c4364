#include "hw/ceilings.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "hw/datasheet.hpp"
#include "support/clock_seconds.hpp"

namespace aisp {

double ceiling_set::flops_ceiling(math_unit unit) const {
  switch (unit) {
    case math_unit::fp32_simt: return fp32_flops_per_s;
    case math_unit::tf32_tensor: return tf32_flops_per_s;
    case math_unit::fp16_tensor: return fp16_flops_per_s;
    case math_unit::bf16_tensor: return bf16_flops_per_s;
    case math_unit::fp8_tensor: return fp8_flops_per_s;
  }
  return 0;
}

ceiling_set ceiling_set::for_gpus(int gpus) const {
  ceiling_set world = *this;
  const auto n = static_cast<double>(gpus);
  for (double* c : {&world.memory_bytes_per_s, &world.fp32_flops_per_s, &world.tf32_flops_per_s, &world.fp16_flops_per_s,
                    &world.bf16_flops_per_s, &world.fp8_flops_per_s})
    *c *= n;
  return world;
}

double ceiling_set::bandwidth_ceiling(data_path path) const {
  switch (path) {
    case data_path::device_memory: return memory_bytes_per_s;
    case data_path::pcie_both_directions: return pcie_h2d_bytes_per_s + pcie_d2h_bytes_per_s;
    case data_path::gpu_interconnect: return interconnect_bytes_per_s;
    case data_path::pcie_one_direction:
      if (pcie_h2d_bytes_per_s <= 0 || pcie_d2h_bytes_per_s <= 0) return 0;
      return 2 / (1 / pcie_h2d_bytes_per_s + 1 / pcie_d2h_bytes_per_s);
  }
  return 0;
}

nlohmann::json to_json(const ceiling_set& c) {
  return {{"source", c.source},
          {"memory_bytes_per_s", c.memory_bytes_per_s},
          {"fp32_flops_per_s", c.fp32_flops_per_s},
          {"tf32_flops_per_s", c.tf32_flops_per_s},
          {"fp16_flops_per_s", c.fp16_flops_per_s},
          {"bf16_flops_per_s", c.bf16_flops_per_s},
          {"fp8_flops_per_s", c.fp8_flops_per_s},
          {"pcie_h2d_bytes_per_s", c.pcie_h2d_bytes_per_s},
          {"interconnect_bytes_per_s", c.interconnect_bytes_per_s},
          {"pcie_d2h_bytes_per_s", c.pcie_d2h_bytes_per_s}};
}

ceiling_set ceiling_set_from_json(const nlohmann::json& j) {
  ceiling_set c;
  c.source = j.value("source", "");
  c.memory_bytes_per_s = j.value("memory_bytes_per_s", 0.0);
  c.fp32_flops_per_s = j.value("fp32_flops_per_s", 0.0);
  c.tf32_flops_per_s = j.value("tf32_flops_per_s", 0.0);
  c.fp16_flops_per_s = j.value("fp16_flops_per_s", 0.0);
  c.bf16_flops_per_s = j.value("bf16_flops_per_s", 0.0);
  c.fp8_flops_per_s = j.value("fp8_flops_per_s", 0.0);
  c.pcie_h2d_bytes_per_s = j.value("pcie_h2d_bytes_per_s", 0.0);
  c.interconnect_bytes_per_s = j.value("interconnect_bytes_per_s", 0.0);
  c.pcie_d2h_bytes_per_s = j.value("pcie_d2h_bytes_per_s", 0.0);
  return c;
}

std::filesystem::path cache_directory() {
  if (const char* dir = std::getenv("AISP_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') return std::filesystem::path(xdg) / "aisp";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr ? home : "/tmp") / ".cache" / "aisp";
}

std::filesystem::path ceilings_cache_file(const std::string& uuid, int driver_version) {
  return cache_directory() / "ceilings" / fmt::format("{}-driver{}.json", uuid, driver_version);
}

std::optional<ceiling_set> load_cached_ceilings(const std::string& uuid, int driver_version) {
  std::ifstream file(ceilings_cache_file(uuid, driver_version));
  if (!file) return std::nullopt;
  const auto j = nlohmann::json::parse(file, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ceilings")) return std::nullopt;
  auto c = ceiling_set_from_json(j["ceilings"]);
  c.source = "measured";
  return c.known() ? std::optional<ceiling_set>(c) : std::nullopt;
}

ceiling_set gpu_ceilings(const std::string& device_name, const std::string& uuid, int driver_version) {
  if (auto measured = load_cached_ceilings(uuid, driver_version)) {
    if (const auto* sheet = datasheet_for_device(device_name)) {
      // Measured on one GPU, or before `aisp hw p2p` existed: the datasheet's link.
      if (measured->interconnect_bytes_per_s <= 0) measured->interconnect_bytes_per_s = sheet->nvlink_bytes_per_s / 2;
      // Note [tensor ceilings]: the tensor probes time cuBLASLt, the best library, not the
      // hardware: on an H100 (2026-11-27) the lab's own bf16 and fp8 GEMMs ran at 105% of them
      // (861 against 817 TFLOP/s, 1527 against 1453), and the physics gate failed honest
      // kernels. A library's rate is a floor under the peak: the ceiling is the larger of it and
      // the datasheet's dense peak.
      measured->tf32_flops_per_s = std::max(measured->tf32_flops_per_s, sheet->tf32_flops_per_s);
      measured->fp16_flops_per_s = std::max(measured->fp16_flops_per_s, sheet->fp16_flops_per_s);
      measured->bf16_flops_per_s = std::max(measured->bf16_flops_per_s, sheet->bf16_flops_per_s);
      measured->fp8_flops_per_s = std::max(measured->fp8_flops_per_s, sheet->fp8_flops_per_s);
    }
    return *measured;
  }
  ceiling_set c;
  if (const auto* sheet = datasheet_for_device(device_name)) {
    c.source = "datasheet " + sheet->key;
    c.memory_bytes_per_s = sheet->memory_bytes_per_s;
    c.fp32_flops_per_s = sheet->fp32_flops_per_s;
    c.tf32_flops_per_s = sheet->tf32_flops_per_s;
    c.fp16_flops_per_s = sheet->fp16_flops_per_s;
    c.bf16_flops_per_s = sheet->bf16_flops_per_s;
    c.fp8_flops_per_s = sheet->fp8_flops_per_s;
    c.pcie_h2d_bytes_per_s = sheet->pcie_bytes_per_s;
    c.pcie_d2h_bytes_per_s = sheet->pcie_bytes_per_s;
    c.interconnect_bytes_per_s = sheet->nvlink_bytes_per_s / 2;
  }
  return c;
}

double copy_round::slowest_copier_cpu_s() const {
  return copier_cpu_s.empty() ? 0.0 : *std::max_element(copier_cpu_s.begin(), copier_cpu_s.end());
}

bool copy_round::copiers_held_their_cpus() const {
  return !copier_cpu_s.empty() && wall_s > 0 && slowest_copier_cpu_s() >= clean_round_share * wall_s;
}

// Note [host ceiling under load]: the copy's wall time reads the memory only while every copier
// held a CPU. Beside another judge on a 2-core machine a copier waited for one, the ceiling read
// 15 GB/s, and an honest 2-thread pair at 22 GB/s failed speed-of-light (the cheat suite run
// beside the integration tests, 2026-12-08). A round counts where its slowest copier was on a CPU
// for at least 80% of the round (on that machine quiet rounds read 96-99%, one 63%; rounds
// beside one or two spinning processes 40-52%). Where no round does, each copier's rate on its own CPU time, times the
// copiers, is the ceiling: the rate of one copier alone, above what they reach together (~1.6x
// there), so a loaded machine's ceiling reads high, never low, and its source says so.
ceiling_set host_copy_ceiling(const std::vector<copy_round>& rounds, std::size_t bytes) {
  double clean_best = 0;
  double alone_best = 0;
  for (const auto& round : rounds) {
    if (round.copier_cpu_s.empty() || round.wall_s <= 0) continue;
    const double copiers = static_cast<double>(round.copier_cpu_s.size());
    const double moved = 2.0 * static_cast<double>(bytes) * copiers;  // read and written
    if (round.copiers_held_their_cpus()) clean_best = std::max(clean_best, moved / round.wall_s);
    alone_best = std::max(alone_best, moved / std::max(round.slowest_copier_cpu_s(), 1e-9));
  }
  const std::size_t threads = rounds.empty() ? 0 : rounds.front().copier_cpu_s.size();
  ceiling_set c;
  c.source = clean_best > 0 ? fmt::format("host copy ({} threads)", threads)
                            : fmt::format("host copy ({} threads; a loaded machine: each copier's rate on its own CPU time)", threads);
  c.memory_bytes_per_s = clean_best > 0 ? clean_best : alone_best;
  return c;
}

ceiling_set host_ceilings() {
  constexpr std::size_t bytes = 64u << 20;
  constexpr int clean_rounds_wanted = 3;
  constexpr int most_rounds = 12;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::vector<char>> from(threads, std::vector<char>(bytes, 1));
  std::vector<std::vector<char>> to(threads, std::vector<char>(bytes, 0));
  std::vector<copy_round> rounds;
  int clean = 0;
  while (clean < clean_rounds_wanted && static_cast<int>(rounds.size()) < most_rounds) {
    copy_round round{0, std::vector<double>(threads, 0.0)};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> copiers;
    for (unsigned t = 0; t < threads; ++t)
      copiers.emplace_back([&, t] {
        const double began = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        std::memcpy(to[t].data(), from[t].data(), bytes);
        round.copier_cpu_s[t] = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - began;
      });
    for (auto& copier : copiers) copier.join();
    round.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round.copiers_held_their_cpus()) ++clean;
    rounds.push_back(std::move(round));
  }
  return host_copy_ceiling(rounds, bytes);
}

}  // namespace aisp
