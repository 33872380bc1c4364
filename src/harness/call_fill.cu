// Device side of call_fill.hpp: grid-stride kernels on the worker's stream.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "aisp/check.hpp"
#include "harness/call_fill.hpp"
#include "harness/harness_kernels.cuh"
#include "support/seeded_fill.hpp"

namespace aisp {
namespace {

using harness_kernels::blocks_for;
using harness_kernels::mix64;
constexpr int fill_threads = harness_kernels::block_threads;

__device__ inline double unit_value(std::uint64_t stream, std::uint64_t index) {
  return static_cast<double>(mix64(stream ^ mix64(index)) >> 11) * 0x1.0p-53;
}

__device__ inline void store(dtype type, void* base, std::size_t i, double value) {
  switch (type) {
    case dtype::f64: static_cast<double*>(base)[i] = value; return;
    case dtype::f32: static_cast<float*>(base)[i] = __double2float_rn(value); return;
    case dtype::f16: static_cast<__half*>(base)[i] = __float2half_rn(__double2float_rn(value)); return;
    case dtype::bf16: static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(__double2float_rn(value)); return;
    case dtype::i32: static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(value); return;
    case dtype::i64: static_cast<std::int64_t*>(base)[i] = static_cast<std::int64_t>(value); return;
    case dtype::u8: static_cast<std::uint8_t*>(base)[i] = static_cast<std::uint8_t>(value < 0 ? 0 : value); return;
    case dtype::i8: static_cast<std::int8_t*>(base)[i] = static_cast<std::int8_t>(fmin(127.0, fmax(-127.0, rint(value)))); return;
    case dtype::e4m3:
      static_cast<__nv_fp8_storage_t*>(base)[i] = __nv_cvt_float_to_fp8(__double2float_rn(value), __NV_SATFINITE, __NV_E4M3);
      return;
    case dtype::e5m2:
      static_cast<__nv_fp8_storage_t*>(base)[i] = __nv_cvt_float_to_fp8(__double2float_rn(value), __NV_SATFINITE, __NV_E5M2);
      return;
  }
}

__device__ inline double load(dtype type, const void* base, std::size_t i) {
  switch (type) {
    case dtype::f64: return static_cast<const double*>(base)[i];
    case dtype::f32: return static_cast<const float*>(base)[i];
    case dtype::f16: return __half2float(static_cast<const __half*>(base)[i]);
    case dtype::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case dtype::i32: return static_cast<const std::int32_t*>(base)[i];
    case dtype::i64: return static_cast<double>(static_cast<const std::int64_t*>(base)[i]);
    case dtype::u8: return static_cast<const std::uint8_t*>(base)[i];
    case dtype::i8: return static_cast<const std::int8_t*>(base)[i];
    case dtype::e4m3: return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<const __nv_fp8_storage_t*>(base)[i], __NV_E4M3)));
    case dtype::e5m2: return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<const __nv_fp8_storage_t*>(base)[i], __NV_E5M2)));
  }
  return 0.0;
}

// Stores `value` rounded to `type`, then flushes a subnormal result (below smallest_normal; 0:
// none) to a signed zero: derived_value() of element_codec.hpp on the device.
__device__ inline void store_flushed(dtype type, void* base, std::size_t i, double value, double smallest_normal) {
  store(type, base, i, value);
  if (smallest_normal <= 0) return;
  const double rounded = load(type, base, i);
  if (rounded != 0.0 && fabs(rounded) < smallest_normal) store(type, base, i, copysign(0.0, rounded));
}

__global__ void derive_kernel(dtype from_type, const void* source, dtype to_type, void* target, std::size_t count,
                              double scale, double smallest_normal) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    store_flushed(to_type, target, i, scale * load(from_type, source, i), smallest_normal);
  }
}

__global__ void widen_kernel(dtype type, bool to_grid, double scale, double shift, void* base, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const double value = load(type, base, i);
    store(type, base, i, to_grid ? (floor(value * 8.0) + 0.5) / 8.0 : scale * value + shift);
  }
}

