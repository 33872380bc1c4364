// Note [launch]: single pairs are dealt out over the launch ranks in turn; multi-rank pairs all go
// to launch rank 0, after its single pairs; every pair is judged exactly once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "runner/launch_share.hpp"

namespace {

std::vector<std::string> targets_of(const std::vector<aisp::pair_request>& requests) {
  std::vector<std::string> names;
  for (const auto& r : requests) names.push_back(r.declared->target());
  return names;
}

TEST(launch_share, single_pairs_are_dealt_in_turn_and_multi_rank_pairs_go_to_rank_zero_last) {
  aisp::pair a("t:a");
  aisp::pair ranked("t:ranked");
  ranked.world_size(2);
  aisp::pair b("t:b");
  aisp::pair c("t:c");
  const std::vector<aisp::pair_request> all{{&a, {}}, {&ranked, {}}, {&b, {}}, {&c, {}}};
  EXPECT_EQ(targets_of(aisp::launch_share(all, 0, 2)), (std::vector<std::string>{"t:a", "t:c", "t:ranked"}));
  EXPECT_EQ(targets_of(aisp::launch_share(all, 1, 2)), (std::vector<std::string>{"t:b"}));
  EXPECT_EQ(targets_of(aisp::launch_share(all, 2, 3)), (std::vector<std::string>{"t:c"}));
  EXPECT_TRUE(aisp::launch_share({{&ranked, {}}}, 1, 2).empty());
}

}  // namespace
