#include "verify/compare.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "support/element_codec.hpp"

namespace aisp::verify {

namespace {

// Outputs of GiBs are compared on every host core (issue 17): the elements split into one
// contiguous range per thread, each range's partial result merged in index order.
constexpr std::size_t elements_per_thread_at_least = std::size_t{1} << 20;

std::size_t ranges_for(std::size_t count) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(count / elements_per_thread_at_least, 1, cores);
}

// work(range, begin, end) for each of the ranges_for(count) ranges.
template <class Work>
void over_ranges(std::size_t count, Work work) {
  const std::size_t threads = ranges_for(count);
  const std::size_t step = (count + threads - 1) / threads;
  if (threads == 1) {
    work(std::size_t{0}, std::size_t{0}, count);
    return;
  }
  std::vector<std::jthread> running;
  for (std::size_t t = 0; t < threads; ++t) running.emplace_back(work, t, std::min(count, t * step), std::min(count, (t + 1) * step));
}

struct partial {
  comparison counts;
  double error_squared = 0;
  double expected_squared = 0;
};

// Note [cancellation floor]
// An element's bound was atol + rtol x |expected|. A sum whose terms cancel ends far smaller than
// its terms, but its rounding error stays the terms' size: an honest fp32 3x3 convolution (oneDNN,
// 36 products a sum) failed the fp64 reference at one element in 256, expected -0.01953062, got
// -0.01953036 (1.4e-5 relative, 2.7e-7 absolute; a user's case, 2026-12-05). The same error is a
// rounding's size beside the output's RMS, and an element's rtol is now taken of the larger of
// its own magnitude and the output's RMS. Larger elements keep their bound; the relative L2 bound
// and the accuracy against the baseline still hold the whole output, so lower-precision math
// (a bf16 or tf32 reduction's error is hundreds of fp32 roundings) fails as before.
void compare_range(dtype type, std::span<const unsigned char> actual, std::span<const double> expected, const tolerance& tol,
                   double magnitude_floor, std::size_t begin, std::size_t end, partial& out) {
  partial into;  // a local, stored once at the end (see finite_rms)
  auto& result = into.counts;
  for (std::size_t i = begin; i < end; ++i) {
    const double want = expected[i];
    bool bad = false;
    if (is_poison(type, actual.data(), i)) {
      ++result.unwritten;
      bad = true;
    }
    const double got = load_as_double(type, actual.data(), i);
    if (!bad && std::isnan(got)) {
      ++result.nan_count;
      bad = true;
    } else if (!bad && std::isinf(got) && got != want) {
      ++result.inf_count;
      bad = true;
    }
    if (!bad && !(std::isinf(got) && got == want)) {
      const double abs_error = std::abs(got - want);
      const double allowed = element_bound(tol, want, magnitude_floor);
      result.max_abs_error = std::max(result.max_abs_error, abs_error);
      if (want != 0) result.max_rel_error = std::max(result.max_rel_error, abs_error / std::abs(want));
      if (allowed > 0) {
        result.worst_tolerance_fraction = std::max(result.worst_tolerance_fraction, abs_error / allowed);
      } else if (abs_error > 0) {
        result.worst_tolerance_fraction = INFINITY;
      }
      into.error_squared += abs_error * abs_error;
      into.expected_squared += want * want;
      bad = abs_error > allowed;
    }
    if (bad) {
      ++result.failing;
      if (result.first_mismatches.size() < 8) result.first_mismatches.push_back({i, want, got});
    }
  }
  out = std::move(into);
}

// Note [L2 under the type's spacing]
// The relative L2 bound holds the output to a few of its type's roundings of its own size. Where
// the output is a few values in the type's subnormal range, a correct rounding is a large share
// of each: an honest e4m3 y = 2x + 1 at one element, y = 0.0064, rounds to 0.00586 (a subnormal
// step is 2^-9), a relative L2 of 0.084 against the bound's 0.08 (a planted fixture's honest
// baseline, one run in a few hundred). So the bound yields where the L2 error is no larger than
// half the type's smallest step an element: no output the type can hold is closer, and an error
// that small is far under a rounding anywhere above the subnormals, so nothing passes that a
// correct rounding would not. For fp32 and wider the step is under 1e-44: nothing changes there.
double under_the_spacing(dtype type, std::size_t count) {
  if (!dtype_is_float(type)) return 0;
  const double smallest_step = std::ldexp(dtype_smallest_normal(type), -float_fields_of(type).mantissa_bits);
  return 0.5 * smallest_step * std::sqrt(static_cast<double>(count));
}

}  // namespace

