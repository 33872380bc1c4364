// Deterministic input generation: element i of buffer b under seed s is a pure function of
// (s, b, i), so the parent (for the reference) and the worker (for the variant) produce the same
// bytes without sharing memory, and any element can be regenerated alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "aisp/buffer_spec.hpp"

namespace aisp {

[[nodiscard]] std::uint64_t buffer_stream_id(std::uint64_t seed, std::string_view buffer_name);

// Fills `count` elements of `type` at `base` following `init`.
void fill_seeded(dtype type, init_distribution init, std::uint64_t stream_id, void* base,
                 std::size_t count);

}  // namespace aisp
