#include "harness/device_probes.hpp"

#include "aisp/check.hpp"
#include "harness/global_timer.cuh"

namespace aisp {
namespace {

__global__ void l2_flush_kernel(std::uint32_t* scratch, std::size_t words,
                                std::uint32_t generation) {
  // A new value each flush so the writes are never elided; 16-byte stores fill HBM bandwidth.
  const std::size_t vectors = words / 4;
  auto* scratch4 = reinterpret_cast<uint4*>(scratch);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       i < vectors; i += stride) {
    const auto v = static_cast<std::uint32_t>(i) ^ generation;
    scratch4[i] = make_uint4(v, v + 1, v + 2, v + 3);
  }
}

// Note [clean flush] (docs/proposals/clean-l2-flush.md; the default since 2026-11-27, `--l2-flush
// write` keeps the older flush): the write flush above leaves the L2 full of dirty lines, which
// the timed variant writes back. tests/gpu/l2_flush_test.cu measures that both evict (a pointer
// chase: 686 cycles a load after the read flush, 687 after the write flush, 283 warm; H100,
// 2026-11-27). This one reads a zeroed
// scratch instead: read lines are clean, and the previous call's dirty lines are written back
// here, before the timed span. The XOR of what was read goes to the sink only when it matches
// the generation (never: the scratch holds zeros), so no load can be elided.
__global__ void l2_read_flush_kernel(const uint4* __restrict__ scratch, std::size_t vectors, std::uint32_t generation,
                                     std::uint32_t* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::uint32_t folded = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < vectors; i += stride) {
    const uint4 v = __ldcg(scratch + i);  // cached in L2 only
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (folded == generation) *sink = folded;
}

__global__ void clock_probe_kernel(long long spin_cycles, long long* result) {
  const unsigned long long start_ns = global_timer_ns();
  const long long start_cycles = clock64();
  long long now = start_cycles;
  while (now - start_cycles < spin_cycles) now = clock64();
  const unsigned long long end_ns = global_timer_ns();
  result[0] = now - start_cycles;
  result[1] = static_cast<long long>(end_ns - start_ns);
}

__global__ void spin_kernel(long long cycles, long long* span_ns) {
  const unsigned long long start_ns = global_timer_ns();
  const long long start_cycles = clock64();
  while (clock64() - start_cycles < cycles) {
  }
  *span_ns = static_cast<long long>(global_timer_ns() - start_ns);
}

}  // namespace

l2_flusher::l2_flusher(l2_flush_kind kind) : kind_(kind) {
  int device = 0;
  int l2_bytes = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  bytes_ = 2 * static_cast<std::size_t>(l2_bytes) + (16u << 20);  // 2x L2 plus margin
  AISP_CUDA_CHECK(cudaMalloc(&scratch_, bytes_ + sizeof(std::uint32_t)));  // the scratch, then the read flush's sink
  if (kind_ == l2_flush_kind::read) {
    AISP_CUDA_CHECK(cudaMemset(scratch_, 0, bytes_ + sizeof(std::uint32_t)));
    AISP_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

l2_flusher::~l2_flusher() { cudaFree(scratch_); }

void l2_flusher::flush(cudaStream_t stream) {
  ++generation_;
  if (kind_ == l2_flush_kind::write) {
    l2_flush_kernel<<<1024, 256, 0, stream>>>(scratch_, bytes_ / sizeof(std::uint32_t), generation_);
  } else {
    if (generation_ == 0) generation_ = 1;  // never the XOR of the zeroed scratch
    l2_read_flush_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const uint4*>(scratch_), bytes_ / sizeof(uint4), generation_,
                                                   scratch_ + bytes_ / sizeof(std::uint32_t));
  }
  AISP_CHECK_LAUNCH();
}

sm_clock_probe::sm_clock_probe(std::int64_t spin_cycles) : spin_cycles_(spin_cycles) {
  AISP_CUDA_CHECK(cudaMalloc(&device_result_, 2 * sizeof(long long)));
  AISP_CUDA_CHECK(cudaMallocHost(&host_result_, 2 * sizeof(long long)));
}

sm_clock_probe::~sm_clock_probe() {
  cudaFree(device_result_);
  cudaFreeHost(host_result_);
}

double sm_clock_probe::measure_mhz(cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(spin_cycles_, device_result_);
  AISP_CHECK_LAUNCH();
  AISP_CUDA_CHECK(cudaMemcpyAsync(host_result_, device_result_, 2 * sizeof(long long),
                                  cudaMemcpyDeviceToHost, stream));
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (host_result_[1] <= 0) return 0;
  return static_cast<double>(host_result_[0]) / static_cast<double>(host_result_[1]) * 1e3;
}

__global__ void empty_kernel() {}

void launch_empty_kernel(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  AISP_CHECK_LAUNCH();
}

void launch_spin_kernel(std::int64_t cycles, long long* span_ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(cycles, span_ns);
  AISP_CHECK_LAUNCH();
}

}  // namespace aisp