double finite_rms(std::span<const double> values) {
  std::vector<double> sums(ranges_for(values.size()), 0.0);
  std::vector<std::size_t> counts(sums.size(), 0);
  // Each range sums into locals and stores once: the threads' adjacent slots written every
  // element shared cache lines, and 16 threads on one line took minutes over GiB outputs.
  over_ranges(values.size(), [&](std::size_t t, std::size_t begin, std::size_t end) {
    double sum = 0;
    std::size_t count = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (!std::isfinite(values[i])) continue;
      sum += values[i] * values[i];
      ++count;
    }
    sums[t] = sum;
    counts[t] = count;
  });
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t t = 0; t < sums.size(); ++t) {
    sum += sums[t];
    count += counts[t];
  }
  return count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 0.0;
}

std::vector<double> widen(dtype type, std::span<const unsigned char> raw) {
  const std::size_t count = raw.size() / dtype_size(type);
  std::vector<double> values(count);
  over_ranges(count, [&](std::size_t, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) values[i] = load_as_double(type, raw.data(), i);
  });
  return values;
}

comparison compare_output(const std::string& buffer, dtype type,
                          std::span<const unsigned char> actual, std::span<const double> expected,
                          const tolerance& tol) {
  const std::size_t count = actual.size() / dtype_size(type);
  AISP_EXPECTS(count == expected.size(),
               fmt::format("{}: {} elements produced, {} expected", buffer, count, expected.size()));
  std::vector<partial> parts(ranges_for(count));
  const double floor = finite_rms(expected);  // Note [cancellation floor]
  over_ranges(count, [&](std::size_t t, std::size_t begin, std::size_t end) {
    compare_range(type, actual, expected, tol, floor, begin, end, parts[t]);
  });
  comparison result;
  result.buffer = buffer;
  result.elements = count;
  double error_squared = 0;
  double expected_squared = 0;
  for (const auto& part : parts) {  // in index order: the first mismatches stay the first
    const auto& c = part.counts;
    result.failing += c.failing;
    result.nan_count += c.nan_count;
    result.inf_count += c.inf_count;
    result.unwritten += c.unwritten;
    result.max_abs_error = std::max(result.max_abs_error, c.max_abs_error);
    result.max_rel_error = std::max(result.max_rel_error, c.max_rel_error);
    result.worst_tolerance_fraction = std::max(result.worst_tolerance_fraction, c.worst_tolerance_fraction);
    for (const auto& m : c.first_mismatches) {
      if (result.first_mismatches.size() < 8) result.first_mismatches.push_back(m);
    }
    error_squared += part.error_squared;
    expected_squared += part.expected_squared;
  }
  result.rel_l2_error = expected_squared > 0 ? std::sqrt(error_squared / expected_squared)
                                             : std::sqrt(error_squared);
  const bool rel_l2_failed = tol.max_rel_l2 > 0 && result.rel_l2_error > tol.max_rel_l2 &&
                             std::sqrt(error_squared) > under_the_spacing(type, count);  // Note [L2 under the type's spacing]
  if (result.unwritten > 0) result.reason_code = "O10";
  else if (result.nan_count > 0) result.reason_code = "O4";
  else if (result.inf_count > 0) result.reason_code = "O5";
  else if (result.failing > 0 || rel_l2_failed) result.reason_code = "O3";
  return result;
}

std::string comparison::describe() const {
  if (passed()) {
    return fmt::format("{}: {} elements ok, max abs err {:.3g}, rel-L2 {:.3g}, {:.0f}% of tolerance",
                       buffer, elements, max_abs_error, rel_l2_error,
                       100 * worst_tolerance_fraction);
  }
  std::string text = fmt::format("{} [{}]: {} of {} elements fail ({} unwritten, {} NaN, {} Inf), "
                                 "max abs err {:.3g}, rel-L2 {:.3g}",
                                 buffer, reason_code, failing, elements, unwritten, nan_count,
                                 inf_count, max_abs_error, rel_l2_error);
  if (!first_mismatches.empty()) {
    const auto& first = first_mismatches.front();
    text += fmt::format("; first at [{}]: expected {:.9g}, got {:.9g}", first.index, first.expected,
                        first.actual);
  }
  return text;
}

}  // namespace aisp::verify
