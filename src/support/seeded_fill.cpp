#include "support/seeded_fill.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "aisp/check.hpp"
#include "support/counter_hash.hpp"
#include "support/element_codec.hpp"

namespace aisp {
namespace {

double unit_double(std::uint64_t stream_id, std::size_t index) {
  return static_cast<double>(splitmix64(stream_id ^ splitmix64(index)) >> 11) * 0x1.0p-53;
}

// Note [released fill threads]: join() returns once the kernel cleared the thread's id, before
// the thread finishes its exit path and leaves /proc/self/task. The worker's late-write rule
// (Note [other threads' runtime]) reads a thread that is gone at its second reading as one that
// ran after run() returned, and falls back to the noisy process clock for it. Waiting here until
// the kernel released every fill thread keeps the harness's own threads out of that rule.
void wait_until_released(pid_t tid) {
  if (tid == 0) return;
  const std::string entry = "/proc/self/task/" + std::to_string(tid);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (access(entry.c_str(), F_OK) == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

}  // namespace

std::uint64_t buffer_stream_id(std::uint64_t seed, std::string_view buffer_name) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the name
  for (char c : buffer_name) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return splitmix64(seed ^ hash);
}

std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  return rank == 0 ? seed : splitmix64(seed ^ (0xD1B54A32D192ED03ull * static_cast<std::uint64_t>(rank)));
}

namespace {

// Note [no subnormal draws]: uniform values reach the subnormals of the narrow float types
// (e4m3 below 2^-6: ~1.6% of [-1, 1); f16 and e5m2 below 2^-14: ~6e-5), and the S-checks fail
// inputs that hold them. Those types store a drawn value as a derived input would (rounded, a
// subnormal flushed to a signed zero); the device fill does the same (call_fill.cu).

void store_drawn(dtype type, void* base, std::size_t i, double value, bool flush) {
  store_from_double(type, base, i, flush ? derived_value(type, value) : value);
}

void fill_range(dtype type, init_distribution init, std::uint64_t stream_id, void* base,
                std::size_t begin, std::size_t end) {
  const bool flush = draws_can_be_subnormal(type);
  switch (init) {
    case init_distribution::uniform_signed:
      for (std::size_t i = begin; i < end; ++i) store_drawn(type, base, i, 2.0 * unit_double(stream_id, i) - 1.0, flush);
      return;
    case init_distribution::uniform_unit:
      for (std::size_t i = begin; i < end; ++i) store_drawn(type, base, i, unit_double(stream_id, i), flush);
      return;
    case init_distribution::small_integers:
      for (std::size_t i = begin; i < end; ++i)
        store_from_double(type, base, i, std::floor(17.0 * unit_double(stream_id, i)) - 8.0);
      return;
    case init_distribution::index_permutation:
      return;  // whole-buffer only: see fill_seeded
  }
}

void fill_permutation(dtype type, std::uint64_t stream_id, void* base, std::size_t count) {
  AISP_EXPECTS(!dtype_is_float(type), "index_permutation needs an integer buffer");
  std::vector<std::int64_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = count; i > 1; --i) {  // Fisher-Yates, counter-based draws
    const auto j = static_cast<std::size_t>(unit_double(stream_id, i) * static_cast<double>(i));
    std::swap(order[i - 1], order[j]);
  }
  for (std::size_t i = 0; i < count; ++i)
    store_from_double(type, base, i, static_cast<double>(order[i]));
}

}  // namespace

