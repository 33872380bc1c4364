// The timer against a known answer: a spin kernel records its own %globaltimer span, and the
// harness's cold sampler must agree with it within 1%.
#include <gtest/gtest.h>

#include "gpu_guard.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "aisp/check.hpp"
#include "harness/device_probes.hpp"
#include "harness/timing.hpp"

namespace {




double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

TEST(cold_sampler, times_a_spin_kernel_within_one_percent_of_its_globaltimer_span) {
  AISP_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  AISP_CUDA_CHECK(cudaStreamCreate(&stream));
  long long* span_ns = nullptr;
  // Pinned host memory, visible to the kernel through UVA (no managed memory on shared cards).
  AISP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&span_ns), sizeof(long long)));
  const std::int64_t cycles = 20'000'000;  // about 10 ms: launch overhead is far below 1%
  auto sampler = aisp::make_device_sampler(aisp::timing_mode::cold, stream);
  sampler->prepare([&] { aisp::launch_spin_kernel(cycles, span_ns, stream); }, 1);
  std::vector<double> measured;
  std::vector<double> truth;
  for (int i = 0; i < 15; ++i) {
    const auto record = sampler->take();
    measured.push_back(record.duration_s);
    truth.push_back(static_cast<double>(*span_ns) * 1e-9);
    EXPECT_GT(record.sm_clock_mhz, 100.0);
    EXPECT_GE(record.host_wall_s, record.duration_s);
  }
  const double ratio = median(measured) / median(truth);
  std::printf("spin kernel: event median %.6f s, globaltimer median %.6f s, ratio %.5f\n", median(measured),
              median(truth), ratio);
  EXPECT_NEAR(ratio, 1.0, 0.01) << "event time " << median(measured) << " s vs globaltimer " << median(truth) << " s";
  AISP_CUDA_CHECK(cudaFreeHost(span_ns));
  AISP_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(sm_clock_probe, reads_a_clock_between_100_mhz_and_3_ghz) {
  AISP_REQUIRE_GPU();
  aisp::sm_clock_probe probe;
  const double mhz = probe.measure_mhz(nullptr);
  EXPECT_GT(mhz, 100.0);
  EXPECT_LT(mhz, 3000.0);
}

}  // namespace
