// The FP32 FMA peak: every thread runs 8 independent FMA chains (enough to hide the 4-cycle
// latency at full occupancy), 2 FLOPs per FMA, on inputs that depend on the thread.
#include "hw/hw_probes.hpp"
#include "hw/probe_kit.cuh"

namespace aisp::hw_probes {
namespace {

constexpr int chains = 8;
constexpr int iterations = 1 << 14;

__global__ void fma_kernel(float seed, float* sink) {
  float acc[chains];
  const float a = seed + static_cast<float>(threadIdx.x) * 1e-7f;
  const float b = 0.999999f;
#pragma unroll
  for (int c = 0; c < chains; ++c) acc[c] = a + static_cast<float>(c);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < chains; ++c) acc[c] = fmaf(acc[c], b, a);
  }
  float total = 0;
#pragma unroll
  for (int c = 0; c < chains; ++c) total += acc[c];
  if (total == 12345.678f) *sink = total;  // keeps the chains alive; never true
}

}  // namespace

std::vector<probe_result> fp32_probes() {
  device_buffer sink(sizeof(float));
  const unsigned blocks = static_cast<unsigned>(sm_count() * 8);
  constexpr unsigned threads = 256;
  auto r = described("fp32_fma", "fp32", "8 independent fmaf chains per thread, 8 blocks/SM x 256 threads; 2 FLOP per FMA",
                     "2^14 iterations", "FLOP/s");
  const auto seconds =
      time_repeated([&](cudaStream_t stream) { fma_kernel<<<blocks, threads, 0, stream>>>(0.5f, sink.as<float>()); }, 10);
  const double flops = 2.0 * chains * iterations * static_cast<double>(blocks) * threads;
  summarize_into(r, rates(seconds, flops));
  return {r};
}

}  // namespace aisp::hw_probes
