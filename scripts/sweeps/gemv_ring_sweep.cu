// gemv_ring_sweep: issue 19's weight-only GEMV (ch16:gemv_fp8_weights / _int8_weights, W 28672 x
// 8192) timed over the ring kernel's shapes (Ring chunk loads a lane, MinBlocks blocks an SM),
// beside the read-only stream of the same bytes and a device-to-device copy: whether the kernel or
// the memory stops it short of 85% of the copy ceiling. A sweep, not a pair: every verdict comes
// from `aisp bench run --targets ch16`; this only says which shape to try there.
// Build (here): scripts/sweeps/build_gemv_ring_sweep.sh; run (device): gemv_ring_sweep [rows k]
#include <cuda_fp8.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../../chapters/ch16/gemv_kernels.cuh"

namespace aisp {
// The harness's own comes from the launch shape it records; a sweep asks the device.
int device_sm_count() {
  static const int count = [] {
    int device = 0;
    int sms = 0;
    AISP_CUDA_CHECK(cudaGetDevice(&device));
    AISP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  }();
  return count;
}
}  // namespace aisp

namespace {

using aisp::ch16::gemv_args;

// Every 16-byte chunk read once, as the GEMV reads it; the xor keeps the loads.
__global__ void read_stream_kernel(const uint4* data, std::size_t chunks, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < chunks; i += stride * 4) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = i + u * stride < chunks ? aisp::ch16::load_streaming(data + i + u * stride) : uint4{};
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

template <class F>
double mean_us(F&& launch, int reps = 30) {
  cudaEvent_t start, stop;
  AISP_CUDA_CHECK(cudaEventCreate(&start));
  AISP_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) launch();
  AISP_CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i) launch();
  AISP_CUDA_CHECK(cudaEventRecord(stop));
  AISP_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  AISP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  AISP_CUDA_CHECK(cudaEventDestroy(start));
  AISP_CUDA_CHECK(cudaEventDestroy(stop));
  return 1000.0 * ms / reps;
}

template <class Weight, int Ring, int MinBlocks>
void time_ring(const char* name, const gemv_args& a, double bytes) {
  const double us = mean_us([&] { aisp::ch16::launch_gemv_ring<Weight, Ring, MinBlocks>(a, nullptr); });
  std::printf("%-6s ring %2d min_blocks %d: %8.2f us  %7.1f GB/s\n", name, Ring, MinBlocks, us, bytes / us * 1e-3);
}

template <class Weight>
void sweep(const char* name, const gemv_args& a, double bytes) {
  time_ring<Weight, 4, 4>(name, a, bytes);
  time_ring<Weight, 6, 4>(name, a, bytes);
  time_ring<Weight, 8, 2>(name, a, bytes);
  time_ring<Weight, 8, 3>(name, a, bytes);
  time_ring<Weight, 8, 4>(name, a, bytes);
  time_ring<Weight, 12, 2>(name, a, bytes);
  time_ring<Weight, 12, 3>(name, a, bytes);
  time_ring<Weight, 16, 2>(name, a, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 2 ? std::atoll(argv[1]) : 28672;
  const int k = argc > 2 ? std::atoi(argv[2]) : 8192;
  const std::size_t weight_bytes = static_cast<std::size_t>(rows) * k;
  std::vector<unsigned char> host_codes(weight_bytes);
  unsigned state = 12345u;
  for (auto& c : host_codes) {  // e4m3 codes of magnitude under 2 (exponent field < 8), either sign
    state = state * 1664525u + 1013904223u;
    c = static_cast<unsigned char>((state >> 24) & 0xBF);
  }
  std::vector<__nv_bfloat16> host_x(k);
  for (auto& v : host_x) {
    state = state * 1664525u + 1013904223u;
    v = __float2bfloat16(static_cast<float>(state >> 8) / 16777216.0f - 0.5f);
  }
  void* w = nullptr;
  void* w_copy = nullptr;
  __nv_bfloat16* x = nullptr;
  __nv_bfloat16* y = nullptr;
  float* scale = nullptr;
  unsigned* sink = nullptr;
  AISP_CUDA_CHECK(cudaMalloc(&w, weight_bytes));
  AISP_CUDA_CHECK(cudaMalloc(&w_copy, weight_bytes));
  AISP_CUDA_CHECK(cudaMalloc(&x, k * sizeof(__nv_bfloat16)));
  AISP_CUDA_CHECK(cudaMalloc(&y, rows * sizeof(__nv_bfloat16)));
  AISP_CUDA_CHECK(cudaMalloc(&scale, rows * sizeof(float)));
  AISP_CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  AISP_CUDA_CHECK(cudaMemcpy(w, host_codes.data(), weight_bytes, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(x, host_x.data(), k * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemset(scale, 0, rows * sizeof(float)));
  const double bytes = static_cast<double>(weight_bytes);
  std::printf("rows %lld k %d: %.1f MB of 8-bit weights, %d SMs\n", static_cast<long long>(rows), k, bytes / 1e6, aisp::device_sm_count());

  const double copy_us = mean_us([&] { AISP_CUDA_CHECK(cudaMemcpyAsync(w_copy, w, weight_bytes, cudaMemcpyDeviceToDevice)); });
  std::printf("copy D2D: %8.2f us  %7.1f GB/s (read + write)\n", copy_us, 2 * bytes / copy_us * 1e-3);
  for (const int per_sm : {2, 4, 8, 16}) {
    const unsigned blocks = static_cast<unsigned>(per_sm * aisp::device_sm_count());
    const double us = mean_us([&] { read_stream_kernel<<<blocks, 256>>>(static_cast<const uint4*>(w), weight_bytes / 16, sink); });
    std::printf("read stream, %2d blocks an SM: %8.2f us  %7.1f GB/s\n", per_sm, us, bytes / us * 1e-3);
  }
  gemv_args a;
  a.w = w;
  a.scale = scale;
  a.code_scale = 1.0f;
  a.x = x;
  a.y = y;
  a.rows = rows;
  a.k = k;
  sweep<__nv_fp8_e4m3>("fp8", a, bytes);
  sweep<aisp::ch16::int8_by_bits>("int8", a, bytes);
  AISP_CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}
