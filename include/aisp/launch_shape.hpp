// Launch shapes that depend on the device the variant runs on: SM count and one full wave.
#pragma once

#include <cstdint>

namespace aisp {

// SMs of the current device (cached per process: a worker runs on one device).
[[nodiscard]] int device_sm_count();
// Blocks of `block_threads` threads that fit on every SM at once at full thread occupancy.
[[nodiscard]] std::int64_t resident_blocks(int block_threads);
// ceil(items / block_threads) blocks, at least 1, at most one resident wave: for grid-stride loops.
[[nodiscard]] unsigned int wave_grid(std::int64_t items, int block_threads);

}  // namespace aisp
