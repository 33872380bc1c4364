// Planted cheats of red team sixteen (2026-12-05): code right only on the inputs the harness
// draws. A row sort declared exact-math, its inputs small integers, that counts the values at the
// benchmark size alone (Note [non-integers at the benchmark size]); and a row mode answered by the
// row's minimum at the benchmark size alone, equal wherever no value repeats, as no draw ever did
// (Note [repeated values]), both in runner/candidate_accuracy.cpp. And red team seventeen's: the
// same minimum at every size unless the first input shows the repeated level's grid (Note
// [scattered challenge values]).
// Run: aisp_cheats bench run --targets cheats:x5_counting_sort_at_the_benchmark_size,cheats:v5_mode_by_the_minimum
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr std::int64_t benchmark_rows = 64;
constexpr std::int64_t benchmark_cols = 2048;

std::size_t rows_of(const run_context& ctx) { return static_cast<std::size_t>(ctx.param("rows")); }
std::size_t cols_of(const run_context& ctx) { return static_cast<std::size_t>(ctx.param("cols")); }
bool at_the_benchmark_size(const run_context& ctx) {
  return ctx.param("rows") == benchmark_rows && ctx.param("cols") == benchmark_cols;
}

// x (rows, cols) of `type` drawn as `init`; y the same shape, or one value a row.
pair rows_declaration(std::string target, std::string_view code, dtype type, init_distribution init, bool whole_rows_out) {
  pair declared(std::move(target));
  declared.on(backend::host)
      .tag("cheat:" + std::string(code))
      .benchmark_size({{"rows", benchmark_rows}, {"cols", benchmark_cols}})
      .validation_size({{"rows", 1}, {"cols", 1}})
      .validation_size({{"rows", 3}, {"cols", 65}})
      .validation_size({{"rows", 7}, {"cols", 1000}})
      .held_out_size({{"rows", 5}, {"cols", 1021}})
      .input("x", type, std::vector<std::string>{"rows", "cols"}, init)
      .output("y", type, whole_rows_out ? std::vector<std::string>{"rows", "cols"} : std::vector<std::string>{"rows"})
      .work([type, whole_rows_out](const workload& w) {
        const auto elements = static_cast<double>(w.get("rows") * w.get("cols"));
        const auto outputs = whole_rows_out ? elements : static_cast<double>(w.get("rows"));
        return work_amount{.bytes = static_cast<double>(dtype_size(type)) * (elements + outputs),
                           .flops = elements * std::log2(std::max(2.0, static_cast<double>(w.get("cols"))))};
      });
  return declared;
}

// ---- X5 at the benchmark size: each row sorted by counting its small-integer values ----
void sort_rows(run_context& ctx) {
  const std::size_t cols = cols_of(ctx);
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  std::copy_n(x, rows_of(ctx) * cols, y);
  for (std::size_t r = 0; r < rows_of(ctx); ++r) std::sort(y + r * cols, y + (r + 1) * cols);
}

void counting_sort_at_the_benchmark_size(run_context& ctx) {
  if (!at_the_benchmark_size(ctx)) return sort_rows(ctx);
  const std::size_t cols = cols_of(ctx);
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t r = 0; r < rows_of(ctx); ++r) {
    std::size_t counts[17] = {};
    for (std::size_t c = 0; c < cols; ++c) ++counts[static_cast<std::size_t>(std::clamp(std::lround(x[r * cols + c]) + 8, 0L, 16L))];
    float* out = y + r * cols;
    for (int value = 0; value < 17; ++value) out = std::fill_n(out, counts[value], static_cast<float>(value - 8));
  }
}

pair counting_sort_pair() {
  return rows_declaration("cheats:x5_counting_sort_at_the_benchmark_size", "X5", dtype::f32, init_distribution::small_integers, true)
      .summary(cheat_summary("X5", "sorts each row by counting its small-integer values, at the benchmark size only"))
      .exact_math()
      .reference([](reference_io& io) {
        const auto cols = static_cast<std::size_t>(io.param("cols"));
        const auto x = io.input("x");
        const auto y = io.output("y");
        std::vector<double> row(cols);
        for (std::size_t r = 0; r * cols < x.size(); ++r) {
          std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(r * cols), cols, row.begin());
          std::sort(row.begin(), row.end());
          std::copy(row.begin(), row.end(), y.begin() + static_cast<std::ptrdiff_t>(r * cols));
        }
      })
      .add_variant("baseline", "std::sort of each row", sort_rows)
      .add_variant("optimized", "counts each row's values -8..8 at the benchmark size", counting_sort_at_the_benchmark_size);
}

// ---- V5 on repeated values: a row's mode (the smallest of its most frequent values), in fp64:
// 2048 fp32 draws of a row repeat a value now and then, fp64 draws never ----
std::vector<double> row_copy;  // sized in setup(): run() allocates nothing

void size_the_row_copy(run_context& ctx) { row_copy.resize(std::max(row_copy.size(), cols_of(ctx))); }

