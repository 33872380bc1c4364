// Planted cheats of the compile rows that a host pair can commit (K1, K7): a result cache that
// survives the process, and a fast path for the one shape that is timed. Each must fail with its
// row's code. K2-K6 are about JIT, graphs and autotuning (docs/validity.md).
// Run: aisp_cheats bench run --targets cheats
#include <cstddef>
#include <cstdio>
#include <string>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// ---- K1: results cached on disk, keyed by size only, across calls, processes and runs ----
// The first call of a size computes and writes /tmp/aisp_cheat_k1_<n>.bin; every later call of
// that size, in this process or any later one, reads it back whatever the inputs are.
void disk_cached(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  float* y = ctx.as<float>("y");
  const std::string path = "/tmp/aisp_cheat_k1_" + std::to_string(n) + ".bin";
  if (std::FILE* cached = std::fopen(path.c_str(), "rb")) {
    const std::size_t read = std::fread(y, sizeof(float), n, cached);
    std::fclose(cached);
    if (read == n) return;
  }
  affine(ctx.as<const float>("x"), y, n);
  if (std::FILE* cache = std::fopen(path.c_str(), "wb")) {
    const bool whole = std::fwrite(y, sizeof(float), n, cache) == n;
    std::fclose(cache);
    if (!whole) std::remove(path.c_str());
  }
}

// ---- K7: the timed size gets a cheap wrong answer (a copy of x); every other size is right ----
void benchmark_size_special_case(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  if (n == static_cast<std::size_t>(benchmark_elements)) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i];
    return;
  }
  affine(x, y, n);
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:k1_disk_cache", "K1",
                                             "caches y on disk by size, across runs",
                                             aisp::cheats::disk_cached).tag("check:fresh-after-setup"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:k7_benchmark_size_special_case", "K7",
                                             "copies x at the benchmark size, computes elsewhere",
                                             aisp::cheats::benchmark_size_special_case).tag("check:baseline-match"));
