// Host side of call_fill.hpp, for host pairs: the same seeds, the same fills.
#include <algorithm>
#include <cstring>
#include <vector>

#include "harness/call_fill.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {
namespace {

// Byte `index` of an output filled from `fill`: the poison's bytes repeat every element.
unsigned char fill_byte(const output_fill& fill, const unsigned char* poison, std::size_t width, std::size_t index) {
  return fill.poison ? poison[index % width] : random_byte(fill.seed, index);
}

}  // namespace

std::uint64_t call_seed(std::uint64_t base, std::uint64_t index) {
  return buffer_stream_id(base ^ (index * 0x9E3779B97F4A7C15ull), "call");
}

void host_fill_input(dtype type, init_distribution init, std::uint64_t seed, void* base, std::size_t count) {
  fill_seeded(type, init, seed, base, count);
}

// Straight into the buffer: a temporary the size of the outputs would fault its pages in on
// every call, and those faults land in the visit's count (M6).
void host_fill_output(dtype type, const output_fill& fill, void* base, std::size_t count) {
  if (fill.poison) {
    fill_poison(type, base, count);
  } else {
    fill_random_bytes(fill.seed, base, count * dtype_size(type));
  }
}

void host_derive_input(dtype from_type, const void* source, dtype to_type, void* target, std::size_t count,
                       double scale) {
  for_each_element_range(count, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) store_derived(to_type, target, i, load_as_double(from_type, source, i), scale);
  });
}

fill_matches host_count_fill(dtype type, const output_fill& fill, const void* base, std::size_t count,
                             std::size_t listed) {
  const std::size_t width = dtype_size(type);
  unsigned char poison[8] = {};
  fill_poison(type, poison, 1);
  const auto* actual = static_cast<const unsigned char*>(base);
  fill_matches matches;
  for (std::size_t e = 0; e < count; ++e) {
    bool same = true;
    for (std::size_t k = 0; k < width && same; ++k) same = actual[e * width + k] == fill_byte(fill, poison, width, e * width + k);
    if (!same) continue;
    if (matches.first.size() < listed) matches.first.push_back(e);
    ++matches.count;
  }
  return matches;
}

}  // namespace aisp
