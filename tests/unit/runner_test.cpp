#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "runner/target_selector.hpp"
#include "runner/worker_process.hpp"

namespace {

aisp::pair make_pair(const std::string& target) {
  const auto count = [](const aisp::workload& w) { return w.get("n"); };
  return aisp::pair(target)
      .benchmark_size({{"n", 64}})
      .validation_size({{"n", 7}})
      .held_out_size({{"n", 9}})
      .input("x", aisp::dtype::f32, count)
      .output("y", aisp::dtype::f32, count)
      .work([](const aisp::workload&) { return aisp::work_amount{1, 0}; })
      .reference([](aisp::reference_io&) {})
      .add_variant("baseline", "b", [](aisp::run_context&) {})
      .add_variant("optimized", "o", [](aisp::run_context&) {})
      .add_variant("optimized_unrolled", "u", [](aisp::run_context&) {});
}

aisp::registry sample_registry() {
  aisp::registry pairs;
  pairs.add(make_pair("ch07:copy"));
  pairs.add(make_pair("ch07:transpose"));
  pairs.add(make_pair("ch08:unroll"));
  pairs.add(make_pair("labs/host:sum"));
  return pairs;
}

TEST(select_targets, all_selects_every_pair_once) {
  const auto pairs = sample_registry();
  EXPECT_EQ(aisp::select_targets(pairs, {"all", "ch07"}).size(), 4u);
}

TEST(select_targets, a_chapter_selects_its_pairs_and_a_lab_its_own) {
  const auto pairs = sample_registry();
  EXPECT_EQ(aisp::select_targets(pairs, {"ch07"}).size(), 2u);
  const auto lab = aisp::select_targets(pairs, {"labs/host"});
  ASSERT_EQ(lab.size(), 1u);
  EXPECT_EQ(lab[0].declared->target(), "labs/host:sum");
  EXPECT_EQ(aisp::select_targets(pairs, {"labs/host:sum"}).size(), 1u);
}

TEST(select_targets, a_variant_word_limits_the_candidates_and_the_whole_pair_wins_over_it) {
  const auto pairs = sample_registry();
  const auto one = aisp::select_targets(pairs, {"ch07:copy:optimized_unrolled"});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].candidates, std::vector<std::string>{"optimized_unrolled"});
  const auto whole = aisp::select_targets(pairs, {"ch07:copy:optimized_unrolled", "ch07:copy"});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_TRUE(whole[0].candidates.empty());
}

TEST(select_targets, commas_and_spaces_inside_one_word_separate_targets) {
  const auto registry = sample_registry();
  const auto comma = aisp::select_targets(registry, {"ch07:copy,ch08:unroll"});
  ASSERT_EQ(comma.size(), 2u);
  EXPECT_EQ(comma[0].declared->target(), "ch07:copy");
  EXPECT_EQ(comma[1].declared->target(), "ch08:unroll");
  EXPECT_EQ(aisp::select_targets(registry, {"ch07:copy ch08:unroll"}).size(), 2u);
  EXPECT_EQ(aisp::select_targets(registry, {"ch07:copy,", "ch08:unroll"}).size(), 2u);
}

