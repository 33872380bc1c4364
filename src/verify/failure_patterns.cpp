#include "verify/failure_patterns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "support/element_codec.hpp"

#include "verify/compare.hpp"

namespace aisp::verify {
namespace {

std::vector<bool> failing_elements(dtype type, std::span<const unsigned char> actual, std::span<const double> expected,
                                   const tolerance& tol) {
  std::vector<bool> failing(expected.size());
  const double floor = finite_rms(expected);  // as compare_output judges them
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double got = load_as_double(type, actual.data(), i);
    failing[i] = is_poison(type, actual.data(), i) || std::isnan(got) || std::abs(got - expected[i]) > element_bound(tol, expected[i], floor);
  }
  return failing;
}

bool is_spatial(const std::string& dim) {
  return dim == "height" || dim == "width" || dim == "h" || dim == "w" || dim == "x" || dim == "y";
}

// Per named dimension: are all failures in its upper half, or all at odd indices?
void dimension_codes(const buffer_spec& spec, const workload& work, const std::vector<bool>& failing,
                     std::vector<std::string>& codes) {
  std::vector<std::int64_t> extents;
  for (const auto& d : spec.dims) extents.push_back(work.get(d));
  for (std::size_t axis = 0; axis < spec.dims.size(); ++axis) {
    std::int64_t inner = 1;
    for (std::size_t later = axis + 1; later < extents.size(); ++later) inner *= extents[later];
    const std::int64_t extent = extents[axis];
    bool upper_half_only = extent > 1;
    bool odd_only = extent > 1;
    bool any = false;
    for (std::size_t i = 0; i < failing.size(); ++i) {
      if (!failing[i]) continue;
      any = true;
      const std::int64_t index = (static_cast<std::int64_t>(i) / inner) % extent;
      upper_half_only = upper_half_only && index >= extent / 2;
      odd_only = odd_only && index % 2 == 1;
    }
    if (!any) return;
    const auto& dim = spec.dims[axis];
    // A served trace's requests are its batch and each request's tokens its sequence (labs/decode).
    if (upper_half_only && (dim == "batch" || dim == "requests")) codes.push_back("W5");
    if (upper_half_only && (dim == "seq" || dim == "sequence" || dim == "new_tokens" || dim == "output_max")) codes.push_back("W6");
    if (odd_only && is_spatial(dim)) codes.push_back("W7");
  }
}

// The other float format of the same width, which a kernel could write by mistake (O8).
std::optional<dtype> sibling_format(dtype type) {
  switch (type) {
    case dtype::bf16: return dtype::f16;
    case dtype::f16: return dtype::bf16;
    case dtype::e4m3: return dtype::e5m2;
    case dtype::e5m2: return dtype::e4m3;
    default: return std::nullopt;
  }
}

bool passes_as(dtype reinterpret, std::span<const unsigned char> actual, std::span<const double> expected,
               const tolerance& tol) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double got = load_as_double(reinterpret, actual.data(), i);
    if (std::isnan(got) || std::abs(got - expected[i]) > tol.atol + 2 * tol.rtol * std::abs(expected[i]) + 1e-3 * std::abs(expected[i]))
      return false;
  }
  return true;
}

// Every value exactly representable in half or bfloat16, while the truth is not: the variant
// computed in 16 bits behind an fp32 declaration.
bool carries_half_precision(std::span<const unsigned char> actual, std::span<const double> expected) {
  std::size_t inexact_truth = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto got = static_cast<float>(load_as_double(dtype::f32, actual.data(), i));
    const bool half_exact = half_bits_to_float(float_to_half_bits(got)) == got;
    const bool bf16_exact = bf16_bits_to_float(float_to_bf16_bits(got)) == got;
    if (!half_exact && !bf16_exact) return false;
    const auto truth = static_cast<float>(expected[i]);
    inexact_truth += half_bits_to_float(float_to_half_bits(truth)) != truth;
  }
  return inexact_truth * 2 > expected.size();
}

// The ranks whose block of a rank-major buffer holds a failing element.
std::vector<int> failing_ranks(const std::vector<bool>& failing, int world_size) {
  std::vector<int> ranks;
  if (world_size <= 1 || failing.size() % static_cast<std::size_t>(world_size) != 0) return ranks;
  const std::size_t per_rank = failing.size() / static_cast<std::size_t>(world_size);
  for (int r = 0; r < world_size; ++r) {
    const auto begin = failing.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * per_rank);
    if (std::find(begin, begin + static_cast<std::ptrdiff_t>(per_rank), true) != begin + static_cast<std::ptrdiff_t>(per_rank))
      ranks.push_back(r);
  }
  return ranks;
}

// Failures in [begin, end) from some element to the end, after a correct start: the shape of
// work done on a prefix only (O7 over a whole buffer, D8 over each rank's block).
bool fails_as_a_tail(std::vector<bool>::const_iterator begin, std::vector<bool>::const_iterator end) {
  const auto first = std::find(begin, end, true);
  return first != begin && first != end && std::find(first, end, false) == end;
}

// D8: every failing rank's block fails as a tail: each rank did a prefix of its shard, as a
// variant that took a smaller shard than the harness gave it would.
bool ranks_did_shorter_shards(const std::vector<bool>& failing, int world_size, const std::vector<int>& ranks) {
  if (ranks.empty()) return false;
  const auto per_rank = static_cast<std::ptrdiff_t>(failing.size() / static_cast<std::size_t>(world_size));
  return std::all_of(ranks.begin(), ranks.end(), [&](int r) {
    const auto block = failing.begin() + r * per_rank;
    return fails_as_a_tail(block, block + per_rank);
  });
}

}  // namespace

std::vector<std::string> failure_pattern_codes(const buffer_spec& spec, const workload& work,
                                               std::span<const unsigned char> actual, std::span<const double> expected,
                                               const tolerance& tol, const comparison& outcome, int world_size) {
  std::vector<std::string> codes;
  if (outcome.passed() || expected.empty()) return codes;
  if (outcome.unwritten == outcome.elements) codes.push_back("W4");
  const auto failing = failing_elements(spec.type, actual, expected, tol);
  if (fails_as_a_tail(failing.begin(), failing.end())) codes.push_back("O7");
  if (!spec.dims.empty()) dimension_codes(spec, work, failing, codes);
  const auto ranks = failing_ranks(failing, world_size);
  if (!ranks.empty() && ranks.size() < static_cast<std::size_t>(world_size))
    codes.push_back("D1");  // Note [ranks]: whole ranks wrong while others are right
  if (ranks_did_shorter_shards(failing, world_size, ranks)) codes.push_back("D8");
  if (const auto other = sibling_format(spec.type); other && passes_as(*other, actual, expected, tol))
    codes.push_back("O8");
  if (spec.type == dtype::f32 && outcome.unwritten == 0 && outcome.nan_count == 0 && carries_half_precision(actual, expected))
    codes.push_back("W1");
  return codes;
}

}  // namespace aisp::verify
