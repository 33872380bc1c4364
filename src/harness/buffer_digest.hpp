// What the harness reads from a whole buffer around a verified call, without copying it out
// (issue 17): a digest that changes when any byte does (inputs mutated, outputs written late)
// and the count of subnormal values (O9). Device versions run on the worker's stream, so a
// buffer of GiBs is read at memory speed instead of crossing PCIe and a host loop; host
// versions serve host pairs. Digests are compared only with digests of the same function.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "aisp/buffer_spec.hpp"
#include "support/element_codec.hpp"  // float_fields_of

namespace aisp {

// A keyed sum over 8-byte words of mix(word, index): any change of content or order changes it
// but with a chance of 2^-64. Synchronizes the stream.
[[nodiscard]] std::uint64_t device_digest(const void* base, std::size_t bytes, cudaStream_t stream);
// Elements whose exponent field is zero and whose mantissa is not (every float dtype, fp8 too).
[[nodiscard]] std::size_t device_count_subnormals(dtype type, const void* base, std::size_t count, cudaStream_t stream);

[[nodiscard]] std::uint64_t host_digest(const void* base, std::size_t bytes);
[[nodiscard]] std::size_t host_count_subnormals(dtype type, const void* base, std::size_t count);


}  // namespace aisp
