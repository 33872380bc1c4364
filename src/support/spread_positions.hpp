// Note [spread positions]: where a challenge perturbs a buffer. Positions drawn independently at
// random all land in one half of a row with probability 2^(1-count): a kernel that reads half of
// each row then looked like one that reads all of it, or none of it (1 run in 128 at 8 positions,
// seen in CI). Here the positions form a Latin hypercube over the buffer's shape: along every
// axis, position k lies in its own 1/count-th of the axis's range, with the axes' strata paired
// by independent random permutations, and the coordinates' residues mod 4 are balanced the same
// way. Whatever contiguous part of any one axis a kernel skips, and whichever residues mod 4 (2:4
// sparsity, every other element), the positions hit it in proportion; which elements they are
// stays unpredictable to the kernel. The jitter challenge perturbs such positions (8); a timed
// call's outputs are probed at such positions (4,096), so a part of an output left unwritten on
// timed calls only is found whatever axis it lies along.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "aisp/workload.hpp"

namespace aisp {

// `count` distinct row-major positions over a buffer of shape `extents` (outermost first), or
// every position when the buffer has no more than `count` elements.
[[nodiscard]] std::vector<std::size_t> spread_positions(std::uint64_t seed, const std::vector<std::int64_t>& extents,
                                                        std::size_t count);

// A buffer's shape for spread_positions: its declared dims (outermost first) when they account
// for its `elements`, else one flat axis.
[[nodiscard]] std::vector<std::int64_t> shape_of(const buffer_spec& spec, const workload& work, std::int64_t elements);

}  // namespace aisp
