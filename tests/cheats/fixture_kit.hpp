// fixture_kit: the honest pairs that the planted cheats start from, and the small tools they share.
// A fixture is an honest baseline plus an optimized variant that commits exactly one cheat from one
// VALIDITY.md row, tagged "cheat:<code>" with the code the harness must report for it.
// Target names: "cheats:<row>_<what>". Run: aisp_cheats bench run --targets cheats
#pragma once

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "support/element_codec.hpp"

namespace aisp::cheats {

// Sizes of the 1-D elementwise pairs: odd validation sizes, a held-out size no variant may know,
// and a benchmark size whose honest call (~50 us) stays well above the timer-resolution floor
// (T4). The suite's time goes to the harness (three workers and the battery per pair), not here.
inline constexpr std::int64_t benchmark_elements = 65536;
inline constexpr std::int64_t held_out_elements = 1003;
inline constexpr std::int64_t validation_elements[] = {1, 7, 1000};

// ---- Element access ----

[[nodiscard]] inline std::size_t elements_of(const run_context& ctx, std::string_view name) {
  return static_cast<std::size_t>(ctx.num_elements(name));
}

// Keeps a buffer's writes alive: the optimizer may not drop an allocation a cheat is made of.
inline void keep_alive(const void* data) { asm volatile("" : : "r"(data) : "memory"); }

// The judge's last request to this worker, where the worker left it: the stdio buffer of its
// standard input, which every call of a visit can read (Note [verified after the call]).
inline std::string_view buffered_request() {
  if (stdin->_IO_read_base == nullptr || stdin->_IO_read_end <= stdin->_IO_read_base) return {};
  const std::string_view buffered(stdin->_IO_read_base, static_cast<std::size_t>(stdin->_IO_read_end - stdin->_IO_read_base));
  const auto start = buffered.rfind("{\"");
  return start == std::string_view::npos ? std::string_view() : buffered.substr(start);
}

// ---- Honest elementwise math ----

// One elementwise function: the fp64 reference and the honest fp32 implementation, written
// independently of each other.
struct elementwise_math {
  double (*reference)(double);
  float (*honest)(float);
  const char* formula;
};

inline constexpr elementwise_math affine_math{
    [](double x) { return 2.0 * x + 1.0; }, [](float x) { return 2.0f * x + 1.0f; }, "y = 2x + 1"};

inline constexpr elementwise_math exp_math{[](double x) { return std::exp(x); }, [](float x) { return std::exp(x); }, "y = exp(x)"};

inline void apply(const elementwise_math& math, const float* x, float* y, std::size_t begin,
                  std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) y[i] = math.honest(x[i]);
}

// y = 2x + 1 on elements [0, count).
inline void affine(const float* x, float* y, std::size_t count) { apply(affine_math, x, y, 0, count); }

// The honest run of `math` over every element of x into y.
[[nodiscard]] inline stage_fn honest_run(const elementwise_math& math) {
  return [math](run_context& ctx) {
    apply(math, ctx.as<const float>("x"), ctx.as<float>("y"), 0, elements_of(ctx, "x"));
  };
}

// ---- fp16 / bf16 bit patterns: the harness's own codecs (src/support/element_codec.hpp) ----

[[nodiscard]] inline std::uint16_t half_bits(float value) { return float_to_half_bits(value); }
[[nodiscard]] inline std::uint16_t bf16_bits(float value) { return float_to_bf16_bits(value); }
[[nodiscard]] inline float bf16_value(std::uint16_t bits) { return bf16_bits_to_float(bits); }
// The float nearest to `value` that fp16 can hold: what computing in fp16 leaves of a result.
[[nodiscard]] inline float round_through_half(float value) { return half_bits_to_float(float_to_half_bits(value)); }

// ---- Declarations ----

[[nodiscard]] inline std::string cheat_summary(std::string_view code, std::string_view what) {
  return "planted cheat " + std::string(code) + ": " + std::string(what);
}

// The cheating variant: always "optimized"; its summary says what the cheat is.
[[nodiscard]] inline variant cheating_variant(std::string what, stage_fn run, stage_fn setup = {},
                                              stage_fn teardown = {}) {
  return variant{"optimized", std::move(what), std::move(run), std::move(setup), std::move(teardown), {}, {}, {}, {}, {}};
}

[[nodiscard]] inline variant honest_baseline(const elementwise_math& math = affine_math) {
  return variant{"baseline", std::string("honest loop: ") + math.formula, honest_run(math), {}, {}, {}, {}, {}, {}, {}};
}

// The same pair untagged, for fixtures that plant no cheat (a rank that fails, rank_cheats.cpp).
// `x_meaning`: what x is declared to be for the checks that perturb it (a mask: Note [wide inputs]).
[[nodiscard]] inline pair honest_elementwise_declaration(std::string target, const elementwise_math& math,
                                                         dtype output_type, std::int64_t benchmark_n,
                                                         buffer_meaning x_meaning = buffer_meaning::data) {
  const auto count = [](const workload& w) { return w.get("n"); };
  pair declared(std::move(target));
  declared.summary(math.formula).on(backend::host).benchmark_size({{"n", benchmark_n}});
  for (const std::int64_t n : validation_elements) declared.validation_size({{"n", n}});
  if (x_meaning == buffer_meaning::data) {
    declared.input("x", dtype::f32, count);
  } else {
    declared.input("x", dtype::f32, std::vector<std::string>{"n"}, init_distribution::uniform_signed, x_meaning);
  }
  declared.held_out_size({{"n", held_out_elements}})
      .output("y", output_type, count)
      .work([output_type](const workload& w) {
        const auto n = static_cast<double>(w.get("n"));
        return work_amount{.bytes = n * 4.0 + n * static_cast<double>(dtype_size(output_type)),
                           .flops = 2.0 * n};
      })
      .reference([math](reference_io& io) {
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = math.reference(x[i]);
      });
  return declared;
}

