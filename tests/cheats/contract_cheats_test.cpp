// Cheats that the contract refuses before anything runs, so they cannot be registered as fixtures.
// V8 (missing holdout): a pair with no held-out size never reaches `bench run`; the registry
// records it as broken, and `bench run` then exits 2 naming it.
#include <gtest/gtest.h>

#include <string>

#include "aisp/pair.hpp"
#include "aisp/registry.hpp"

namespace {

// y = 2x + 1, complete except for what a test leaves out.
aisp::pair affine_pair(const std::string& target, bool with_held_out) {
  aisp::pair declared(target);
  declared.on(aisp::backend::host)
      .benchmark_size({{"n", 4096}})
      .validation_size({{"n", 1}})
      .validation_size({{"n", 7}})
      .input("x", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
      .output("y", aisp::dtype::f32, [](const aisp::workload& w) { return w.get("n"); })
      .work([](const aisp::workload& w) {
        return aisp::work_amount{.bytes = 8.0 * static_cast<double>(w.get("n")), .flops = 0.0};
      })
      .reference([](aisp::reference_io& io) {
        const auto x = io.input("x");
        const auto y = io.output("y");
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0 * x[i] + 1.0;
      })
      .add_variant("baseline", "honest", [](aisp::run_context&) {})
      .add_variant("optimized", "honest", [](aisp::run_context&) {});
  if (with_held_out) declared.held_out_size({{"n", 1003}});
  return declared;
}

TEST(contract_cheats, a_pair_without_a_held_out_size_is_refused_with_V8) {
  aisp::registry pairs;
  pairs.add(affine_pair("cheats:v8_missing_holdout", false));
  EXPECT_TRUE(pairs.pairs().empty()) << "a pair without a held-out size must not be runnable";
  ASSERT_EQ(pairs.broken().size(), 1u);
  EXPECT_NE(pairs.broken()[0].find("V8"), std::string::npos) << pairs.broken()[0];
  EXPECT_NE(pairs.broken()[0].find("cheats:v8_missing_holdout"), std::string::npos) << pairs.broken()[0];
}

TEST(contract_cheats, the_same_pair_with_a_held_out_size_is_accepted) {
  aisp::registry pairs;
  pairs.add(affine_pair("cheats:v8_with_holdout", true));
  EXPECT_TRUE(pairs.broken().empty()) << (pairs.broken().empty() ? "" : pairs.broken()[0]);
  EXPECT_EQ(pairs.pairs().size(), 1u);
}

}  // namespace