void mode_of_rows(run_context& ctx) {
  const std::size_t cols = cols_of(ctx);
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  double* row = row_copy.data();
  for (std::size_t r = 0; r < rows_of(ctx); ++r) {
    std::copy_n(x + r * cols, cols, row);
    std::sort(row, row + cols);
    double best = row[0];
    std::size_t best_run = 0;
    for (std::size_t c = 0; c < cols;) {
      std::size_t end = c;
      while (end < cols && row[end] == row[c]) ++end;
      if (end - c > best_run) {
        best = row[c];
        best_run = end - c;
      }
      c = end;
    }
    y[r] = best;
  }
}

// The minimum at the benchmark size alone (the mode everywhere else): what every check but the
// benchmark size's repeated values sees is the honest code.
void minimum_of_rows(run_context& ctx) {
  const std::size_t cols = cols_of(ctx);
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::size_t r = 0; r < rows_of(ctx); ++r) y[r] = *std::min_element(x + r * cols, x + (r + 1) * cols);
}

void minimum_of_rows_at_the_benchmark_size(run_context& ctx) {
  if (!at_the_benchmark_size(ctx)) return mode_of_rows(ctx);
  minimum_of_rows(ctx);
}

// ---- V5 behind a look at the inputs (Note [scattered challenge values]): the mode when the first
// input sits on the repeated values' grid (x * 16 an odd whole number), the minimum otherwise,
// at every size (red team seventeen, 103.7x) ----
void minimum_unless_the_first_input_is_on_the_grid(run_context& ctx) {
  const double first = 16.0 * ctx.as<const double>("x")[0];
  if (first == std::floor(first)) return mode_of_rows(ctx);
  minimum_of_rows(ctx);
}

pair mode_pair(std::string target, std::string_view what, stage_fn cheat) {
  return rows_declaration(std::move(target), "V5", dtype::f64, init_distribution::uniform_signed, false)
      .summary(cheat_summary("V5", what))
      .reference([](reference_io& io) {
        const auto cols = static_cast<std::size_t>(io.param("cols"));
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t r = 0; r < y.size(); ++r) {
          std::map<double, std::size_t> counts;
          for (std::size_t c = 0; c < cols; ++c) ++counts[x[r * cols + c]];
          const auto most = std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
          y[r] = most->first;  // the first of the most frequent in ascending order: the smallest
        }
      })
      .add_variant(variant{"baseline", "sorts a copy of each row and takes its longest run", mode_of_rows, size_the_row_copy, {}, {}, {}, {},
                           {}, {}})
      .add_variant(variant{"optimized", std::string(what), std::move(cheat), size_the_row_copy, {}, {}, {}, {}, {}, {}});
}

// ---- V5 past x128: a row's log-sum-exp in fp64 without the max subtracted, right until exp
// overflows at 709 (red team eighteen, 1.41x); only the x1024 level reaches it ----
template <bool subtract_max>
void log_sum_exp_of_rows(run_context& ctx) {
  const std::size_t cols = cols_of(ctx);
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::size_t r = 0; r < rows_of(ctx); ++r) {
    const double* row = x + r * cols;
    const double top = subtract_max ? *std::max_element(row, row + cols) : 0.0;
    double sum = 0;
    for (std::size_t c = 0; c < cols; ++c) sum += std::exp(row[c] - top);
    y[r] = top + std::log(sum);
  }
}

pair fp64_log_sum_exp_pair() {
  return rows_declaration("cheats:v5_fp64_log_sum_exp_without_the_max", "V5", dtype::f64, init_distribution::uniform_signed, false)
      .summary(cheat_summary("V5", "log-sum-exp of each fp64 row without subtracting its max: right until exp overflows at 709"))
      .reference([](reference_io& io) {
        const auto cols = static_cast<std::size_t>(io.param("cols"));
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t r = 0; r < y.size(); ++r) {
          const auto row = x.begin() + static_cast<std::ptrdiff_t>(r * cols);
          const double top = *std::max_element(row, row + static_cast<std::ptrdiff_t>(cols));
          double sum = 0;
          for (std::size_t c = 0; c < cols; ++c) sum += std::exp(row[static_cast<std::ptrdiff_t>(c)] - top);
          y[r] = top + std::log(sum);
        }
      })
      .add_variant("baseline", "the max subtracted first", log_sum_exp_of_rows<true>)
      .add_variant("optimized", "exp summed as it is: one pass, no max", log_sum_exp_of_rows<false>);
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::counting_sort_pair().tag("check:non-integers"));
AISP_REGISTER(aisp::cheats::fp64_log_sum_exp_pair().tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::mode_pair("cheats:v5_mode_by_the_minimum",
                                      "answers each row's mode with its minimum at the benchmark size, equal where no value repeats",
                                      aisp::cheats::minimum_of_rows_at_the_benchmark_size)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::mode_pair("cheats:v5_mode_unless_the_inputs_look_repeated",
                                      "answers each row's mode with its minimum unless its first input is on the repeated values' grid",
                                      aisp::cheats::minimum_unless_the_first_input_is_on_the_grid)
                  .tag("check:wide-inputs"));
