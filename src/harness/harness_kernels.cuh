// Pieces shared by the harness's own kernels (call_fill.cu, buffer_digest.cu): the 64-bit mixer
// every seeded fill and digest is built on, and the grid of a grid-stride pass.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aisp::harness_kernels {

constexpr int block_threads = 256;
// Enough blocks to fill the H100 many times over; beyond it each thread loops.
constexpr std::size_t max_blocks = 8192;

__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Blocks of `block_threads` for `work` items, one item a thread until `max_blocks`.
inline unsigned blocks_for(std::size_t work) {
  const std::size_t blocks = (work + block_threads - 1) / block_threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > max_blocks ? max_blocks : blocks));
}

}  // namespace aisp::harness_kernels
