// Planted cheats of the multi-GPU rows (Note [ranks]), on host ranks: the machinery that starts
// one worker per rank, folds their answers and verifies every rank's outputs is the same for host
// and GPU ranks, so CI holds it without a GPU. Each rank computes y = 2x + 1 on its own shard.
// Run: aisp_cheats bench run --targets cheats:d1_rank_returns_early cheats:d4_rank_one_lags cheats:d8_ranks_shrink_their_shards
#include <chrono>
#include <cstdlib>
#include <thread>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr int ranks = 2;

pair rank_pair(std::string target, std::string_view code, variant cheat) {
  pair declared = elementwise_declaration(std::move(target), code);
  declared.summary(cheat_summary(code, cheat.summary))
      .world_size(ranks)
      .add_variant(honest_baseline())
      .add_variant(std::move(cheat));
  return declared;
}

// D1: the last rank returns before doing its shard; rank 0's outputs are right.
AISP_REGISTER(rank_pair("cheats:d1_rank_returns_early", "D1",
                        cheating_variant("the last rank returns without computing its shard", [](run_context& ctx) {
                          if (ctx.rank() == ctx.world_size() - 1) return;
                          affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
                        })));

// D4: rank 0 finishes fast; rank 1 computes, then keeps working (here: waits) long after. Timed
// on rank 0 alone this variant would look as fast as the baseline.
AISP_REGISTER(rank_pair("cheats:d4_rank_one_lags", "D4",
                        cheating_variant("rank 0 is fast, rank 1 lags 2 ms behind every call", [](run_context& ctx) {
                          affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
                          if (ctx.rank() == 0) return;
                          const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
                          while (std::chrono::steady_clock::now() < until) {
                          }
                        })));

// D8: every rank computes the first half of its shard only, as if the world's n were split over
// twice the ranks (a variant sizing its shard from its own arithmetic, not from its buffers).
AISP_REGISTER(rank_pair("cheats:d8_ranks_shrink_their_shards", "D8",
                        cheating_variant("every rank computes the first half of its shard", [](run_context& ctx) {
                          affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x") / 2);
                        })));

}  // namespace
}  // namespace aisp::cheats

namespace aisp::rank_faults {
namespace {

// Not cheats: ranks that fail. The pair must end in seconds with the failure named, and no rank
// left waiting (tests/cheats/ranks_test.cpp). Group rank_faults.
pair faulty_pair(std::string target, std::string what, stage_fn run) {
  pair declared = cheats::honest_elementwise_declaration(std::move(target), cheats::affine_math, dtype::f32, cheats::benchmark_elements);
  declared.summary(what)
      .world_size(2)
      .add_variant(cheats::honest_baseline())
      .add_variant(cheats::cheating_variant(std::move(what), std::move(run)));
  return declared;
}

AISP_REGISTER(faulty_pair("rank_faults:rank_one_aborts", "rank 1 aborts in run()", [](run_context& ctx) {
  if (ctx.rank() == 1) std::abort();
  cheats::affine(ctx.as<const float>("x"), ctx.as<float>("y"), cheats::elements_of(ctx, "x"));
}));

AISP_REGISTER(faulty_pair("rank_faults:rank_one_hangs", "rank 1 never returns from run()", [](run_context& ctx) {
  if (ctx.rank() == 1) {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  cheats::affine(ctx.as<const float>("x"), ctx.as<float>("y"), cheats::elements_of(ctx, "x"));
}));

}  // namespace
}  // namespace aisp::rank_faults
