// Note [launch gate] (src/harness/launch_gate.hpp): a gated cold sample leaves the host's work
// before run()'s first launch out of its window where the GPU bounds the call; a call the host
// bounds, or a run() that waits for the GPU, is sampled ungated.
#include <gtest/gtest.h>

#include "gpu_guard.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include "aisp/check.hpp"
#include "harness/device_probes.hpp"
#include "harness/timing.hpp"

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void busy_wait(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct pinned_span {
  pinned_span() { AISP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ns), sizeof(long long))); }
  ~pinned_span() { static_cast<void>(cudaFreeHost(ns)); }
  pinned_span(const pinned_span&) = delete;
  pinned_span& operator=(const pinned_span&) = delete;
  long long* ns = nullptr;
};

struct stream_guard {
  stream_guard() { AISP_CUDA_CHECK(cudaStreamCreate(&stream)); }
  ~stream_guard() { static_cast<void>(cudaStreamDestroy(stream)); }
  stream_guard(const stream_guard&) = delete;
  stream_guard& operator=(const stream_guard&) = delete;
  cudaStream_t stream = nullptr;
};

// Median sample duration of `call` (and the kernel's own median span) under a cold sampler.
std::pair<double, double> sampled(bool gated, cudaStream_t stream, const std::function<void()>& call, const long long* span_ns) {
  auto sampler = aisp::make_device_sampler(aisp::timing_mode::cold, stream, nullptr, true, {}, gated);
  sampler->prepare(call, 1);
  std::vector<double> measured, truth;
  for (int i = 0; i < 9; ++i) {
    const auto record = sampler->take();
    EXPECT_GE(record.host_wall_s, record.duration_s);
    measured.push_back(record.duration_s);
    truth.push_back(static_cast<double>(*span_ns) * 1e-9);
  }
  return {median(measured), median(truth)};
}

TEST(launch_gate, leaves_the_host_work_before_the_first_launch_out_of_the_window) {
  AISP_REQUIRE_GPU();
  const stream_guard s;
  const pinned_span span;
  const auto call = [&] {
    busy_wait(0.3e-3);  // run()'s host work before its launch: 0.3 ms
    aisp::launch_spin_kernel(2'000'000, span.ns, s.stream);  // ~1 ms: the GPU, not the host, bounds the call
  };
  const auto [plain, plain_truth] = sampled(false, s.stream, call, span.ns);
  const auto [gated, gated_truth] = sampled(true, s.stream, call, span.ns);
  EXPECT_GT(plain, plain_truth + 0.25e-3) << "without the gate the window holds the host's 0.3 ms";
  EXPECT_LT(gated, gated_truth + 0.1e-3) << "the gated window holds the kernel (" << gated_truth << " s), not the host's 0.3 ms";
  EXPECT_GE(gated, 0.9 * gated_truth) << "the window still holds the whole kernel";
}

// Host work longer than the GPU's would vanish behind the gate (a launch-bound call, or the host
// doing the work): the sampler takes such a call ungated, from its first sample on.
TEST(launch_gate, samples_a_call_the_host_bounds_without_the_gate) {
  AISP_REQUIRE_GPU();
  const stream_guard s;
  const pinned_span span;
  const auto call = [&] {
    busy_wait(2e-3);  // 2 ms of host work
    aisp::launch_spin_kernel(40'000, span.ns, s.stream);  // ~20 us
  };
  auto sampler = aisp::make_device_sampler(aisp::timing_mode::cold, s.stream, nullptr, true, {}, true);
  sampler->prepare(call, 1);
  for (int i = 0; i < 5; ++i) {
    const auto record = sampler->take();
    EXPECT_FALSE(record.gated) << "sample " << i;
    EXPECT_GT(record.duration_s, 2e-3) << "the window holds the host's 2 ms, as it did before the gate";
  }
}

TEST(launch_gate, samples_a_call_that_waits_for_the_gpu_once_slowly_then_without_the_gate) {
  AISP_REQUIRE_GPU();
  const stream_guard s;
  const pinned_span span;
  auto sampler = aisp::make_device_sampler(aisp::timing_mode::cold, s.stream, nullptr, true, {}, true);
  sampler->prepare(
      [&] {
        aisp::launch_spin_kernel(2'000'000, span.ns, s.stream);  // ~1 ms
        AISP_CUDA_CHECK(cudaStreamSynchronize(s.stream));        // waits behind the gate until it times out
      },
      1);
  const auto first = sampler->take();
  EXPECT_GE(first.duration_s, 0.9 * static_cast<double>(*span.ns) * 1e-9);
  EXPECT_LT(first.duration_s, 0.1) << "the sample taken again without the gate holds the call, not the gate's wait";
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    const auto record = sampler->take();
    EXPECT_GE(record.duration_s, 0.9 * static_cast<double>(*span.ns) * 1e-9);
    EXPECT_GE(record.host_wall_s, record.duration_s);
  }
  const double five_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_LT(five_s, 0.5) << "after its first timeout the gate stays off (each timeout costs 200 ms)";
}

}  // namespace
