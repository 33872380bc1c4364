// Note [ranks]: each rank's inputs are its own draw, except those the pair declares the same on
// every rank; the judge's regenerated inputs are the ranks' buffers, rank-major, drawn alike.
#include <gtest/gtest.h>

#include <vector>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "harness/buffer_store.hpp"
#include "support/element_codec.hpp"
#include "verify/reference_runner.hpp"

namespace {

using aisp::dtype;

aisp::pair two_rank_pair() {
  return aisp::pair("tests:ranks")
      .on(aisp::backend::host)
      .world_size(2)
      .benchmark_size({{"n", 64}})
      .input("own", dtype::f32, {"n"})
      .input("weights", dtype::bf16, {"n"})
      .derived_input("weights_fp8", dtype::e4m3, "weights")
      .same_on_every_rank("weights")
      .output("y", dtype::f32, {"n"});
}

aisp::workload size_of(std::int64_t n) { return aisp::workload{aisp::workload_kind::validation, {{"n", n}}}; }

std::vector<double> values_of(const aisp::buffer_store& store, const char* name) {
  const auto& b = store.find(name);
  std::vector<double> values;
  for (std::size_t i = 0; i < b.num_elements; ++i) values.push_back(aisp::load_as_double(b.spec.type, b.data, i));
  return values;
}

TEST(rank_inputs, each_rank_draws_its_own_inputs_but_shares_the_replicated_ones) {
  const auto declared = two_rank_pair();
  aisp::buffer_store rank0(declared, size_of(64), aisp::backend::host, 0);
  aisp::buffer_store rank1(declared, size_of(64), aisp::backend::host, 1);
  rank0.fill_inputs(5);
  rank1.fill_inputs(5);
  EXPECT_NE(values_of(rank0, "own"), values_of(rank1, "own"));
  EXPECT_EQ(values_of(rank0, "weights"), values_of(rank1, "weights"));
  EXPECT_EQ(values_of(rank0, "weights_fp8"), values_of(rank1, "weights_fp8")) << "a derived input follows its source";
  rank0.refresh_inputs(9, nullptr);
  rank1.refresh_inputs(9, nullptr);
  EXPECT_NE(values_of(rank0, "own"), values_of(rank1, "own"));
  EXPECT_EQ(values_of(rank0, "weights"), values_of(rank1, "weights"));
}

TEST(rank_inputs, the_judge_regenerates_every_ranks_buffer_rank_major) {
  const auto declared = two_rank_pair();
  aisp::buffer_store rank0(declared, size_of(64), aisp::backend::host, 0);
  aisp::buffer_store rank1(declared, size_of(64), aisp::backend::host, 1);
  rank0.fill_inputs(5);
  rank1.fill_inputs(5);
  // A replicated element written by a challenge changes on every rank, in the judge's copy too.
  const aisp::verify::reference_inputs inputs{5, aisp::input_values::declared, {{"weights", 3, 0.25}}};
  const auto values = aisp::verify::generate_inputs(declared, size_of(64), inputs);
  auto expected = values_of(rank0, "own");
  const auto second = values_of(rank1, "own");
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(values.at("own"), expected);
  ASSERT_EQ(values.at("weights").size(), 128U);
  EXPECT_EQ(values.at("weights")[3], 0.25);
  EXPECT_EQ(values.at("weights")[64 + 3], 0.25);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(values.at("weights")[i], values.at("weights")[64 + i]);
}

TEST(rank_inputs, only_a_declared_input_can_be_replicated) {
  aisp::pair p("tests:bad");
  p.input("x", dtype::f32, {"n"});
  EXPECT_THROW(p.same_on_every_rank("nope"), aisp::contract_error);
  EXPECT_THROW(p.world_size(9).benchmark_size({{"n", 1}}).validate(), aisp::contract_error);
}

}  // namespace
