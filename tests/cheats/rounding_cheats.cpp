// Note [error under the rounding] (src/runner/candidate_accuracy.cpp): a shortcut whose error
// stays under a bf16 output's own rounding, taken only at the benchmark size, and the honest pair
// beside it whose candidate sums the same rows in another order (accuracy_honest, which must pass;
// candidate_accuracy_test.cpp). Found by a red team that never saw these fixtures (round five,
// 2026-12-04): its 3/4-row estimate read 1.25x "faster" with every check passing.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// The benchmark size's rows are this long; every small size's are shorter.
constexpr std::int64_t long_row = 16384;

// Each row's mean square, x (rows, cols) fp32 -> y (rows,) bf16. The fp64 reference is the same
// mean, unrounded; the judge rounds nothing for the variants.
pair row_power_declaration(std::string target) {
  pair declared(std::move(target));
  declared.summary("mean square of each row, into bf16")
      .on(backend::host)
      .benchmark_size({{"rows", 64}, {"cols", long_row}})
      .validation_size({{"rows", 1}, {"cols", 7}})
      .validation_size({{"rows", 17}, {"cols", 1001}})
      .validation_size({{"rows", 33}, {"cols", 2048}})
      .held_out_size({{"rows", 5}, {"cols", 4099}})
      .input("x", dtype::f32, std::vector<std::string>{"rows", "cols"})
      .output("y", dtype::bf16, std::vector<std::string>{"rows"})
      .work([](const workload& w) {
        const double elements = static_cast<double>(w.get("rows")) * static_cast<double>(w.get("cols"));
        return work_amount{.bytes = 4.0 * elements + 2.0 * static_cast<double>(w.get("rows")), .flops = 2.0 * elements};
      })
      .reference([](reference_io& io) {
        const auto cols = static_cast<std::size_t>(io.param("cols"));
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t r = 0; r < y.size(); ++r) {
          double squares = 0;
          for (std::size_t c = 0; c < cols; ++c) squares += x[r * cols + c] * x[r * cols + c];
          y[r] = squares / static_cast<double>(cols);
        }
      });
  return declared;
}

// The mean square of the row's first `used` elements, on one running fp32 sum or eight.
float one_chain(const float* row, std::size_t used) {
  float squares = 0;
  for (std::size_t c = 0; c < used; ++c) squares += row[c] * row[c];
  return squares / static_cast<float>(used);
}

float eight_chains(const float* row, std::size_t used) {
  std::array<float, 8> partial{};
  std::size_t c = 0;
  for (; c + 8 <= used; c += 8)
    for (std::size_t k = 0; k < 8; ++k) partial[k] += row[c + k] * row[c + k];
  for (; c < used; ++c) partial[0] += row[c] * row[c];
  float squares = 0;
  for (const float p : partial) squares += p;
  return squares / static_cast<float>(used);
}

// Each row's result into y as bf16; `used(cols)` is how much of a row is read.
template <float (*mean_square)(const float*, std::size_t), std::size_t (*used)(std::size_t)>
void row_powers(run_context& ctx) {
  const auto rows = static_cast<std::size_t>(ctx.param("rows"));
  const auto cols = static_cast<std::size_t>(ctx.param("cols"));
  const float* x = ctx.as<const float>("x");
  auto* y = ctx.as<std::uint16_t>("y");
  for (std::size_t r = 0; r < rows; ++r) y[r] = bf16_bits(mean_square(x + r * cols, used(cols)));
}

std::size_t every_element(std::size_t cols) { return cols; }
// "Long rows: a sampled estimate": 3/4 of each row at the benchmark size only.
std::size_t three_quarters_of_long_rows(std::size_t cols) { return cols >= long_row ? cols / 4 * 3 : cols; }

pair shortcut_pair() {
  pair declared = row_power_declaration("cheats:o3_shortcut_under_bf16_rounding");
  declared.summary(cheat_summary("O3", "long rows estimated from 3/4 of their elements, under bf16's rounding"))
      .tag("cheat:O3")
      .add_variant(variant{"baseline", "one running sum a row", row_powers<one_chain, every_element>, {}, {}, {}, {}, {}, {}, {}})
      .add_variant(cheating_variant("eight running sums; long rows estimated from 3/4 of them", row_powers<eight_chains, three_quarters_of_long_rows>));
  return declared;
}

pair reordered_pair() {
  pair declared = row_power_declaration("accuracy_honest:bf16_rows_reordered");
  declared.add_variant(variant{"baseline", "one running sum a row", row_powers<one_chain, every_element>, {}, {}, {}, {}, {}, {}, {}})
      .add_variant(variant{"optimized", "eight running sums a row", row_powers<eight_chains, every_element>, {}, {}, {}, {}, {}, {}, {}});
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::shortcut_pair().tag("check:accuracy"));
AISP_REGISTER(aisp::cheats::reordered_pair());