// A bijection of [0, 2^(2*half_bits)): four Feistel rounds keyed by the seed. Cycle-walking
// (apply again until the value is below n) restricts it to a bijection of [0, n).
__device__ inline std::uint64_t feistel(std::uint64_t value, std::uint64_t seed, int half_bits) {
  const std::uint64_t mask = (std::uint64_t{1} << half_bits) - 1;
  std::uint64_t left = value >> half_bits;
  std::uint64_t right = value & mask;
  for (std::uint64_t round = 0; round < 4; ++round) {
    const std::uint64_t next = left ^ (mix64(seed ^ mix64(right ^ (round << 58))) & mask);
    left = right;
    right = next;
  }
  return (left << half_bits) | right;
}

// smallest_normal: 0, or Note [no subnormal draws] (seeded_fill.cpp): a drawn value that rounds
// below it is flushed to a signed zero, as the host fill does.
__global__ void fill_input_kernel(dtype type, init_distribution init, std::uint64_t stream, void* base,
                                  std::size_t count, int half_bits, double smallest_normal) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    double value = 0;
    switch (init) {
      case init_distribution::uniform_signed: value = 2.0 * unit_value(stream, i) - 1.0; break;
      case init_distribution::uniform_unit: value = unit_value(stream, i); break;
      case init_distribution::small_integers: value = floor(17.0 * unit_value(stream, i)) - 8.0; break;
      case init_distribution::index_permutation: {
        std::uint64_t walked = i;
        do {
          walked = feistel(walked, stream, half_bits);
        } while (walked >= count);
        value = static_cast<double>(walked);
        break;
      }
    }
    store_flushed(type, base, i, value, smallest_normal);
  }
}

// The pattern byte at `byte` of a buffer filled from `seed` (the host's fill_random_bytes).
__device__ inline unsigned char pattern_byte(std::uint64_t seed, std::size_t byte) {
  const std::uint64_t word = mix64(seed ^ mix64(byte / 8));
  return static_cast<unsigned char>(word >> (8 * (byte % 8)));
}

__device__ inline unsigned char fill_byte(const output_fill& fill, const unsigned char* poison, std::size_t width,
                                          std::size_t byte) {
  return fill.poison ? poison[byte % width] : pattern_byte(fill.seed, byte);
}

struct poison_bytes {
  unsigned char bytes[8];
};

__global__ void fill_output_kernel(output_fill fill, poison_bytes poison, std::size_t width, unsigned char* base,
                                   std::size_t bytes) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; b < bytes; b += stride) {
    base[b] = fill_byte(fill, poison.bytes, width, b);
  }
}

__global__ void count_fill_kernel(output_fill fill, poison_bytes poison, std::size_t width, const unsigned char* base,
                                  std::size_t count, unsigned long long* matched, unsigned long long* listed,
                                  std::size_t listed_capacity) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < count; e += stride) {
    bool same = true;
    for (std::size_t k = 0; k < width; ++k) same = same && base[e * width + k] == fill_byte(fill, poison.bytes, width, e * width + k);
    if (!same) continue;
    const unsigned long long slot = atomicAdd(matched, 1ull);
    if (slot < listed_capacity) listed[slot] = e;
  }
}

__global__ void gather_kernel(const unsigned char* base, std::size_t width, const unsigned long long* positions,
                              std::size_t count, unsigned char* out) {
  const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (j >= count) return;
  for (std::size_t k = 0; k < width; ++k) out[j * width + k] = base[positions[j] * width + k];
}

poison_bytes poison_of(dtype type) {
  poison_bytes poison{};
  host_fill_output(type, {0, true}, poison.bytes, 1);
  return poison;
}

