#include "support/scattered_values.hpp"

#include <algorithm>

#include "support/counter_hash.hpp"
#include "support/element_codec.hpp"

namespace aisp {

bool scatters(const buffer_spec& spec, input_values level) {
  if (level == input_values::non_integers)
    return spec.role == buffer_role::input && spec.derived_from.empty() && dtype_is_float(spec.type) &&
           spec.init == init_distribution::small_integers;
  return level != input_values::declared && widens(spec, level);
}

std::size_t scatter_levels(const buffer_spec& spec, const std::vector<input_values>& levels, std::uint64_t stream_id, void* base,
                           std::size_t count) {
  if (count == 0) return 0;
  // A stream of its own: where the elements go says nothing of the draws' values.
  const std::uint64_t positions = splitmix64(stream_id ^ 0x5CA77E8EDC4A11E5ull);
  std::vector<std::size_t> taken;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const auto level = levels[l];
    if (!scatters(spec, level)) continue;
    for (std::size_t j = 0; j < scattered_per_level; ++j) {
      const std::uint64_t draw = splitmix64(positions ^ splitmix64(l * scattered_per_level + j));
      const std::size_t i = draw % count;
      // Each element once: a second level's change would undo the first's (1/2 + 1/2 is whole).
      if (std::find(taken.begin(), taken.end(), i) != taken.end()) continue;
      const double value = load_as_double(spec.type, base, i);
      double moved = wide_input_scale(level) * value;
      if (level == input_values::repeated) {
        if (i == 0) continue;  // nothing before it to repeat
        moved = load_as_double(spec.type, base, i - std::min<std::size_t>(i, 1 + (draw >> 40) % 16));
      } else if (level == input_values::non_integers) {
        moved = value + 0.5;
      }
      store_from_double(spec.type, base, i, moved);
      taken.push_back(i);
    }
  }
  return taken.size();
}

}  // namespace aisp
