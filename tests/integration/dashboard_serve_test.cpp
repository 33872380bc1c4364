// `aisp serve`'s dashboard over real HTTP (issue 23): the embedded pages and uPlot with their
// Content-Types; static paths that are not embedded files, traversal attempts included, as 404s;
// the routes the pages added (roofline, expectation bands, trace); and a job's progress as
// server-sent events to its end.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "served_process.hpp"

namespace {

using nlohmann::json;

using aisp::testing::expect_error;
using aisp::testing::served;

using dashboard_serve = aisp::testing::host_history_test;

TEST_F(dashboard_serve, serves_the_embedded_pages_and_uplot_with_their_content_types) {
  served server(db(), "");
  const auto index = server.ask("GET", "/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(index.header("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(index.header("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  EXPECT_NE(index.raw_body.find("<main id=\"page\""), std::string::npos) << index.raw_body.substr(0, 300);
  EXPECT_EQ(server.ask("GET", "/index.html").raw_body, index.raw_body);
  const auto app = server.ask("GET", "/js/app.js");
  EXPECT_EQ(app.status, 200);
  EXPECT_EQ(app.header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_NE(app.raw_body.find("import"), std::string::npos);
  EXPECT_EQ(server.ask("GET", "/css/dashboard.css").header("Content-Type"), "text/css; charset=utf-8");
  const auto uplot = server.ask("GET", "/vendor/uPlot.iife.min.js");
  EXPECT_EQ(uplot.status, 200);
  EXPECT_NE(uplot.raw_body.find("uPlot"), std::string::npos);
  EXPECT_GT(uplot.raw_body.size(), 10'000u);
  EXPECT_EQ(server.ask("GET", "/vendor/uPlot.min.css").header("Content-Type"), "text/css; charset=utf-8");
  // Every module the router imports is embedded.
  for (const auto* page : {"runs", "run", "pair", "compare", "history", "roofline", "ceilings", "jobs"}) {
    const auto module = server.ask("GET", std::string("/js/pages/") + page + ".js");
    EXPECT_EQ(module.status, 200) << page;
    EXPECT_NE(app.raw_body.find(std::string("./pages/") + page + ".js"), std::string::npos) << page;
  }
}

TEST_F(dashboard_serve, static_paths_that_are_not_embedded_files_are_404_traversal_included) {
  served server(db(), "");
  for (const auto* path : {"/nothing.html", "/js/", "/js", "/package.json", "/vendor/uPlot.d.ts", "/js/../index.html",
                           "/../../../../etc/passwd", "/js/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                           "/vendor/..%2f..%2f..%2fetc%2fpasswd", "/css/%2e%2e/%2e%2e/CMakeLists.txt", "/index.html%00.js",
                           "//etc/passwd", "/./index.html", "/INDEX.HTML"}) {
    const auto answer = server.ask("GET", path);
    EXPECT_TRUE(answer.status == 404 || answer.status == 400) << path << ": " << answer.status;
    EXPECT_EQ(answer.raw_body.find("root:"), std::string::npos) << path;
    EXPECT_EQ(answer.raw_body.find("cmake_minimum_required"), std::string::npos) << path;
    if (answer.status == 404) {
      EXPECT_NE(answer.body.value("error", "").find("no such page"), std::string::npos) << path;
    }
  }
  // A name a web page could point at 127.0.0.1 (DNS rebinding) gets nothing.
  expect_error(server.ask("GET", "/api/v1/runs", "", "", "evil.example:8321"), 403, "Host header");
  EXPECT_EQ(server.ask("GET", "/", "", "", "evil.example").raw_body.find("<main"), std::string::npos);
  EXPECT_EQ(server.ask("GET", "/api/v1/runs", "", "", "localhost:" + std::to_string(server.port())).status, 200);
  // Static files take no writes, and the API's own paths stay JSON.
  EXPECT_EQ(server.ask("POST", "/index.html").status, 404);
  EXPECT_EQ(server.ask("GET", "/api/v1").header("Content-Type"), "application/json");
}

TEST_F(dashboard_serve, answers_a_runs_roofline_and_a_pairs_missing_trace) {
  served server(db(), "");
  const auto roofline = server.ask("GET", "/api/v1/runs/1/roofline");
  ASSERT_EQ(roofline.status, 200) << roofline.body.dump();
  const auto& pair = roofline.body["pairs"][0];
  EXPECT_EQ(pair["target"], "labs/host:transpose");
  EXPECT_TRUE(pair["roofline"].contains("bandwidth_ceiling_bytes_per_s")) << pair.dump();
  EXPECT_GT(pair["variants"][0].value("achieved_bytes_per_s", 0.0), 0.0) << pair.dump();
  EXPECT_EQ(server.ask("GET", "/api/v1/runs/1/pair?target=labs/host:transpose").body["trace"], false);
  expect_error(server.ask("GET", "/api/v1/runs/1/trace?target=labs/host:transpose"), 404, "stored no trace");
  expect_error(server.ask("GET", "/api/v1/runs/9/roofline"), 404, "unknown run id 9");
}

TEST_F(dashboard_serve, the_history_carries_the_expectation_band_of_the_card_it_ran_on) {
  const auto dir = aisp::testing::two_host_runs().dir + "/expectations";
  const auto update = aisp::testing::run_command(aisp::testing::aisp_binary() + " bench expectations --hardware host --file " + dir +
                                                 "/host.json --run " + aisp::testing::two_host_runs().dir + "/run1 --update --min-speedup 1");
  ASSERT_EQ(update.exit_code, 0) << update.output;
  ASSERT_NE(update.output.find("1 entries"), std::string::npos) << update.output;
  served without(db(), "");
  EXPECT_EQ(without.ask("GET", "/api/v1/history?target=labs/host:transpose").body["expectations"], json::object());
  served with(db(), "", "--expectations-dir " + dir);
  const auto history = with.ask("GET", "/api/v1/history?target=labs/host:transpose").body;
  const auto& expected = history["expectations"]["host"]["optimized"];
  ASSERT_TRUE(expected.is_object()) << history.dump().substr(0, 400);
  // The band is the expected CI widened by 3% each side (expectation_tolerance).
  EXPECT_DOUBLE_EQ(expected["band"]["low"].get<double>(), expected["speedup"]["low"].get<double>() * 0.97);
  EXPECT_DOUBLE_EQ(expected["band"]["high"].get<double>(), expected["speedup"]["high"].get<double>() * 1.03);
  // A malformed file of the server's costs the bands, not the history, and says why.
  std::ofstream(dir + "/host.json") << "[1, 2";
  const auto broken = with.ask("GET", "/api/v1/history?target=labs/host:transpose");
  EXPECT_EQ(broken.status, 200) << broken.body.dump().substr(0, 400);
  EXPECT_EQ(broken.body["expectations"], json::object());
  EXPECT_NE(broken.body.value("expectations_error", "").find("malformed"), std::string::npos) << broken.body.dump().substr(0, 400);
  EXPECT_FALSE(broken.body["runs"].empty()) << broken.body.dump().substr(0, 400);
}

TEST_F(dashboard_serve, streams_a_jobs_progress_as_server_sent_events_until_it_ends) {
  served server(db_copy("dashboard_events"), "s3cret");
  expect_error(server.ask("GET", "/api/v1/jobs/3/events"), 404, "no job 3");
  const auto started = server.ask("POST", "/api/v1/jobs", R"({"targets":"labs/host:transpose","max_time_s":0.3})", "Bearer s3cret");
  ASSERT_EQ(started.status, 201) << started.body.dump();
  // The stream closes when the job ends, so one read to the end holds every event.
  const auto stream = server.ask("GET", "/api/v1/jobs/" + std::to_string(started.body["job"].get<int>()) + "/events");
  EXPECT_EQ(stream.status, 200);
  EXPECT_EQ(stream.header("Content-Type"), "text/event-stream");
  const auto& text = stream.raw_body;
  EXPECT_NE(text.find("event: progress\ndata: {\"pairs_done\":0"), std::string::npos) << text.substr(0, 500);
  EXPECT_NE(text.find("event: line\ndata: {\"text\":\"[1/1]"), std::string::npos) << text.substr(0, 2000);
  const auto end = text.find("event: end\ndata: ");
  ASSERT_NE(end, std::string::npos) << text.substr(0, 2000);
  const auto status = json::parse(text.substr(end + 17, text.find('\n', end + 17) - end - 17), nullptr, false);
  EXPECT_EQ(status.value("state", ""), "done") << status.dump();
  EXPECT_EQ(status["results"]["pairs"][0]["target"], "labs/host:transpose");
  // A client that reconnects after the first line (Last-Event-ID: 1) is sent only the lines after it.
  const auto resumed = server.ask("GET", "/api/v1/jobs/" + std::to_string(started.body["job"].get<int>()) + "/events", "", "",
                                  "127.0.0.1", "Last-Event-ID: 1\r\n");
  EXPECT_EQ(resumed.raw_body.find("id: 1\n"), std::string::npos) << resumed.raw_body.substr(0, 500);
  EXPECT_NE(resumed.raw_body.find("id: "), std::string::npos) << resumed.raw_body.substr(0, 500);
  EXPECT_NE(resumed.raw_body.find("event: end"), std::string::npos) << resumed.raw_body.substr(0, 500);
  EXPECT_NE(text.find("id: 1\nevent: line"), std::string::npos);
  // The server lists its jobs, so a page opened later finds this one.
  const auto jobs = server.ask("GET", "/api/v1/jobs").body["jobs"];
  ASSERT_EQ(jobs.size(), 1u) << jobs.dump();
  EXPECT_EQ(jobs[0]["job"], started.body["job"]);
  EXPECT_EQ(jobs[0]["state"], "done");
  // The job's run is in the history like a CLI run: a third run beside the two copied.
  EXPECT_EQ(server.ask("GET", "/api/v1/runs").body["runs"].size(), 3u);
}

}  // namespace