void for_each_element_range(std::size_t count, const std::function<void(std::size_t, std::size_t)>& fn) {
  constexpr std::size_t chunk_floor = std::size_t{1} << 20;
  const std::size_t threads =
      std::clamp<std::size_t>(count / chunk_floor, 1, std::max(1u, std::thread::hardware_concurrency()));
  if (threads == 1) {
    fn(0, count);
    return;
  }
  std::vector<std::thread> workers;
  std::vector<std::atomic<pid_t>> tids(threads);
  const std::size_t per_thread = (count + threads - 1) / threads;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t begin = t * per_thread;
    const std::size_t end = std::min(count, begin + per_thread);
    if (begin >= end) continue;
    workers.emplace_back([&, t, begin, end] {
      tids[t].store(gettid());
      fn(begin, end);
    });
  }
  for (auto& w : workers) w.join();
  for (const auto& tid : tids) wait_until_released(tid.load());
}

void fill_seeded(dtype type, init_distribution init, std::uint64_t stream_id, void* base,
                 std::size_t count) {
  if (init == init_distribution::index_permutation) {
    fill_permutation(type, stream_id, base, count);
    return;
  }
  // Element i depends only on (stream, i), so chunks fill in parallel with identical results.
  for_each_element_range(count, [&](std::size_t begin, std::size_t end) { fill_range(type, init, stream_id, base, begin, end); });
}

}  // namespace aisp

namespace aisp {

init_distribution effective_init(const buffer_spec& spec, input_values values) {
  if (!dtype_is_float(spec.type) || spec.init == init_distribution::index_permutation) return spec.init;
  if (values == input_values::exact_integers) return init_distribution::small_integers;
  if (values == input_values::non_integers && spec.init == init_distribution::small_integers) {
    return init_distribution::uniform_signed;
  }
  return spec.init;
}

double wide_input_scale(input_values values) {
  switch (values) {
    case input_values::wide: return 8.0;
    case input_values::wider: return 128.0;
    case input_values::widest: return 1024.0;
    default: return 1.0;
  }
}

// Note [offset inputs]: the harness draws float inputs centred on 0, so code that cancels a large
// common part passed every check: red team eighteen's row variance E[x^2] - E[x]^2 in fp64, right
// on centred draws and wrong (even negative) on x + 1e8 (4.34x, 2026-12-05). The offset level
// adds c = 2^floor((p - 12) / 2) to every draw of [-1, 1) in a type of p significand bits: 64 in
// fp32, 2^20 in fp64. A one-pass form then loses about c^2 2^-p of the spread a term, and more
// summed over a row; a two-pass form (the mean first, then the spread about it) loses about
// (c 2^-p)^2, nothing. Measured here at 4x these offsets (256, 2^22): fp32 one-pass row variances
// of 2048 values erred 10.7-34.8%, the red team's fp64 one-pass 1%, while fp32 two-pass sums
// erred 1e-7 and an fp64 two-pass 3e-10, a third of fp64's bound (1e-9): hence the offsets 4x
// lower, where the one-pass errors fall 16x, still far past every bound, and the honest ones at
// least 4x. Types of fewer than 12 bits get none: code computing them in wider floats cancels
// nothing. Held like the other levels (one the baseline fails judges nobody), and a candidate
// within 4x of the baseline's own error there passes too (Note [honest reorders],
// runner/candidate_accuracy.cpp). Never scattered (Note [scattered challenge values]): 16 shifted
// elements cancel nothing, and a wholly shifted input is recognisable, so a candidate that looks
// for one can still take its shortcut on the benchmark size's other calls (open).
double offset_input_shift(input_values values, dtype type) {
  if (values != input_values::offset) return 0.0;
  const int p = float_fields_of(type).mantissa_bits + 1;  // significand bits, the implicit one counted
  return p < 12 ? 0.0 : std::ldexp(1.0, (p - 12) / 2);
}

double draw_reshape::operator()(double draw) const {
  // Note [repeated values]: the middle of each draw's eighth, (k + 1/2) / 8: 16 values in
  // (-1, 1), 8 in (0, 1), none at an end of the range, exact in every float type but e5m2.
  return to_grid ? (std::floor(draw * 8.0) + 0.5) / 8.0 : scale * draw + shift;
}

draw_reshape reshape_of(input_values values, dtype type) {
  return {values == input_values::repeated, wide_input_scale(values), offset_input_shift(values, type)};
}

double reshaped_magnitude(input_values values, dtype type) { return wide_input_scale(values) + offset_input_shift(values, type); }

bool widens(const buffer_spec& spec, input_values values) {
  if (spec.role != buffer_role::input || !spec.derived_from.empty() || !dtype_is_float(spec.type)) return false;
  // A mask drawn uniform in [-1, 1) is data under another name (a real one is drawn as small
  // integers or uniform_unit): Note [wide inputs] (runner/candidate_accuracy.cpp).
  if (values == input_values::repeated)
    return spec.init == init_distribution::uniform_signed || spec.init == init_distribution::uniform_unit;
  if (values == input_values::offset) return spec.init == init_distribution::uniform_signed && offset_input_shift(values, spec.type) > 0;
  return wide_input_scale(values) != 1.0 && spec.init == init_distribution::uniform_signed;
}

void widen_draws(const buffer_spec& spec, input_values values, void* base, std::size_t count) {
  if (!widens(spec, values)) return;
  const auto reshaped = reshape_of(values, spec.type);
  for_each_element_range(count, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) store_from_double(spec.type, base, i, reshaped(load_as_double(spec.type, base, i)));
  });
}

