// `aisp serve` over real HTTP (issue 23): the binary listening on a free port of 127.0.0.1, over
// a history made by real host runs. Every read route; bad input as 4xx with one-line errors;
// the read-only default, the token, the body limit and path traversal; a run started, followed
// to its results and another cancelled through the API.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "served_process.hpp"

namespace {

using nlohmann::json;

using aisp::testing::expect_error;
using aisp::testing::served;

using serve_api = aisp::testing::host_history_test;

TEST_F(serve_api, answers_every_read_route_from_the_history) {
  served server(db(), "");
  const auto index = server.ask("GET", "/api/v1");
  EXPECT_EQ(index.status, 200);
  EXPECT_GE(index.body["routes"].size(), 10u);
  const auto runs = server.ask("GET", "/api/v1/runs?target=labs/host:transpose&limit=5");
  ASSERT_EQ(runs.status, 200) << runs.body.dump();
  EXPECT_EQ(runs.body["runs"].size(), 2u);
  const auto run = server.ask("GET", "/api/v1/runs/1");
  EXPECT_EQ(run.body["pairs"][0]["target"], "labs/host:transpose");
  const auto pair = server.ask("GET", "/api/v1/runs/1/pair?target=labs/host:transpose&samples=1");
  EXPECT_FALSE(pair.body["variants"][0]["samples_s"].empty()) << pair.body.dump().substr(0, 300);
  EXPECT_EQ(server.ask("GET", "/api/v1/compare?a=1&b=2").body["changes"].size(), 2u);
  EXPECT_EQ(server.ask("GET", "/api/v1/history?target=labs/host:transpose").body["runs"].size(), 2u);
  EXPECT_EQ(server.ask("GET", "/api/v1/validity?query=S2").body["rows"][0]["code"], "S2");
  EXPECT_FALSE(server.ask("GET", "/api/v1/targets?group=labs/host").body["targets"].empty());
  EXPECT_EQ(server.ask("GET", "/api/v1/ceilings").status, 200);
}

TEST_F(serve_api, bad_input_is_a_4xx_with_one_line) {
  served server(db(), "");
  expect_error(server.ask("GET", "/api/v1/runs/abc"), 400, "positive integer");
  expect_error(server.ask("GET", "/api/v1/runs/99"), 404, "unknown run id 99");
  expect_error(server.ask("GET", "/api/v1/compare?a=1"), 400, "missing query parameter 'b'");
  expect_error(server.ask("GET", "/api/v1/runs/1/pair?target=ch07:nothing"), 404, "no pair");
  expect_error(server.ask("GET", "/api/v1/validity?query=no-such-check"), 404, "no validity row");
  expect_error(server.ask("GET", "/api/v1/nothing"), 404, "no such path");
  expect_error(server.ask("POST", "/api/v1/runs"), 405, "read-only resource");
  // A method no resource takes is a 405 with its reason too, not cpp-httplib's bare 400.
  expect_error(server.ask("PUT", "/api/v1/runs"), 405, "read-only resource");
  expect_error(server.ask("PATCH", "/api/v1/jobs"), 405, "not allowed on /api/v1/jobs");
  // Nothing is read from disk by path: traversal finds no file, only a 404 (or the server's 400).
  for (const auto* path : {"/api/v1/../../../../etc/passwd", "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd"}) {
    const auto answer = server.ask("GET", path);
    EXPECT_TRUE(answer.status == 404 || answer.status == 400) << path << ": " << answer.status;
    EXPECT_EQ(answer.body.dump().find("root:"), std::string::npos) << path;
  }
}

TEST_F(serve_api, is_read_only_without_a_token_and_needs_it_with_one) {
  served read_only(db(), "");
  expect_error(read_only.ask("POST", "/api/v1/jobs", R"({"targets":"labs/host"})"), 403, "read-only");
  served guarded(db(), "s3cret");
  expect_error(guarded.ask("POST", "/api/v1/jobs", R"({"targets":"labs/host"})"), 401, "Authorization");
  expect_error(guarded.ask("POST", "/api/v1/jobs", R"({"targets":"labs/host"})", "Bearer wrong"), 401, "Authorization");
  expect_error(guarded.ask("DELETE", "/api/v1/jobs/1"), 401, "Authorization");
  expect_error(guarded.ask("POST", "/api/v1/jobs", "not json", "Bearer s3cret"), 400, "targets");
  expect_error(guarded.ask("POST", "/api/v1/jobs", R"({"targets":"x","max_time_s":-1})", "Bearer s3cret"), 400, "max_time_s");
  expect_error(guarded.ask("POST", "/api/v1/jobs", R"({"targets":"x","max_time_s":0})", "Bearer s3cret"), 400, "above 0");
  const auto too_big = guarded.ask("POST", "/api/v1/jobs", std::string(100 * 1024, 'a'), "Bearer s3cret");
  EXPECT_EQ(too_big.status, 413);
  expect_error(guarded.ask("GET", "/api/v1/jobs/7"), 404, "no job 7");
}

TEST_F(serve_api, starts_a_run_follows_it_to_its_results_and_cancels_another) {
  served server(db_copy("serve_jobs"), "s3cret");
  const auto started = server.ask("POST", "/api/v1/jobs", R"({"targets":"labs/host:transpose","max_time_s":0.3})", "Bearer s3cret");
  ASSERT_EQ(started.status, 201) << started.body.dump();
  const int job = started.body["job"].get<int>();
  json status;
  for (int waited = 0; waited < 600; ++waited) {  // up to 150 s on a loaded CI machine
    status = server.ask("GET", "/api/v1/jobs/" + std::to_string(job)).body;
    if (status.value("state", "") != "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_EQ(status.value("state", ""), "done") << status.dump();
  EXPECT_EQ(status["results"]["pairs"][0]["target"], "labs/host:transpose") << status.dump();
  const auto other = server.ask("POST", "/api/v1/jobs", R"({"targets":"labs/host","max_time_s":5})", "Bearer s3cret");
  const auto cancelled = server.ask("DELETE", "/api/v1/jobs/" + std::to_string(other.body["job"].get<int>()), "", "Bearer s3cret");
  EXPECT_TRUE(cancelled.body.value("cancelled", false)) << cancelled.body.dump();
  EXPECT_EQ(cancelled.body.value("state", ""), "cancelled");
}

TEST(serve_help, says_where_it_binds_and_what_the_token_is_for) {
  const auto help = aisp::testing::run_command(aisp::testing::aisp_binary() + " serve --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("127.0.0.1"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("--token"), std::string::npos) << help.output;
}

}  // namespace
