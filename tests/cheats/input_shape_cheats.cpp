// Planted cheats of red team sixteen (2026-12-05): code right only on the inputs the harness
// draws. A row sort declared exact-math, its inputs small integers, that counts the values at the
// benchmark size alone (Note [non-integers at the benchmark size]); and a row mode answered by the
// row's minimum at the benchmark size alone, equal wherever no value repeats, as no draw ever did
// (Note [repeated values]), both in runner/candidate_accuracy.cpp. And red team seventeen's: the
// same minimum at every size unless the first input shows the repeated level's grid (Note
// [scattered challenge values]). And red team eighteen's one-pass variance, wrong under an offset
// (Note [offset inputs]), beside an honest two-pass one.
// Run: aisp_cheats bench run --targets cheats:x5_counting_sort_at_the_benchmark_size,cheats:v5_mode_by_the_minimum
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
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

// x (rows, cols) of `type` drawn as `init`; y the same shape, or one value a row. An honest pair
// has no code.
pair rows_declaration(std::string target, std::string_view code, dtype type, init_distribution init, bool whole_rows_out) {
  pair declared(std::move(target));
  if (!code.empty()) declared.tag("cheat:" + std::string(code));
  declared.on(backend::host)
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

double mode_of_row(const double* x, std::size_t cols) {
  double* row = row_copy.data();
  std::copy_n(x, cols, row);
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
  return best;
}

void mode_of_rows(run_context& ctx) {
  const std::size_t cols = cols_of(ctx);
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::size_t r = 0; r < rows_of(ctx); ++r) y[r] = mode_of_row(x + r * cols, cols);
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

// ---- V5 behind a near look (red team seventeen's lead): a row's mode where one of its values
// equals one of the 16 before it, its minimum otherwise; half the scattered repeats are farther ----
void minimum_unless_a_repeat_among_the_16_before(run_context& ctx) {
  const std::size_t cols = cols_of(ctx);
  const double* x = ctx.as<const double>("x");
  double* y = ctx.as<double>("y");
  for (std::size_t r = 0; r < rows_of(ctx); ++r) {
    const double* row = x + r * cols;
    bool near_repeat = false;
    for (std::size_t c = 1; c < cols && !near_repeat; ++c)
      for (std::size_t back = 1; back <= 16 && back <= c && !near_repeat; ++back) near_repeat = row[c] == row[c - back];
    y[r] = near_repeat ? mode_of_row(row, cols) : *std::min_element(row, row + cols);
  }
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

// ---- V5 under an offset: a row's variance in one pass, E[x^2] - E[x]^2, right on centred draws
// and wrong once the row shares a large common part (red team eighteen's in fp64, 4.34x); only the
// offset level moves the draws off 0 (Note [offset inputs]) ----
enum class variance_form { two_passes_in_fp64, one_pass_in_fp32, two_passes_in_fp32 };

template <variance_form form>
void variance_of_rows(run_context& ctx) {
  const std::size_t cols = cols_of(ctx);
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  for (std::size_t r = 0; r < rows_of(ctx); ++r) {
    const float* row = x + r * cols;
    if constexpr (form == variance_form::one_pass_in_fp32) {
      float sum = 0.0f;
      float squares = 0.0f;
      for (std::size_t c = 0; c < cols; ++c) {
        sum += row[c];
        squares += row[c] * row[c];
      }
      const float mean = sum / static_cast<float>(cols);
      y[r] = squares / static_cast<float>(cols) - mean * mean;
    } else {
      // Eight partial sums, as a vectorised loop keeps them: one fp32 sum of 2048 squares that
      // take 16 values (the repeated level) errs in step, ~1e-5, the fp32 bound itself.
      using real = std::conditional_t<form == variance_form::two_passes_in_fp64, double, float>;
      const auto summed = [cols](auto term) {
        real lanes[8] = {};
        for (std::size_t c = 0; c < cols; ++c) lanes[c % 8] += term(c);
        return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
      };
      const real mean = summed([row](std::size_t c) { return static_cast<real>(row[c]); }) / static_cast<real>(cols);
      const real squares = summed([row, mean](std::size_t c) { return (row[c] - mean) * (row[c] - mean); });
      y[r] = static_cast<float>(squares / static_cast<real>(cols));
    }
  }
}

pair variance_pair(std::string target, std::string_view code, const std::string& optimized_summary, void (*optimized)(run_context&)) {
  return rows_declaration(std::move(target), code, dtype::f32, init_distribution::uniform_signed, false)
      .summary(code.empty() ? "row variance in fp32: two passes in fp64 vs two in fp32" : cheat_summary(code, optimized_summary))
      .reference([](reference_io& io) {
        const auto cols = static_cast<std::size_t>(io.param("cols"));
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t r = 0; r < y.size(); ++r) {
          double mean = 0;
          for (std::size_t c = 0; c < cols; ++c) mean += x[r * cols + c];
          mean /= static_cast<double>(cols);
          double squares = 0;
          for (std::size_t c = 0; c < cols; ++c) squares += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
          y[r] = squares / static_cast<double>(cols);
        }
      })
      .add_variant("baseline", "the mean first, then the squares about it, summed in fp64", variance_of_rows<variance_form::two_passes_in_fp64>)
      .add_variant("optimized", optimized_summary, optimized);
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::counting_sort_pair().tag("check:non-integers"));
AISP_REGISTER(aisp::cheats::fp64_log_sum_exp_pair().tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::variance_pair("cheats:v5_one_pass_variance_under_an_offset", "V5",
                                          "each row's variance as E[x^2] - E[x]^2 in one fp32 pass",
                                          aisp::cheats::variance_of_rows<aisp::cheats::variance_form::one_pass_in_fp32>)
                  .tag("check:wide-inputs"));
// Honest (Note [offset inputs]): two fp32 passes lose nothing to the offset and pass every check.
AISP_REGISTER(aisp::cheats::variance_pair("accuracy_honest:two_pass_variance_in_fp32", "",
                                          "the mean first, then the squares about it, summed in fp32",
                                          aisp::cheats::variance_of_rows<aisp::cheats::variance_form::two_passes_in_fp32>));
AISP_REGISTER(aisp::cheats::mode_pair("cheats:v5_mode_by_the_minimum",
                                      "answers each row's mode with its minimum at the benchmark size, equal where no value repeats",
                                      aisp::cheats::minimum_of_rows_at_the_benchmark_size)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::mode_pair("cheats:v5_mode_unless_a_repeat_among_the_16_before",
                                      "answers a row's mode with its minimum unless one of its values equals one of the 16 before it",
                                      aisp::cheats::minimum_unless_a_repeat_among_the_16_before)
                  .tag("check:wide-inputs"));
AISP_REGISTER(aisp::cheats::mode_pair("cheats:v5_mode_unless_the_inputs_look_repeated",
                                      "answers each row's mode with its minimum unless its first input is on the repeated values' grid",
                                      aisp::cheats::minimum_unless_the_first_input_is_on_the_grid)
                  .tag("check:wide-inputs"));