TEST(select_targets, unknown_words_are_contract_errors_that_say_what_exists) {
  const auto pairs = sample_registry();
  try {
    (void)aisp::select_targets(pairs, {"ch07:nope"});
    FAIL() << "no error";
  } catch (const aisp::contract_error& error) {
    EXPECT_NE(std::string(error.what()).find("ch07 has: copy, transpose"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)aisp::select_targets(pairs, {"ch99"}), aisp::contract_error);
  EXPECT_THROW((void)aisp::select_targets(pairs, {"ch07:copy:turbo"}), aisp::contract_error);
  EXPECT_THROW((void)aisp::select_targets(pairs, {"ch07:copy:baseline"}), aisp::contract_error);
}

TEST(registry, records_a_broken_contract_instead_of_throwing) {
  aisp::registry pairs;
  pairs.add(aisp::pair("ch07:empty"));
  pairs.add(make_pair("ch07:copy"));
  pairs.add(make_pair("ch07:copy"));
  EXPECT_EQ(pairs.pairs().size(), 1u);
  ASSERT_EQ(pairs.broken().size(), 2u);
  EXPECT_NE(pairs.broken()[0].find("no reference"), std::string::npos) << pairs.broken()[0];
  EXPECT_NE(pairs.broken()[1].find("registered twice"), std::string::npos) << pairs.broken()[1];
}

// Fake workers: shell scripts that play a worker's part, so the judge's handling of answers,
// hangs and crashes is tested without a GPU or a real worker.
class fake_worker : public ::testing::Test {
 protected:
  std::string script(const std::string& name, const std::string& body) {
    const auto path = std::filesystem::temp_directory_path() / ("aisp_fake_" + name + "_" + std::to_string(getpid()));
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path.string();
  }
  std::string log() { return (std::filesystem::temp_directory_path() / ("aisp_fake_log_" + std::to_string(getpid()))).string(); }
};

TEST_F(fake_worker, an_answer_comes_back_as_json) {
  aisp::worker_process worker(script("echo", "read line; echo '{\"ok\":true,\"value\":7}'"), log());
  const auto reply = worker.request({{"op", "init"}}, 5.0);
  EXPECT_EQ(reply.at("value"), 7);
}

TEST_F(fake_worker, an_error_answer_throws_with_its_kind) {
  aisp::worker_process worker(script("err", "read line; echo '{\"ok\":false,\"kind\":\"cuda\",\"message\":\"illegal address\"}'"), log());
  try {
    (void)worker.request({{"op", "sample"}}, 5.0);
    FAIL() << "no failure";
  } catch (const aisp::worker_failure& failure) {
    EXPECT_EQ(failure.kind(), aisp::worker_failure_kind::cuda);
    EXPECT_NE(std::string(failure.what()).find("illegal address"), std::string::npos);
  }
}

TEST_F(fake_worker, a_hang_is_killed_at_the_deadline_and_reported_as_timeout) {
  // exec, not a child: the sandbox lets no worker start a process (Note [worker sandbox]).
  aisp::worker_process worker(script("hang", "read line; exec sleep 30"), log());
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)worker.request({{"op", "sample"}}, 0.5);
    FAIL() << "no failure";
  } catch (const aisp::worker_failure& failure) {
    EXPECT_EQ(failure.kind(), aisp::worker_failure_kind::timeout);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST_F(fake_worker, a_worker_that_starts_a_process_is_killed_by_its_sandbox_and_reported_so) {
  aisp::worker_process worker(script("spawn", "read line; /bin/true; echo '{\"ok\":true}'"), log());
  try {
    (void)worker.request({{"op", "sample"}}, 5.0);
    FAIL() << "the shell started /bin/true inside the sandbox";
  } catch (const aisp::worker_failure& failure) {
    EXPECT_EQ(failure.kind(), aisp::worker_failure_kind::sandbox) << failure.what();
    EXPECT_NE(std::string(failure.what()).find("SIGSYS"), std::string::npos) << failure.what();
  }
}

TEST_F(fake_worker, a_crash_is_reported_with_its_signal_and_last_log_line) {
  aisp::worker_process worker(script("crash", "read line; echo 'about to fault' >&2; kill -SEGV $$"), log());
  try {
    (void)worker.request({{"op", "sample"}}, 5.0);
    FAIL() << "no failure";
  } catch (const aisp::worker_failure& failure) {
    EXPECT_EQ(failure.kind(), aisp::worker_failure_kind::crash);
    EXPECT_NE(std::string(failure.what()).find("signal 11"), std::string::npos) << failure.what();
    EXPECT_NE(std::string(failure.what()).find("about to fault"), std::string::npos) << failure.what();
  }
}

}  // namespace
