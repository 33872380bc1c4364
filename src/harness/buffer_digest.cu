// Device side of buffer_digest.hpp: one grid-stride pass, a warp reduction, one atomic per warp.
#include <random>

#include "aisp/check.hpp"
#include "harness/buffer_digest.hpp"
#include "harness/harness_kernels.cuh"

namespace aisp {
namespace {

using harness_kernels::blocks_for;
using harness_kernels::mix64;
constexpr int digest_threads = harness_kernels::block_threads;

__device__ inline unsigned long long warp_sum(unsigned long long value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

// base is 8-byte aligned (cudaMalloc); the last partial word is read byte by byte.
__global__ void digest_kernel(const unsigned char* base, std::size_t bytes, std::uint64_t key, unsigned long long* sum) {
  const std::size_t words = (bytes + 7) / 8;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words; w += stride) {
    std::uint64_t word = 0;
    if (8 * w + 8 <= bytes) {
      word = reinterpret_cast<const std::uint64_t*>(base)[w];
    } else {
      for (std::size_t b = 8 * w; b < bytes; ++b) word |= static_cast<std::uint64_t>(base[b]) << (8 * (b - 8 * w));
    }
    local += mix64(word ^ mix64(w + key));
  }
  local = warp_sum(local);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, local);
}

template <class Bits>
__global__ void subnormal_kernel(const Bits* base, std::size_t count, Bits exponent_mask, Bits mantissa_mask,
                                 unsigned long long* found) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const Bits bits = base[i];
    local += (bits & exponent_mask) == 0 && (bits & mantissa_mask) != 0;
  }
  local = warp_sum(local);
  if ((threadIdx.x & 31) == 0) atomicAdd(found, local);
}

// One counter per process, allocated once: these run many times per verified call, and a
// cudaMalloc/cudaFree pair each time would synchronize the device twice.
unsigned long long* device_counter() {
  static unsigned long long* counter = [] {
    unsigned long long* p = nullptr;
    AISP_CUDA_CHECK(cudaMalloc(&p, sizeof(unsigned long long)));
    return p;
  }();
  return counter;
}

std::uint64_t process_key() {
  static const std::uint64_t key = [] {
    std::random_device entropy;
    return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
  }();
  return key;
}

unsigned long long read_counter(unsigned long long* counter, cudaStream_t stream) {
  unsigned long long value = 0;
  AISP_CUDA_CHECK(cudaMemcpyAsync(&value, counter, sizeof value, cudaMemcpyDeviceToHost, stream));
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return value;
}

template <class Bits>
std::size_t count_with(const void* base, std::size_t count, const float_fields& fields, cudaStream_t stream) {
  auto* found = device_counter();
  AISP_CUDA_CHECK(cudaMemsetAsync(found, 0, sizeof(unsigned long long), stream));
  const auto mantissa_mask = static_cast<Bits>((std::uint64_t{1} << fields.mantissa_bits) - 1);
  const auto exponent_mask = static_cast<Bits>(((std::uint64_t{1} << fields.exponent_bits) - 1) << fields.mantissa_bits);
  subnormal_kernel<Bits><<<blocks_for(count), digest_threads, 0, stream>>>(static_cast<const Bits*>(base), count, exponent_mask,
                                                                            mantissa_mask, found);
  AISP_CUDA_CHECK(cudaGetLastError());
  return static_cast<std::size_t>(read_counter(found, stream));
}

}  // namespace

std::uint64_t device_digest(const void* base, std::size_t bytes, cudaStream_t stream) {
  auto* sum = device_counter();
  AISP_CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof(unsigned long long), stream));
  if (bytes > 0) {
    digest_kernel<<<blocks_for((bytes + 7) / 8), digest_threads, 0, stream>>>(static_cast<const unsigned char*>(base), bytes,
                                                                            process_key(), sum);
    AISP_CUDA_CHECK(cudaGetLastError());
  }
  return read_counter(sum, stream) ^ bytes;
}

std::size_t device_count_subnormals(dtype type, const void* base, std::size_t count, cudaStream_t stream) {
  const auto fields = float_fields_of(type);
  if (count == 0) return 0;
  switch (fields.width_bits) {
    case 64: return count_with<std::uint64_t>(base, count, fields, stream);
    case 32: return count_with<std::uint32_t>(base, count, fields, stream);
    case 16: return count_with<std::uint16_t>(base, count, fields, stream);
    case 8: return count_with<std::uint8_t>(base, count, fields, stream);
    default: return 0;  // integers have no subnormals
  }
}

}  // namespace aisp