// Device scratch for a few values, freed with the object.
template <class T>
class device_array {
 public:
  explicit device_array(std::size_t count) : count_(count) {
    AISP_CUDA_CHECK(cudaMalloc(&data_, sizeof(T) * (count == 0 ? 1 : count)));
  }
  ~device_array() { cudaFree(data_); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  [[nodiscard]] T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

}  // namespace

void device_fill_input(dtype type, init_distribution init, std::uint64_t seed, void* base, std::size_t count,
                       cudaStream_t stream) {
  if (count == 0) return;
  int half_bits = 1;
  while ((std::uint64_t{1} << (2 * half_bits)) < count) ++half_bits;
  const bool flush = draws_can_be_subnormal(type);  // Note [no subnormal draws]
  fill_input_kernel<<<blocks_for(count), fill_threads, 0, stream>>>(type, init, seed, base, count, half_bits,
                                                                      flush ? dtype_smallest_normal(type) : 0.0);
  AISP_CUDA_CHECK(cudaGetLastError());
}

void device_derive_input(dtype from_type, const void* source, dtype to_type, void* target, std::size_t count,
                         double scale, cudaStream_t stream) {
  if (count == 0) return;
  derive_kernel<<<blocks_for(count), fill_threads, 0, stream>>>(from_type, source, to_type, target, count, scale,
                                                                  dtype_smallest_normal(to_type));
  AISP_CUDA_CHECK(cudaGetLastError());
}

void device_widen_draws(dtype type, const draw_reshape& reshape, void* base, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  widen_kernel<<<blocks_for(count), fill_threads, 0, stream>>>(type, reshape.to_grid, reshape.scale, reshape.shift, base, count);
  AISP_CUDA_CHECK(cudaGetLastError());
}

void device_fill_output(dtype type, const output_fill& fill, void* base, std::size_t count, cudaStream_t stream) {
  const std::size_t width = dtype_size(type);
  const std::size_t bytes = count * width;
  if (bytes == 0) return;
  fill_output_kernel<<<blocks_for(bytes), fill_threads, 0, stream>>>(fill, poison_of(type), width,
                                                                      static_cast<unsigned char*>(base), bytes);
  AISP_CUDA_CHECK(cudaGetLastError());
}

fill_matches device_count_fill(dtype type, const output_fill& fill, const void* base, std::size_t count,
                               std::size_t listed, cudaStream_t stream) {
  fill_matches result;
  device_array<unsigned long long> matched(1);
  device_array<unsigned long long> indices(listed);
  AISP_CUDA_CHECK(cudaMemsetAsync(matched.get(), 0, sizeof(unsigned long long), stream));
  count_fill_kernel<<<blocks_for(count), fill_threads, 0, stream>>>(fill, poison_of(type), dtype_size(type),
                                                                     static_cast<const unsigned char*>(base), count,
                                                                     matched.get(), indices.get(), listed);
  AISP_CUDA_CHECK(cudaGetLastError());
  unsigned long long total = 0;
  AISP_CUDA_CHECK(cudaMemcpyAsync(&total, matched.get(), sizeof(total), cudaMemcpyDeviceToHost, stream));
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  result.count = static_cast<std::size_t>(total);
  std::vector<unsigned long long> first(std::min<std::size_t>(result.count, listed));
  if (!first.empty()) {
    AISP_CUDA_CHECK(cudaMemcpyAsync(first.data(), indices.get(), first.size() * sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
    AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::sort(first.begin(), first.end());
  result.first.assign(first.begin(), first.end());
  return result;
}

std::vector<unsigned char> device_gather(const void* base, std::size_t element_size, const std::vector<std::size_t>& positions,
                                         cudaStream_t stream) {
  std::vector<unsigned char> values(positions.size() * element_size);
  if (positions.empty()) return values;
  const std::vector<unsigned long long> wide(positions.begin(), positions.end());
  device_array<unsigned long long> where(wide.size());
  device_array<unsigned char> out(values.size());
  AISP_CUDA_CHECK(cudaMemcpyAsync(where.get(), wide.data(), wide.size() * sizeof(unsigned long long), cudaMemcpyHostToDevice, stream));
  gather_kernel<<<blocks_for(wide.size()), fill_threads, 0, stream>>>(static_cast<const unsigned char*>(base), element_size,
                                                                       where.get(), wide.size(), out.get());
  AISP_CUDA_CHECK(cudaGetLastError());
  AISP_CUDA_CHECK(cudaMemcpyAsync(values.data(), out.get(), values.size(), cudaMemcpyDeviceToHost, stream));
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return values;
}

}  // namespace aisp
