// Memory probes: HBM copy (cudaMemcpy and a float4 kernel) and triad, counting bytes read plus
// written; L2 and shared-memory read bandwidth; a pointer-chase latency ladder (L1, L2, HBM).
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "hw/hw_probes.hpp"
#include "hw/probe_kit.cuh"

namespace aisp::hw_probes {
namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c, float s,
                             std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// Every block reads the whole (L2-resident) buffer `passes` times; the sum keeps the loads.
__global__ void l2_read_kernel(const float4* __restrict__ in, std::size_t count, int passes, float* sink) {
  float acc = 0;
  for (int p = 0; p < passes; ++p) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
      const float4 v = __ldcg(in + i);  // bypass L1: measure L2
      acc += v.x + v.y + v.z + v.w;
    }
  }
  if (acc == 12345.678f) *sink = acc;
}

constexpr int smem_floats = 8192;  // 32 KiB per block

__global__ void smem_read_kernel(int loops, float* sink) {
  __shared__ float4 tile[smem_floats / 4];
  for (int i = threadIdx.x; i < smem_floats / 4; i += blockDim.x) tile[i] = make_float4(i, i + 1, i + 2, i + 3);
  __syncthreads();
  float acc = 0;
  int index = threadIdx.x;
  for (int l = 0; l < loops; ++l) {
    const float4 v = tile[index];
    acc += v.x + v.y + v.z + v.w;
    index = (index + blockDim.x) & (smem_floats / 4 - 1);
  }
  if (acc == 12345.678f) *sink = acc;
}

// One thread follows the chain: each load's address comes from the previous load.
__global__ void chase_kernel(const unsigned* next, int steps, unsigned* sink) {
  unsigned at = 0;
  for (int s = 0; s < steps; ++s) at = next[at];
  *sink = at;
}

unsigned grid_for_streaming() { return static_cast<unsigned>(sm_count() * 16); }

probe_result copy_probe(bool use_memcpy) {
  const std::size_t bytes = 1024 * mib;
  device_buffer in(bytes), out(bytes);
  fill_random(in.as<float>(), bytes / sizeof(float), 7);
  auto r = described(use_memcpy ? "copy_memcpy" : "copy_kernel", "memory",
                     use_memcpy ? "cudaMemcpyAsync device to device; bytes read + written"
                                : "grid-stride float4 copy kernel, 16 blocks/SM x 512 threads; bytes read + written",
                     "1 GiB", "B/s");
  const auto seconds = time_repeated(
      [&](cudaStream_t stream) {
        if (use_memcpy) {
          AISP_CUDA_CHECK(cudaMemcpyAsync(out.as<void>(), in.as<void>(), bytes, cudaMemcpyDeviceToDevice, stream));
        } else {
          copy_kernel<<<grid_for_streaming(), 512, 0, stream>>>(in.as<float4>(), out.as<float4>(), bytes / sizeof(float4));
        }
      },
      20);
  summarize_into(r, rates(seconds, 2.0 * static_cast<double>(bytes)));
  return r;
}

probe_result triad_probe() {
  const std::size_t bytes = 512 * mib;
  device_buffer a(bytes), b(bytes), c(bytes);
  fill_random(b.as<float>(), bytes / sizeof(float), 11);
  fill_random(c.as<float>(), bytes / sizeof(float), 13);
  auto r = described("triad", "memory", "a = b + s*c, float4 grid-stride kernel; bytes: 2 read + 1 written", "3 x 512 MiB", "B/s");
  const auto seconds = time_repeated(
      [&](cudaStream_t stream) {
        triad_kernel<<<grid_for_streaming(), 512, 0, stream>>>(a.as<float4>(), b.as<float4>(), c.as<float4>(), 1.5f,
                                                              bytes / sizeof(float4));
      },
      20);
  summarize_into(r, rates(seconds, 3.0 * static_cast<double>(bytes)));
  return r;
}