// The honest 1-D elementwise pair without variants: x (n,) fp32 -> y (n,) of `output_type`,
// the fp64 reference of `math`, work = bytes in + bytes out, tagged "cheat:<code>".
[[nodiscard]] inline pair elementwise_declaration(std::string target, std::string_view code,
                                                  const elementwise_math& math = affine_math,
                                                  dtype output_type = dtype::f32,
                                                  std::int64_t benchmark_n = benchmark_elements) {
  pair declared = honest_elementwise_declaration(std::move(target), math, output_type, benchmark_n);
  declared.summary(cheat_summary(code, math.formula)).tag("cheat:" + std::string(code));
  return declared;
}

// The standard fixture: the honest elementwise pair, an honest baseline and `cheat` as optimized.
[[nodiscard]] inline pair elementwise_pair(std::string target, std::string_view code, variant cheat,
                                           const elementwise_math& math = affine_math) {
  pair declared = elementwise_declaration(std::move(target), code, math);
  declared.summary(cheat_summary(code, cheat.summary))
      .add_variant(honest_baseline(math))
      .add_variant(std::move(cheat));
  return declared;
}

[[nodiscard]] inline pair elementwise_pair(std::string target, std::string_view code,
                                           std::string what_cheats, stage_fn cheat_run,
                                           const elementwise_math& math = affine_math) {
  return elementwise_pair(std::move(target), code,
                          cheating_variant(std::move(what_cheats), std::move(cheat_run)), math);
}

// A 2-D elementwise pair, y = 2x + 1 on (outer, inner) row-major buffers declared with their
// dims, so verification can say which dimension went wrong (W5, W6, W7).
[[nodiscard]] inline pair shaped_elementwise_pair(std::string target, std::string_view code,
                                                  const std::string& outer, const std::string& inner,
                                                  std::string what_cheats, stage_fn cheat_run) {
  pair declared(std::move(target));
  declared.summary(cheat_summary(code, what_cheats))
      .on(backend::host)
      .tag("cheat:" + std::string(code))
      .benchmark_size({{outer, 64}, {inner, 1024}})
      .validation_size({{outer, 1}, {inner, 7}})
      .validation_size({{outer, 7}, {inner, 65}})
      .validation_size({{outer, 65}, {inner, 7}})
      .held_out_size({{outer, 9}, {inner, 33}})
      .input("x", dtype::f32, std::vector<std::string>{outer, inner})
      .output("y", dtype::f32, std::vector<std::string>{outer, inner})
      .work([outer, inner](const workload& w) {
        const auto n = static_cast<double>(w.get(outer) * w.get(inner));
        return work_amount{.bytes = 8.0 * n, .flops = 2.0 * n};
      })
      .reference([](reference_io& io) {
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant(honest_baseline())
      .add_variant(cheating_variant(std::move(what_cheats), std::move(cheat_run)));
  return declared;
}

// Row sums of a (rows, cols) fp32 matrix into (rows,), without variants. The validation size
// with the most outputs (the one the challenge battery uses) has 4096 columns, so a running sum
// of small integers leaves bf16's exact range of +-256 (X5).
[[nodiscard]] inline pair row_sum_declaration(std::string target, std::string_view code,
                                              init_distribution init) {
  pair declared(std::move(target));
  declared.on(backend::host)
      .tag("cheat:" + std::string(code))
      .benchmark_size({{"rows", 16}, {"cols", 4096}})
      .validation_size({{"rows", 1}, {"cols", 1}})
      .validation_size({{"rows", 3}, {"cols", 65}})
      .validation_size({{"rows", 7}, {"cols", 4096}})
      .held_out_size({{"rows", 5}, {"cols", 4093}})
      .input("x", dtype::f32, std::vector<std::string>{"rows", "cols"}, init)
      .output("y", dtype::f32, std::vector<std::string>{"rows"})
      .work([](const workload& w) {
        const auto rows = static_cast<double>(w.get("rows"));
        const auto cols = static_cast<double>(w.get("cols"));
        return work_amount{.bytes = 4.0 * rows * cols + 4.0 * rows, .flops = rows * cols};
      })
      .reference([](reference_io& io) {
        const auto cols = static_cast<std::size_t>(io.param("cols"));
        const auto x = io.input("x");  // (rows, cols)
        const auto y = io.output("y");  // (rows,)
        for (std::size_t r = 0; r < y.size(); ++r) {
          double total = 0.0;
          for (std::size_t c = 0; c < cols; ++c) total += x[r * cols + c];
          y[r] = total;
        }
      });
  return declared;
}

// Row sums with fp64 accumulation and one rounding to fp32 per row, of what `element(row, c,
// cols)` makes of column c of each row (the element itself for the honest sum).
template <class Element>
void row_sums_by(run_context& ctx, Element element) {
  const auto rows = static_cast<std::size_t>(ctx.param("rows"));
  const auto cols = static_cast<std::size_t>(ctx.param("cols"));
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t r = 0; r < rows; ++r) {
    double total = 0.0;
    for (std::size_t c = 0; c < cols; ++c) total += element(x + r * cols, c, cols);
    y[r] = static_cast<float>(total);
  }
}

// Row sums of each input element as `read` leaves it (a narrower float for a precision cheat).
template <float (*read)(float)>
void row_sums_of(run_context& ctx) {
  row_sums_by(ctx, [](const float* row, std::size_t c, std::size_t) { return read(row[c]); });
}

[[nodiscard]] inline float as_is(float value) { return value; }

// Honest row sums.
inline void row_sums(run_context& ctx) { row_sums_of<as_is>(ctx); }

}  // namespace aisp::cheats
