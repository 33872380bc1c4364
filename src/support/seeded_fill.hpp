// Deterministic input generation: element i of buffer b under seed s is a pure function of
// (s, b, i), so the parent (for the reference) and the worker (for the variant) produce the same
// bytes without sharing memory, and any element can be regenerated alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <vector>

#include "aisp/buffer_spec.hpp"

namespace aisp {

[[nodiscard]] std::uint64_t buffer_stream_id(std::uint64_t seed, std::string_view buffer_name);

// Fills `count` elements of `type` at `base` following `init`.
void fill_seeded(dtype type, init_distribution init, std::uint64_t stream_id, void* base,
                 std::size_t count);

}  // namespace aisp

namespace aisp {

// The init a buffer gets: its declared one, or small integers for float buffers in the
// exact-integer challenge. Judge and worker must agree, so both call this.
[[nodiscard]] init_distribution effective_init(const buffer_spec& spec, bool exact_integers);

// `bytes` random bytes from `seed`: the unpredictable output pattern of a verified timed call.
void fill_random_bytes(std::uint64_t seed, void* base, std::size_t bytes);

// The positions at which a timed call's outputs are compared, `count` of `num_elements`.
[[nodiscard]] std::vector<std::size_t> probe_positions(std::uint64_t seed, std::size_t num_elements,
                                                       std::size_t count);

// FNV-1a over raw bytes: input-mutation hashes.
[[nodiscard]] std::uint64_t hash_bytes(const unsigned char* data, std::size_t size);

}  // namespace aisp
