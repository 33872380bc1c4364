// E4: before any worker allocates, the pair's buffers must fit in what the machine has free. A
// workload that cannot fit fails with one line saying how much it needs and how much is free,
// instead of an out-of-memory error halfway through a worker (or the host's OOM killer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "aisp/pair.hpp"

namespace aisp {

struct memory_need {
  std::string where;              // "device" or "host"
  std::uint64_t per_worker = 0;   // bytes one worker holds at its peak
  int workers = 0;                // alive at once
  std::uint64_t needed = 0;       // workers x per_worker, plus the judge's copies (host)
  std::optional<std::uint64_t> available;  // free now; nullopt when unknown
};

// A worker's peak: its buffers and a second set while the new-address check moves them (the old
// set is freed after); a verified sample is probed in place (Note [verified after the call]), no
// snapshot kept. The judge reads outputs back to compare.
[[nodiscard]] memory_need device_memory_need(const pair& declared, const workload& work, int workers,
                                             std::optional<std::uint64_t> free_bytes);
[[nodiscard]] memory_need host_memory_need(const pair& declared, const workload& work, int workers,
                                           std::optional<std::uint64_t> available_bytes);
// "" when the need fits (or what is free is unknown); else the one-line reason.
[[nodiscard]] std::string memory_fit_problem(const memory_need& need);
[[nodiscard]] std::string describe(const memory_need& need);
// MemAvailable from /proc/meminfo; nullopt where it cannot be read.
[[nodiscard]] std::optional<std::uint64_t> host_available_memory();

}  // namespace aisp
