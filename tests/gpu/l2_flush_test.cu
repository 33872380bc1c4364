// The cold flush evicts (Note [cold L2 flush], docs/proposals/clean-l2-flush.md): one thread
// chases pointers through an 8 MiB buffer, one 128-byte line per step in a random cycle, loading
// through L2 only (ld.global.cg). Warm, every load hits L2; after either flush every load must go
// to HBM, which costs far more cycles per load. A flush that left the buffer in L2 would keep the
// warm latency; timing a lab pair cannot show that, since a kernel that streams its data barely
// tells L2 from HBM (a 32 MiB affine pair ran 15.7 us hot and 19.3 us cold on the H100).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "aisp/check.hpp"
#include "gpu_guard.hpp"
#include "harness/device_probes.hpp"

namespace {

constexpr std::uint32_t line_words = 32;  // 128-byte lines of uint32
constexpr std::uint32_t lines = (8u << 20) / (line_words * 4);

__global__ void chase(const std::uint32_t* next, std::uint32_t steps, long long* cycles, std::uint32_t* end) {
  std::uint32_t at = 0;
  const long long start = clock64();
  for (std::uint32_t i = 0; i < steps; ++i) at = __ldcg(next + at);
  const long long stop = clock64();
  *cycles = stop - start;
  *end = at;  // keeps the chain live
}

class l2_flush : public ::testing::Test {
 protected:
  void SetUp() override {
    AISP_REQUIRE_GPU();
    // One random cycle through every line: each line's first word holds the next line's offset.
    std::vector<std::uint32_t> order(lines);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937(std::random_device{}()));
    std::vector<std::uint32_t> next(static_cast<std::size_t>(lines) * line_words, 0);
    for (std::uint32_t i = 0; i < lines; ++i) next[order[i] * line_words] = order[(i + 1) % lines] * line_words;
    AISP_CUDA_CHECK(cudaMalloc(&next_, next.size() * sizeof(std::uint32_t)));
    AISP_CUDA_CHECK(cudaMalloc(&cycles_, sizeof(long long)));
    AISP_CUDA_CHECK(cudaMalloc(&end_, sizeof(std::uint32_t)));
    AISP_CUDA_CHECK(cudaMemcpy(next_, next.data(), next.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
  }
  void TearDown() override {
    cudaFree(next_);
    cudaFree(cycles_);
    cudaFree(end_);
  }
  // Cycles per load of a timed chase of `steps` lines, after `between` ran on the stream.
  template <typename Between>
  double cycles_per_load(Between between) {
    chase<<<1, 1>>>(next_, lines, cycles_, end_);  // every line into L2
    AISP_CHECK_LAUNCH();
    between();
    constexpr std::uint32_t steps = 8192;
    chase<<<1, 1>>>(next_, steps, cycles_, end_);
    AISP_CHECK_LAUNCH();
    long long cycles = 0;
    AISP_CUDA_CHECK(cudaMemcpy(&cycles, cycles_, sizeof(cycles), cudaMemcpyDeviceToHost));
    return static_cast<double>(cycles) / steps;
  }
  std::uint32_t* next_ = nullptr;
  long long* cycles_ = nullptr;
  std::uint32_t* end_ = nullptr;
};

TEST_F(l2_flush, either_flush_sends_the_next_loads_to_memory) {
  const double warm = cycles_per_load([] {});
  for (const auto kind : {aisp::l2_flush_kind::write, aisp::l2_flush_kind::read}) {
    aisp::l2_flusher flusher(kind);
    const double flushed = cycles_per_load([&flusher] { flusher.flush(nullptr); });
    const char* name = kind == aisp::l2_flush_kind::write ? "write" : "read";
    std::printf("[l2 flush] %s: %.0f cycles per load after the flush, %.0f warm\n", name, flushed, warm);
    EXPECT_GT(flushed, 1.3 * warm) << name << " flush: " << flushed << " cycles per load after it, " << warm << " warm";
  }
}

}  // namespace
