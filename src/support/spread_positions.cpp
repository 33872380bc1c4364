#include "support/spread_positions.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "support/counter_hash.hpp"

namespace aisp {
namespace {

// A counter-based draw: the `index`-th 64-bit value of stream `stream` under `seed`.
std::uint64_t draw(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return splitmix64(seed ^ splitmix64(stream * 0x9E3779B97F4A7C15ull + index));
}

// A permutation of 0..count-1 (Fisher-Yates on counter draws).
std::vector<std::size_t> shuffled(std::uint64_t seed, std::uint64_t stream, std::size_t count) {
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = count; i > 1; --i) std::swap(order[i - 1], order[draw(seed, stream, i) % i]);
  return order;
}

// A coordinate in stratum `stratum` of `strata` along an axis of `extent` elements, congruent to
// `residue` mod 4 where the stratum is wide enough to hold every residue.
std::int64_t coordinate(std::int64_t extent, std::size_t stratum, std::size_t strata, std::size_t residue,
                        std::uint64_t random) {
  const auto low = static_cast<std::int64_t>(static_cast<double>(stratum) * static_cast<double>(extent) / static_cast<double>(strata));
  const auto high = static_cast<std::int64_t>(static_cast<double>(stratum + 1) * static_cast<double>(extent) / static_cast<double>(strata));
  const std::int64_t width = std::max<std::int64_t>(1, high - low);
  if (width < 8) return std::min(extent - 1, low + static_cast<std::int64_t>(random % static_cast<std::uint64_t>(width)));
  // A random group of four inside the stratum, then the element of the asked residue in it.
  const std::int64_t first_group = (low + 3) / 4;
  const std::int64_t groups = high / 4 - first_group;
  const std::int64_t group = first_group + static_cast<std::int64_t>(random % static_cast<std::uint64_t>(groups));
  return group * 4 + static_cast<std::int64_t>(residue);
}

}  // namespace

std::vector<std::size_t> spread_positions(std::uint64_t seed, const std::vector<std::int64_t>& extents,
                                          std::size_t count) {
  std::size_t total = 1;
  for (const std::int64_t extent : extents) total *= static_cast<std::size_t>(std::max<std::int64_t>(0, extent));
  std::vector<std::size_t> positions;
  if (total == 0 || count == 0) return positions;
  if (total <= count) {
    positions.resize(total);
    std::iota(positions.begin(), positions.end(), std::size_t{0});
    return positions;
  }
  // strata[axis][k]: the stratum of position k along the axis; residues[axis][k] % 4: its
  // coordinate's residue mod 4, so that a kernel that reads 2 of every 4 elements (a 2:4 sparsity
  // assumption) or every other one is hit in proportion too.
  std::vector<std::vector<std::size_t>> strata;
  std::vector<std::vector<std::size_t>> residues;
  for (std::size_t axis = 0; axis < extents.size(); ++axis) {
    strata.push_back(shuffled(seed, axis, count));
    residues.push_back(shuffled(seed, 2 * extents.size() + axis, count));
  }
  std::set<std::size_t> taken;
  // Axes shorter than `count` repeat coordinates, so two positions can coincide: a coincidence
  // draws again within the same strata, a few times, before the position is left out.
  constexpr std::uint64_t attempts = 16;
  for (std::size_t k = 0; k < count; ++k) {
    for (std::uint64_t attempt = 0; attempt < attempts; ++attempt) {
      std::size_t flat = 0;
      for (std::size_t axis = 0; axis < extents.size(); ++axis) {
        const std::uint64_t random = draw(seed, extents.size() + axis, k * attempts + attempt);
        flat = flat * static_cast<std::size_t>(extents[axis]) +
               static_cast<std::size_t>(coordinate(extents[axis], strata[axis][k], count, residues[axis][k] % 4, random));
      }
      if (taken.insert(flat).second) {
        positions.push_back(flat);
        break;
      }
    }
  }
  // Coincidences left out (short axes, many positions): random positions make up the count.
  for (std::uint64_t extra = 0; positions.size() < count && extra < 16 * count; ++extra) {
    const auto flat = static_cast<std::size_t>(draw(seed, 3 * extents.size(), extra) % total);
    if (taken.insert(flat).second) positions.push_back(flat);
  }
  return positions;
}

std::vector<std::int64_t> shape_of(const buffer_spec& spec, const workload& work, std::int64_t elements) {
  std::int64_t product = 1;
  for (const auto& dim : spec.dims) product *= work.get(dim);
  if (spec.dims.empty() || product != elements) return {elements};
  std::vector<std::int64_t> extents;
  for (const auto& dim : spec.dims) extents.push_back(work.get(dim));
  return extents;
}

}  // namespace aisp