probe_result l2_probe() {
  const std::size_t bytes = 16 * mib;
  constexpr int passes = 64;
  device_buffer in(bytes), sink(sizeof(float));
  fill_random(in.as<float>(), bytes / sizeof(float), 17);
  auto r = described("l2_read", "cache", "every SM re-reads an L2-resident buffer with ld.cg (L1 bypassed), 64 passes", "16 MiB",
                     "B/s");
  const unsigned blocks = static_cast<unsigned>(sm_count() * 4);
  const auto seconds = time_repeated(
      [&](cudaStream_t stream) {
        l2_read_kernel<<<blocks, 512, 0, stream>>>(in.as<float4>(), bytes / sizeof(float4), passes, sink.as<float>());
      },
      10);
  // Each block covers count/gridDim of the buffer per pass: the whole grid reads it `passes` times.
  summarize_into(r, rates(seconds, static_cast<double>(bytes) * passes));
  return r;
}

probe_result smem_probe() {
  constexpr int loops = 1 << 14;
  constexpr int threads = 512;
  const unsigned blocks = static_cast<unsigned>(sm_count() * 4);
  device_buffer sink(sizeof(float));
  auto r = described("shared_read", "cache", "float4 reads from a 32 KiB shared tile, 4 blocks/SM x 512 threads", "32 KiB per block",
                     "B/s");
  const auto seconds = time_repeated(
      [&](cudaStream_t stream) { smem_read_kernel<<<blocks, threads, 0, stream>>>(loops, sink.as<float>()); }, 10);
  summarize_into(r, rates(seconds, static_cast<double>(blocks) * threads * loops * sizeof(float4)));
  return r;
}

// A random cyclic permutation over 128-byte lines of a `bytes` buffer.
std::vector<unsigned> chase_chain(std::size_t bytes) {
  constexpr std::size_t stride = 128 / sizeof(unsigned);
  const std::size_t lines = bytes / 128;
  std::vector<std::size_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 shuffle(23);
  std::shuffle(order.begin() + 1, order.end(), shuffle);
  std::vector<unsigned> next(bytes / sizeof(unsigned), 0);
  for (std::size_t i = 0; i < lines; ++i) {
    next[order[i] * stride] = static_cast<unsigned>(order[(i + 1) % lines] * stride);
  }
  return next;
}

probe_result latency_probe(const char* level, std::size_t bytes) {
  // The whole cycle at least once (a chain that visits only part of a large buffer would fit in
  // L2 after the warmup run and measure L2), and at least 2^16 loads.
  const int steps = static_cast<int>(std::clamp<std::size_t>(bytes / 128, std::size_t{1} << 16, std::size_t{1} << 22));
  const auto chain = chase_chain(bytes);
  device_buffer next(bytes), sink(sizeof(unsigned));
  AISP_CUDA_CHECK(cudaMemcpy(next.as<void>(), chain.data(), bytes, cudaMemcpyHostToDevice));
  auto r = described(std::string("latency_") + level, "cache",
                     "one thread chases a random cycle of 128-byte lines; time per dependent load",
                     std::to_string(bytes / 1024) + " KiB", "s");
  const auto seconds = time_repeated(
      [&](cudaStream_t stream) { chase_kernel<<<1, 1, 0, stream>>>(next.as<unsigned>(), steps, sink.as<unsigned>()); }, 5, 1);
  std::vector<double> per_load;
  for (double s : seconds) per_load.push_back(s / steps);
  summarize_into(r, per_load);
  return r;
}

}  // namespace

std::vector<probe_result> memory_probes() { return {copy_probe(true), copy_probe(false), triad_probe()}; }

std::vector<probe_result> cache_probes() {
  return {l2_probe(), smem_probe(), latency_probe("l1", 16 * 1024), latency_probe("l2", 8 * mib),
          latency_probe("hbm", 256 * mib)};
}

}  // namespace aisp::hw_probes
