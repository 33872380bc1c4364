// Note [verified after the call]: a worker's verified records arrive before its answer, each on
// its own line, and join the answer in order.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "runner/worker_process.hpp"

namespace {

using nlohmann::json;

TEST(partial_replies, are_told_from_answers_by_their_key) {
  EXPECT_TRUE(aisp::is_partial_reply(R"({"ok":true,"partial":"verified","record":{"index":3}})"));
  EXPECT_FALSE(aisp::is_partial_reply(R"({"ok":true,"samples":[]})"));
  EXPECT_FALSE(aisp::is_partial_reply(R"({"ok":true,"note":"\"partial\" in a string"})"));
  EXPECT_FALSE(aisp::is_partial_reply("not json \"partial\""));
}

TEST(partial_replies, join_the_answer_in_the_order_they_came) {
  const std::vector<json> lines = {{{"ok", true}, {"partial", "verified"}, {"record", {{"index", 1}}}},
                                   {{"ok", true}, {"partial", "verified"}, {"record", {{"index", 4}}}},
                                   {{"ok", true}, {"samples", json::array({1, 2, 3, 4, 5})}}};
  std::size_t next = 0;
  std::vector<double> lefts;
  const auto answer = aisp::receive_joining_partials(10.0, [&](double left_s) {
    lefts.push_back(left_s);
    return lines.at(next++);
  });
  EXPECT_EQ(next, 3u);
  ASSERT_EQ(answer.at("verified").size(), 2u);
  EXPECT_EQ(answer["verified"][0]["index"], 1);
  EXPECT_EQ(answer["verified"][1]["index"], 4);
  EXPECT_EQ(answer["samples"].size(), 5u);
  for (double left : lefts) EXPECT_LE(left, 10.0);  // one deadline for the whole answer
}

TEST(partial_replies, an_answer_without_them_has_no_verified_key) {
  const auto answer = aisp::receive_joining_partials(1.0, [](double) { return json{{"ok", true}, {"samples", json::array()}}; });
  EXPECT_FALSE(answer.contains("verified"));
}

}  // namespace
