// Planted cheats of the multi-GPU rows (Note [ranks]), on host ranks: the machinery that starts
// one worker per rank, folds their answers and verifies every rank's outputs is the same for host
// and GPU ranks, so CI holds it without a GPU. Each rank computes y = 2x + 1 on its own shard.
// Run: aisp_cheats bench run --targets cheats:d1_rank_returns_early cheats:d4_rank_one_lags
#include <chrono>
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

}  // namespace
}  // namespace aisp::cheats
