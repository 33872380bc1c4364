// Note [scattered challenge values] (runner/benchmark_challenges.cpp): a challenge whose inputs are
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

// One element a scattered call changes: element `index` gets `scale` x element `from`, plus
// `add` (a repeat: scale 1 from an element before it; wide: its own draw scaled; a non-integer:
// its own plus 1/2). Applied in order: a repeat may copy an element changed before it.
struct scattered_element {
  std::size_t index = 0;
  std::size_t from = 0;
  double scale = 1;
  double add = 0;
};

// Where a scattered call changes a buffer of `count` elements: scattered_per_level elements a
// level, at secret positions drawn from `stream_id`, never one element twice. Repeated copies the
// value of an element before it, half of them one of the 16 before, half 16 to 2^16 places back
// (log-uniform), so two elements of a row are equal without either standing out; wide and wider
// scale the draw; non-integers add 1/2. Levels that do not scatter into `spec` are skipped.
[[nodiscard]] std::vector<scattered_element> scatter_plan(const buffer_spec& spec, const std::vector<input_values>& levels,
                                                          std::uint64_t stream_id, std::size_t count);

// The plan applied to the draws at `base` (host memory); returns how many elements changed.
std::size_t scatter_levels(const buffer_spec& spec, const std::vector<input_values>& levels, std::uint64_t stream_id, void* base,
                           std::size_t count);

}  // namespace aisp
