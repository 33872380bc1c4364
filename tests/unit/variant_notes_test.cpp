// run_context::note() from setup() to results.json: the bounds a note is kept within, the load
// report of a real (host) session, the worker's reply read back by the judge, and the results.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "harness/variant_notes.hpp"
#include "harness/variant_session.hpp"
#include "results/result_json.hpp"
#include "runner/worker_protocol.hpp"

namespace {

using aisp::contract_error;
using aisp::variant_notes;
using nlohmann::json;

TEST(variant_notes, a_key_noted_again_replaces_its_value_and_counts_once) {
  variant_notes notes;
  notes.add("cublaslt_algorithm", "algo 1");
  notes.add("cublaslt_algorithm", "algo 2");
  ASSERT_EQ(notes.all().size(), 1u);
  EXPECT_EQ(notes.all().at("cublaslt_algorithm"), "algo 2");
}

TEST(variant_notes, keys_must_be_short_lowercase_words) {
  variant_notes notes;
  for (const std::string& key : std::vector<std::string>{"", "Algorithm", "the algorithm", "algo-id", "algo.id", std::string(41, 'k')}) {
    EXPECT_THROW(notes.add(key, "x"), contract_error) << "'" << key << "'";
  }
  notes.add(std::string(40, 'k'), "x");
  notes.add("tile_2", "x");
  EXPECT_EQ(notes.all().size(), 2u);
}

TEST(variant_notes, a_value_of_256_characters_is_kept_and_one_of_257_is_refused) {
  variant_notes notes;
  notes.add("fits", std::string(256, 'v'));
  EXPECT_THROW(notes.add("floods", std::string(257, 'v')), contract_error);
  EXPECT_EQ(notes.all().size(), 1u);
}

TEST(variant_notes, control_characters_and_bytes_past_ascii_are_refused) {
  variant_notes notes;
  EXPECT_THROW(notes.add("line", "one\ntwo"), contract_error);
  EXPECT_THROW(notes.add("tab", "a\tb"), contract_error);
  EXPECT_THROW(notes.add("utf8", "5 \xc2\xb5s"), contract_error);
  EXPECT_THROW(notes.add("broken", "\xff"), contract_error);
  notes.add("printable", " !~ algo 66: rank 3 of 16 (x1.04)");
  EXPECT_EQ(notes.all().size(), 1u);
}

TEST(variant_notes, a_fifth_key_is_refused_but_the_four_kept_can_still_change) {
  variant_notes notes;
  for (const char* key : {"a", "b", "c", "d"}) notes.add(key, key);
  EXPECT_THROW(notes.add("e", "e"), contract_error);
  notes.add("d", "changed");
  EXPECT_EQ(notes.all().size(), 4u);
  EXPECT_EQ(notes.all().at("d"), "changed");
}

TEST(notes_protocol, notes_come_back_from_the_workers_reply_as_they_left) {
  variant_notes sent;
  sent.add("cublaslt_algorithm", "algo 66 tile 24: rank 3 of 16 heuristic candidates (16 timed), 1.412 ms; rank 1 1.455 ms");
  sent.add("second", "");
  const auto line = json{{"ok", true}, {"load", {{"notes", aisp::protocol::notes_to_json(sent)}}}}.dump();
  const auto received = aisp::protocol::notes_from_json(json::parse(line).at("load").at("notes"));
  EXPECT_EQ(received.all(), sent.all());
  EXPECT_TRUE(aisp::protocol::notes_to_json(variant_notes{}).is_object());
}

TEST(notes_protocol, the_judge_refuses_a_reply_with_more_than_a_variant_may_note) {
  const json five = {{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}};
  EXPECT_THROW(static_cast<void>(aisp::protocol::notes_from_json(five)), contract_error);
  EXPECT_THROW(static_cast<void>(aisp::protocol::notes_from_json(json{{"long", std::string(300, 'x')}})), contract_error);
  EXPECT_THROW(static_cast<void>(aisp::protocol::notes_from_json(json{{"number", 3}})), contract_error);
  EXPECT_THROW(static_cast<void>(aisp::protocol::notes_from_json(json::array({"a"}))), contract_error);
}

TEST(result_json, every_variant_carries_a_notes_object_with_what_setup_noted) {
  aisp::pair_result result;
  result.target = "test:notes";
  result.variants.resize(2);
  result.variants[0].name = "baseline";
  result.variants[1].name = "peer_cublas";
  result.variants[1].notes = {{"cublaslt_algorithm", "algo 66"}};
  const auto document = json::parse(aisp::to_json(result).dump());
  EXPECT_EQ(document["variants"][0]["notes"], json::object());
  EXPECT_EQ(document["variants"][1]["notes"], (json{{"cublaslt_algorithm", "algo 66"}}));
}

// A host pair whose variant notes from `setup` (and maybe from run()): the session's real context.
aisp::pair noting_pair(aisp::stage_fn setup, bool note_in_run) {
  aisp::variant v;
  v.name = "baseline";
  v.summary = "copies x to y";
  v.setup = std::move(setup);
  v.run = [note_in_run](aisp::run_context& ctx) {
    if (note_in_run) ctx.note("late", "from run()");
    ctx.as<double>("y")[0] = ctx.as<const double>("x")[0];
  };
  aisp::pair declared("test:notes");
  declared.on(aisp::backend::host)
      .benchmark_size({{"n", 1}})
      .validation_size({{"n", 1}})
      .input("x", aisp::dtype::f64, [](const aisp::workload&) { return std::int64_t{1}; })
      .output("y", aisp::dtype::f64, [](const aisp::workload&) { return std::int64_t{1}; })
      .add_variant(std::move(v));
  return declared;
}

TEST(variant_session, the_load_report_holds_what_setup_noted) {
  const auto declared = noting_pair([](aisp::run_context& ctx) { ctx.note("chosen", "the second of two"); }, false);
  aisp::variant_session session(declared, declared.variants().front(), {});
  const auto report = session.load(declared.workloads().front());
  EXPECT_EQ(report.notes.all(), (std::map<std::string, std::string>{{"chosen", "the second of two"}}));
}

TEST(variant_session, a_note_past_the_bounds_fails_the_load_and_one_from_run_too) {
  const auto flooding = noting_pair([](aisp::run_context& ctx) { ctx.note("log", std::string(4096, 'x')); }, false);
  aisp::variant_session flooded(flooding, flooding.variants().front(), {});
  EXPECT_THROW(static_cast<void>(flooded.load(flooding.workloads().front())), contract_error);
  const auto late = noting_pair([](aisp::run_context&) {}, true);
  aisp::variant_session warmed(late, late.variants().front(), {});
  EXPECT_THROW(static_cast<void>(warmed.load(late.workloads().front())), contract_error);
}

}  // namespace
