// tutorial:array_sum: the sum of n fp64 values, on the host. The tutorial's first pair.
// Baseline: one accumulator: each add waits for the one before it (4 cycles on a modern core).
// Optimized: eight accumulators, added up at the end: eight independent chains keep the adder
// busy and let the compiler use vector adds, so the loop runs at memory speed.
// The two sum in different orders, so they differ in the last bits: the reference is an fp64
// sum and the default fp64 tolerance covers the reordering of n <= 2^24 values in [-1, 1].
// Run: aisp bench run --plugin libtutorial_pairs.so --targets tutorial:array_sum
#include <array>
#include <cstddef>
#include <span>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"

namespace tutorial {
namespace {

void sum_one_chain(aisp::run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  const double* values = ctx.as<const double>("values");
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) total += values[i];
  *ctx.as<double>("sum") = total;
}

void sum_eight_chains(aisp::run_context& ctx) {
  const auto n = static_cast<std::size_t>(ctx.param("n"));
  const double* values = ctx.as<const double>("values");
  constexpr std::size_t chains = 8;
  std::array<double, chains> partial{};
  std::size_t i = 0;
  for (; i + chains <= n; i += chains) {
    for (std::size_t k = 0; k < chains; ++k) partial[k] += values[i + k];
  }
  for (; i < n; ++i) partial[0] += values[i];  // the last n % 8
  double total = 0.0;
  for (const double p : partial) total += p;
  *ctx.as<double>("sum") = total;
}

[[nodiscard]] std::int64_t element_count(const aisp::workload& w) { return w.get("n"); }

}  // namespace
}  // namespace tutorial

AISP_REGISTER(aisp::pair("tutorial:array_sum")
                  .summary("fp64 sum on the host: one accumulator vs eight")
                  .on(aisp::backend::host)
                  .benchmark_size({{"n", std::int64_t{1} << 24}})  // 128 MiB, far above the caches
                  .validation_size({{"n", 1}})
                  .validation_size({{"n", 7}})
                  .validation_size({{"n", 1001}})
                  .held_out_size({{"n", 65537}})
                  .input("values", aisp::dtype::f64, tutorial::element_count)
                  .output("sum", aisp::dtype::f64, [](const aisp::workload&) { return std::int64_t{1}; })
                  .work([](const aisp::workload& w) {
                    const double n = static_cast<double>(w.get("n"));
                    return aisp::work_amount{.bytes = 8.0 * n, .flops = n};
                  })
                  .reference([](aisp::reference_io& io) {
                    double total = 0.0;
                    for (const double v : io.input("values")) total += v;
                    io.output("sum")[0] = total;
                  })
                  .add_variant("baseline", "one accumulator: a chain of dependent adds", tutorial::sum_one_chain)
                  .add_variant("optimized", "eight accumulators: independent chains, vector adds", tutorial::sum_eight_chains));
