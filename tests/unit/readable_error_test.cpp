// Errors a person can read: source locations and failed expressions come off the message.
#include <gtest/gtest.h>

#include "support/readable_error.hpp"

namespace aisp {
namespace {

TEST(without_source_locations, keeps_the_message_alone) {
  EXPECT_EQ(without_source_locations("/work/x/src/runner/target_selector.cpp:62: unknown target 'ch99:nope' (groups: ch07) [found]"),
            "unknown target 'ch99:nope' (groups: ch07)");
}

TEST(without_json_prefix, leaves_what_the_json_library_says_without_its_tag) {
  EXPECT_EQ(without_json_prefix("[json.exception.type_error.302] type must be string, but is number"),
            "type must be string, but is number");
  EXPECT_EQ(without_json_prefix("no tag here"), "no tag here");
}

TEST(without_source_locations, strips_nested_locations_and_their_expressions) {
  const std::string nested =
      "/w/src/cli/bench_inspect_commands.cpp:139: 1 pair(s) break the benchmark contract: /w/src/harness/pair.cpp:213: "
      "t:x: no optimized variant [gaps.empty()];  [false]";
  EXPECT_EQ(without_source_locations(nested), "1 pair(s) break the benchmark contract: t:x: no optimized variant");
}

// A message relayed from the pair host lost its location but not its expression.
TEST(without_source_locations, drops_a_relayed_expression_that_reads_as_code) {
  EXPECT_EQ(without_source_locations("python: no such file mine.py [why == nullptr]"), "python: no such file mine.py");
  EXPECT_EQ(without_source_locations("plugin 'x.so': breaks the benchmark contract [false]"), "plugin 'x.so': breaks the benchmark contract");
  EXPECT_EQ(without_source_locations("registers no pair [known.pairs().size() > pairs_before]"), "registers no pair");
  EXPECT_EQ(without_source_locations("speedup 0.794x [0.766, 0.905]"), "speedup 0.794x [0.766, 0.905]");
  EXPECT_EQ(without_source_locations("src/a.cpp:1: src/b.cpp:2: plugin 'x.so': not the same computation [false] [false]"),
            "plugin 'x.so': not the same computation");
}

TEST(without_source_locations, leaves_text_without_a_location_as_it_is) {
  EXPECT_EQ(without_source_locations("the workload does not fit [see --size]"), "the workload does not fit [see --size]");
  EXPECT_EQ(without_source_locations("src/a.cu:7: cudaErrorInvalidValue (invalid argument): cudaMalloc(&p, n)"),
            "cudaErrorInvalidValue (invalid argument): cudaMalloc(&p, n)");
}

}  // namespace
}  // namespace aisp