const char* input_values_name(input_values values) {
  switch (values) {
    case input_values::declared: return "declared";
    case input_values::exact_integers: return "exact_integers";
    case input_values::non_integers: return "non_integers";
    case input_values::wide: return "wide";
    case input_values::wider: return "wider";
    case input_values::widest: return "widest";
    case input_values::repeated: return "repeated";
    case input_values::offset: return "offset";
  }
  return "declared";
}

input_values input_values_named(const std::string& name) {
  for (const auto values :
       {input_values::declared, input_values::exact_integers, input_values::non_integers, input_values::wide, input_values::wider,
        input_values::widest, input_values::repeated, input_values::offset}) {
    if (name == input_values_name(values)) return values;
  }
  AISP_EXPECTS(false, "unknown input values '" + name + "' (declared, exact_integers, non_integers, wide, wider, widest, repeated, offset)");
  return input_values::declared;
}

void fill_random_bytes(std::uint64_t seed, void* base, std::size_t bytes) {
  auto* out = static_cast<unsigned char*>(base);
  for (std::size_t word = 0; word * 8 < bytes; ++word) {
    const std::uint64_t value = splitmix64(seed ^ splitmix64(word));
    std::memcpy(out + word * 8, &value, std::min<std::size_t>(8, bytes - word * 8));
  }
}

unsigned char random_byte(std::uint64_t seed, std::size_t index) {
  return static_cast<unsigned char>(splitmix64(seed ^ splitmix64(index / 8)) >> (8 * (index % 8)));
}

std::vector<std::size_t> probe_positions(std::uint64_t seed, std::size_t num_elements, std::size_t count) {
  std::vector<std::size_t> positions;
  if (num_elements == 0) return positions;
  const std::size_t take = std::min(count, num_elements);
  positions.reserve(take);
  for (std::size_t j = 0; j < take; ++j) {
    positions.push_back(take == num_elements ? j : static_cast<std::size_t>(splitmix64(seed ^ splitmix64(j)) % num_elements));
  }
  return positions;
}

std::uint64_t hash_bytes(const unsigned char* data, std::size_t size) {
  // Eight bytes a step: inputs of hundreds of MiB are hashed twice per verified call.
  std::uint64_t hash = 1469598103934665603ull ^ size;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, data + i, 8);
    hash = splitmix64(hash ^ word);
  }
  for (; i < size; ++i) hash = (hash ^ data[i]) * 1099511628211ull;
  return hash;
}

bool draws_can_be_subnormal(dtype type) { return type == dtype::f16 || type == dtype::e4m3 || type == dtype::e5m2; }

}  // namespace aisp
