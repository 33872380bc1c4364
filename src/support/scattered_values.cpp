#include "support/scattered_values.hpp"

#include <algorithm>
#include <bit>

#include "support/counter_hash.hpp"
#include "support/element_codec.hpp"

namespace aisp {

bool scatters(const buffer_spec& spec, input_values level) {
  if (level == input_values::non_integers)
    return spec.role == buffer_role::input && spec.derived_from.empty() && dtype_is_float(spec.type) &&
           spec.init == init_distribution::small_integers;
  // Never the offset level (Note [offset inputs]): a few shifted elements cancel nothing.
  return level != input_values::declared && level != input_values::offset && widens(spec, level);
}

namespace {

// How far back element i's repeat copies from: 1 to 16 places, or (far) 16 to 2^16, as far on a
// log scale as near, never before the buffer. Red team seventeen's lead: a candidate that compared
// each element with the 16 before it, and ran exact code only on a repeat, stayed wrong on repeats
// farther apart, which no call asked (2026-12-05).
std::size_t repeat_distance(std::uint64_t draw, std::size_t i, bool far) {
  const std::size_t near = 1 + (draw >> 40) % 16;
  if (!far || i < 32) return std::min(near, i);
  const int top = std::min(15, static_cast<int>(std::bit_width(i)) - 2);  // the largest e with 2^(e + 1) <= i
  const int e = 4 + static_cast<int>((draw >> 44) % static_cast<std::uint64_t>(top - 3));
  const std::size_t span = std::size_t{1} << e;
  return std::min(i, span + (draw >> 20) % span);
}

}  // namespace

std::vector<scattered_element> scatter_plan(const buffer_spec& spec, const std::vector<input_values>& levels, std::uint64_t stream_id,
                                            std::size_t count) {
  std::vector<scattered_element> plan;
  if (count == 0) return plan;
  // A stream of its own: where the elements go says nothing of the draws' values.
  const std::uint64_t positions = splitmix64(stream_id ^ 0x5CA77E8EDC4A11E5ull);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const auto level = levels[l];
    if (!scatters(spec, level)) continue;
    for (std::size_t j = 0; j < scattered_per_level; ++j) {
      const std::uint64_t draw = splitmix64(positions ^ splitmix64(l * scattered_per_level + j));
      const std::size_t i = draw % count;
      // Each element once: a second level's change would undo the first's (1/2 + 1/2 is whole).
      if (std::any_of(plan.begin(), plan.end(), [i](const scattered_element& e) { return e.index == i; })) continue;
      if (level == input_values::repeated) {
        if (i == 0) continue;  // nothing before it to repeat
        plan.push_back({i, i - repeat_distance(draw, i, j % 2 == 1), 1.0, 0.0});
      } else if (level == input_values::non_integers) {
        plan.push_back({i, i, 1.0, 0.5});
      } else {
        plan.push_back({i, i, wide_input_scale(level), 0.0});
      }
    }
  }
  return plan;
}

std::size_t scatter_levels(const buffer_spec& spec, const std::vector<input_values>& levels, std::uint64_t stream_id, void* base,
                           std::size_t count) {
  const auto plan = scatter_plan(spec, levels, stream_id, count);
  for (const auto& e : plan) store_from_double(spec.type, base, e.index, e.scale * load_as_double(spec.type, base, e.from) + e.add);
  return plan.size();
}

}  // namespace aisp
