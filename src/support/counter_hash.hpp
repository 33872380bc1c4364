// splitmix64: a counter-based mixer. Statistically fine for test data and synthetic weights, and
// trivially parallel: value i of a stream is mix(stream ^ f(i)), drawn in any order, on any thread
// (the harness's seeded fills, labs/decode's weights and traces).
#pragma once

#include <cstdint>

namespace aisp {

[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace aisp
