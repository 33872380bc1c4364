// Note [scattered challenge values] (runner/candidate_accuracy.cpp): a challenge whose inputs are
// the declared draws but for a secret few elements that carry challenge values, so that no test
// of a few elements tells it from a timed call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {

// How many elements of each buffer carry each level's values (fewer where two draws meet).
inline constexpr std::size_t scattered_per_level = 16;

// Whether `level`'s values can be scattered into this buffer: wide, wider and repeated where
// widens() says so; non-integers into a float input drawn as small integers.
[[nodiscard]] bool scatters(const buffer_spec& spec, input_values level);

// The draws at `base` (`count` elements, declared values) with scattered_per_level elements a
// level moved to its values, at secret positions drawn from `stream_id`, never one element
// twice. Repeated copies the value of one of the 16 elements before it, so two elements of a row
// are equal without either standing out; wide and wider scale the draw; non-integers add 1/2.
// Levels that do not scatter into `spec` are skipped. Returns how many elements changed.
std::size_t scatter_levels(const buffer_spec& spec, const std::vector<input_values>& levels, std::uint64_t stream_id, void* base,
                           std::size_t count);

}  // namespace aisp
