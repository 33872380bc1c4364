// Deterministic input generation: element i of buffer b under seed s is a pure function of
// (s, b, i), so the parent (for the reference) and the worker (for the variant) produce the same
// bytes without sharing memory, and any element can be regenerated alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <vector>

#include "aisp/buffer_spec.hpp"

namespace aisp {

[[nodiscard]] std::uint64_t buffer_stream_id(std::uint64_t seed, std::string_view buffer_name);
// Note [ranks]: rank r of a multi-GPU pair draws its inputs from this seed, so every rank holds
// its own data and the judge regenerates each; rank 0's is the seed itself.
[[nodiscard]] std::uint64_t rank_seed(std::uint64_t seed, int rank);

// Note [no subnormal draws] (seeded_fill.cpp): whether uniform draws into `type` can round to a
// subnormal, so a fill flushes them (host and device fills alike).
[[nodiscard]] bool draws_can_be_subnormal(dtype type);

// fn(begin, end) over [0, count) in chunks of at least 2^20 elements on up to every core, for
// work whose element i depends on i alone; returns once every thread it started is gone (Note
// [released fill threads], seeded_fill.cpp).
void for_each_element_range(std::size_t count, const std::function<void(std::size_t, std::size_t)>& fn);

// Fills `count` elements of `type` at `base` following `init`.
void fill_seeded(dtype type, init_distribution init, std::uint64_t stream_id, void* base,
                 std::size_t count);

}  // namespace aisp

namespace aisp {

// Which values the inputs of a call get: as declared; small integers in every float buffer (the
// exact-integer challenge, X5); non-integers where a float buffer declares small integers
// (the non-integer challenge of an exact-math pair: a precision downgrade that is exact on
// small integers shows there, W1/X5); wide, wider and widest: the declared draws of [-1, 1)
// scaled by wide_input_scale (Note [wide inputs], runner/candidate_accuracy.cpp); or repeated: the
// declared uniform draws moved to the middles of a grid of 1/8, so values repeat (Note [repeated
// values], the same file); or offset: the declared draws of [-1, 1) moved by a constant far
// larger than their spread (Note [offset inputs], support/seeded_fill.cpp).
enum class input_values : std::uint8_t { declared, exact_integers, non_integers, wide, wider, widest, repeated, offset };

// The init a buffer gets under `values`. Judge and worker must agree, so both call this.
[[nodiscard]] init_distribution effective_init(const buffer_spec& spec, input_values values);

// Note [wide inputs]: what wide (8), wider (128) and widest (1024) scale the draws by, 1
// otherwise; powers of two, so the scaled draws are exact in every float type.
[[nodiscard]] double wide_input_scale(input_values values);
// Note [offset inputs]: what the offset level adds to a draw of `type`: 2^floor((p - 12) / 2)
// for p significand bits (fp32 64, fp64 2^20; 0 for fp16, bf16 and fp8), 0 under any other level.
[[nodiscard]] double offset_input_shift(input_values values, dtype type);
// How a level moves one draw: onto the grid of eighths (repeated), or scale x draw + shift.
struct draw_reshape {
  bool to_grid = false;
  double scale = 1.0;
  double shift = 0.0;
  [[nodiscard]] double operator()(double draw) const;
};
[[nodiscard]] draw_reshape reshape_of(input_values values, dtype type);
// Whether `values` reshapes this buffer's draws: wide, wider, widest and offset a float input
// drawn uniform in [-1, 1), repeated one drawn uniform in [-1, 1) or [0, 1) (never small
// integers, an index permutation or a derived input).
[[nodiscard]] bool widens(const buffer_spec& spec, input_values values);
// The largest magnitude a draw of [-1, 1) of `type` reaches under `values` (a derived copy's
// range test, Note [wide inputs]).
[[nodiscard]] double reshaped_magnitude(input_values values, dtype type);
// Scales (or, for repeated, moves onto the grid) `count` drawn elements at `base` in place where
// widens(spec, values); after the fill, before any derived input is made from them. Judge and
// worker both call this.
void widen_draws(const buffer_spec& spec, input_values values, void* base, std::size_t count);
// The name a request carries for `values`, and back (an unknown name is refused).
[[nodiscard]] const char* input_values_name(input_values values);
[[nodiscard]] input_values input_values_named(const std::string& name);

// `bytes` random bytes from `seed`: the unpredictable output pattern of a verified timed call.
void fill_random_bytes(std::uint64_t seed, void* base, std::size_t bytes);
// Byte `index` of what fill_random_bytes(seed, ...) writes.
[[nodiscard]] unsigned char random_byte(std::uint64_t seed, std::size_t index);

// The positions at which a timed call's outputs are compared, `count` of `num_elements`.
[[nodiscard]] std::vector<std::size_t> probe_positions(std::uint64_t seed, std::size_t num_elements,
                                                       std::size_t count);

// FNV-1a over raw bytes: input-mutation hashes.
[[nodiscard]] std::uint64_t hash_bytes(const unsigned char* data, std::size_t size);

}  // namespace aisp
