// ch19 (issue 19): operands shaped like a transformer layer's, for the per-tensor against
// per-block fp8 comparison: the host model (tests/unit/block_scaling_test.cpp) and the GPU's
// kernel (tests/gpu/block_scaled_gemm_test.cu) quantize the same values. Deterministic draws.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "support/counter_hash.hpp"

namespace aisp::ch19 {

// A standard normal draw from (seed, index), Box-Muller on two counter draws.
[[nodiscard]] inline double normal_draw(std::uint64_t seed, std::uint64_t index) {
  const auto unit = [&](std::uint64_t salt) {
    return (static_cast<double>(splitmix64(seed ^ splitmix64(2 * index + salt)) >> 11) + 0.5) * 0x1.0p-53;
  };
  return std::sqrt(-2.0 * std::log(unit(0))) * std::cos(6.283185307179586 * unit(1));
}

// 2^u for u uniform in [-span, span]: magnitudes spread over 2 span binary orders.
[[nodiscard]] inline double log_uniform_draw(std::uint64_t seed, std::uint64_t index, double span) {
  return std::exp2(span * (2.0 * (static_cast<double>(splitmix64(seed ^ index) >> 11) * 0x1.0p-53) - 1.0));
}

// Activations (m x k): N(0, 1) rows (tokens) scaled to norms spread over 2^-3..2^3, rows 0 and
// 37 "massive activations" 2,000 times larger (a few tokens, such as the first, carry activations
// 1,000-10,000x the rest in LLMs: Sun et al., 2024), and channels 7, 100, 301 and 444 four times
// the rest (outlier features). shaped = false: plain N(0, 1).
[[nodiscard]] inline std::vector<double> layer_activations(int m, int k, bool shaped) {
  std::vector<double> a(static_cast<std::size_t>(m) * static_cast<std::size_t>(k));
  for (int i = 0; i < m; ++i) {
    const double massive = shaped && (i == 0 || i == 37) ? 2000.0 : 1.0;
    const double row = shaped ? log_uniform_draw(11, static_cast<std::uint64_t>(i), 3.0) * massive : 1.0;
    for (int p = 0; p < k; ++p) {
      const bool outlier = shaped && (p == 7 || p == 100 || p == 301 || p == 444);
      const auto at = static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(k) + static_cast<std::uint64_t>(p);
      a[at] = normal_draw(1, at) * row * (outlier ? 4.0 : 1.0);
    }
  }
  return a;
}

// Weights (n x k): N(0, 1/k), each output row its own scale over 2^-2..2^2 (shaped) or none.
[[nodiscard]] inline std::vector<double> layer_weights(int n, int k, bool shaped) {
  std::vector<double> b(static_cast<std::size_t>(n) * static_cast<std::size_t>(k));
  for (int j = 0; j < n; ++j) {
    const double row = shaped ? log_uniform_draw(12, static_cast<std::uint64_t>(j), 2.0) : 1.0;
    for (int p = 0; p < k; ++p) {
      const auto at = static_cast<std::uint64_t>(j) * static_cast<std::uint64_t>(k) + static_cast<std::uint64_t>(p);
      b[at] = normal_draw(2, at) * row / std::sqrt(static_cast<double>(k));
    }
  }
  return b;
}

}  // namespace aisp::ch19
