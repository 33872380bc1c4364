// `aisp mcp` as an MCP client meets it: the binary spawned with pipes on stdin and stdout,
// answered one line at a time (a client waits for each answer), over a history made by real host
// runs. Every tool, good and bad arguments, malformed JSON, unknown methods, notifications.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host_history.hpp"
#include "profile_fixture.hpp"

extern char** environ;

namespace {

using nlohmann::json;

// One `aisp mcp` process: requests in on its stdin, answers read from its stdout; stderr (logs)
// goes to a file so that it can never be mistaken for a protocol message.
class mcp_process {
 public:
  explicit mcp_process(const std::string& db) {
    int to_child[2];
    int from_child[2];
    EXPECT_EQ(pipe(to_child), 0);
    EXPECT_EQ(pipe(from_child), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (db + ".mcp_stderr").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    for (const int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) posix_spawn_file_actions_addclose(&actions, fd);
    const std::string binary = aisp::testing::aisp_binary();
    std::vector<std::string> words{binary, "mcp", "--db", db, "--jobs-dir", db + "_jobs"};
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
  }
  ~mcp_process() {
    if (in_ >= 0) close(in_);
    if (pid_ > 0 && exit_code() < 0) kill(pid_, SIGKILL);
    close(out_);
  }
  mcp_process(const mcp_process&) = delete;
  mcp_process& operator=(const mcp_process&) = delete;

  void send(const std::string& line) {
    const std::string framed = line + "\n";
    ASSERT_EQ(write(in_, framed.data(), framed.size()), static_cast<ssize_t>(framed.size()));
  }
  // The next line on stdout, parsed; a discarded json when none came within `seconds`.
  json receive(int seconds = 20) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (true) {
      if (const auto newline = buffer_.find('\n'); newline != std::string::npos) {
        const auto line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return json::parse(line, nullptr, false);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      pollfd ready{out_, POLLIN, 0};
      if (left <= 0 || poll(&ready, 1, static_cast<int>(left)) <= 0) return json::value_t::discarded;
      char chunk[65536];
      const auto got = read(out_, chunk, sizeof chunk);
      if (got <= 0) return json::value_t::discarded;
      buffer_.append(chunk, static_cast<std::size_t>(got));
    }
  }
  json request(int id, const std::string& method, const json& params = json::object()) {
    send(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump());
    auto answer = receive();
    EXPECT_FALSE(answer.is_discarded()) << "no answer to " << method;
    if (!answer.is_discarded()) {
      EXPECT_EQ(answer["id"], id) << answer.dump();
    }
    return answer;
  }
  json call(int id, const std::string& tool, const json& arguments) {
    return request(id, "tools/call", {{"name", tool}, {"arguments", arguments}})["result"];
  }
  // Closes stdin; the exit code once the server has ended (-1 if it has not within 10 s).
  int finish() {
    close(in_);
    in_ = -1;
    for (int waited_ms = 0; waited_ms < 10000; waited_ms += 20) {
      if (const int code = exit_code(); code >= 0) return code;
      usleep(20000);
    }
    return -1;
  }
  // What stdout held after the answers read so far (only protocol messages are allowed there).
  std::string rest() {
    char chunk[65536];
    for (ssize_t got; (got = read(out_, chunk, sizeof chunk)) > 0;) buffer_.append(chunk, static_cast<std::size_t>(got));
    return buffer_;
  }

 private:
  int exit_code() {
    if (reaped_ < 0) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) != pid_) return -1;
      reaped_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return reaped_;
  }
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  int reaped_ = -1;
  std::string buffer_;
};

using mcp_server = aisp::testing::host_history_test;

const json& structured(const json& result) {
  EXPECT_FALSE(result.value("isError", true)) << result.dump();
  EXPECT_EQ(result["content"][0]["type"], "text");
  EXPECT_EQ(json::parse(result["content"][0]["text"].get<std::string>()), result["structuredContent"]);  // text mirrors structure
  return result["structuredContent"];
}

std::string tool_error(const json& result) {
  EXPECT_TRUE(result.value("isError", false)) << result.dump();
  const auto text = result["content"][0]["text"].get<std::string>();
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  return text;
}

TEST_F(mcp_server, initializes_with_the_protocol_version_tools_and_server_info) {
  mcp_process mcp(db());
  const auto init = mcp.request(1, "initialize",
                                {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()},
                                 {"clientInfo", {{"name", "aisp-test"}, {"version", "1"}}}});
  EXPECT_EQ(init["jsonrpc"], "2.0");
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-06-18");
  EXPECT_TRUE(init["result"]["capabilities"]["tools"].is_object());
  EXPECT_EQ(init["result"]["serverInfo"]["name"], "aisp");
  EXPECT_FALSE(init["result"]["serverInfo"]["version"].get<std::string>().empty());
  mcp.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");  // a notification: no answer
  EXPECT_EQ(mcp.request(2, "ping")["result"], json::object());            // so the next answer is ping's
  EXPECT_EQ(mcp.finish(), 0);
  EXPECT_EQ(mcp.rest(), "");
}

TEST_F(mcp_server, lists_every_tool_with_object_input_and_output_schemas) {
  mcp_process mcp(db());
  const auto tools = mcp.request(1, "tools/list")["result"]["tools"];
  std::set<std::string> names;
  for (const auto& t : tools) {
    names.insert(t["name"].get<std::string>());
    EXPECT_FALSE(t["description"].get<std::string>().empty()) << t["name"];
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    EXPECT_TRUE(t["inputSchema"]["properties"].is_object()) << t["name"];
    // structuredContent is described too, so that a client can check it (MCP 2025-06-18).
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t["name"];
    EXPECT_FALSE(t["outputSchema"].value("required", nlohmann::json::array()).empty()) << t["name"];
  }
  EXPECT_EQ(names, (std::set<std::string>{"list_targets", "list_runs", "show_run", "show_pair", "compare_runs", "target_history",
                                          "explain_check", "hardware_ceilings", "start_run", "job_status", "wait_job",
                                          "cancel_job", "show_profile"}));
}

TEST_F(mcp_server, every_tool_answers_with_text_and_structured_content) {
  mcp_process mcp(db());
  const auto targets = structured(mcp.call(1, "list_targets", {{"group", "labs/host"}}))["targets"];
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets[0]["backend"], "host");

  const auto runs = structured(mcp.call(2, "list_runs", {{"target", "labs/host:transpose"}, {"limit", 5}}))["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["id"], 2);

  const auto run = structured(mcp.call(3, "show_run", {{"run", 1}}));
  EXPECT_EQ(run["pairs"][0]["target"], "labs/host:transpose");
  EXPECT_FALSE(run["pairs"][0]["speedups"].empty());

  const auto pair = structured(mcp.call(4, "show_pair", {{"run", 1}, {"target", "labs/host:transpose"}, {"with_samples", true}}));
  EXPECT_GT(pair["variants"][0]["stored_samples"]["count"].get<int>(), 0);
  EXPECT_FALSE(pair["variants"][0]["samples_s"].empty());

  const auto comparison = structured(mcp.call(5, "compare_runs", {{"run_a", 1}, {"run_b", 2}}));
  EXPECT_EQ(comparison["changes"].size(), 2u);

  const auto across = structured(mcp.call(6, "target_history", {{"target", "labs/host:transpose"}}));
  EXPECT_EQ(across["runs"].size(), 2u);

  const auto rows = structured(mcp.call(7, "explain_check", {{"query", "S2"}}))["rows"];
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["code"], "S2");
  EXPECT_EQ(mcp.finish(), 0);
  EXPECT_EQ(mcp.rest(), "");
}

TEST_F(mcp_server, show_profile_judges_a_stored_profile_with_this_builds_classifier) {
  const auto dir = aisp::testing::write_profile(
      "aisp-mcp-profile", json::array({aisp::testing::profiled_variant("baseline", "fir_runtime_loop.csv"),
                                       aisp::testing::profiled_variant("optimized", "fir_unrolled.csv")}));
  mcp_process mcp(db());
  const auto answer = structured(mcp.call(1, "show_profile", {{"profile", dir}, {"target", "ch08:loop_unrolling"}}));
  ASSERT_EQ(answer["pairs"].size(), 1u);
  const auto& variants = answer["pairs"][0]["variants"];
  ASSERT_EQ(variants.size(), 2u);
  for (const auto& variant : variants) {
    ASSERT_FALSE(variant["kernels"].empty());
    EXPECT_FALSE(variant["kernels"][0]["bottleneck"]["class"].get<std::string>().empty()) << variant.dump();
  }
  EXPECT_NE(tool_error(mcp.call(2, "show_profile", {{"profile", dir + "/nothing"}})).find("no profile at"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(3, "show_profile", {{"profile", dir}, {"target", "ch07:none"}})).find("has no pair"), std::string::npos);
  EXPECT_EQ(mcp.finish(), 0);
  std::filesystem::remove_all(dir);
}

TEST_F(mcp_server, bad_arguments_are_tool_errors_of_one_line) {
  mcp_process mcp(db());
  EXPECT_NE(tool_error(mcp.call(1, "show_run", json::object())).find("missing required argument 'run'"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(2, "show_run", {{"run", "one"}})).find("'run' must be an integer"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(3, "show_run", {{"run", 0}})).find("at least 1"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(4, "show_run", {{"run", 1}, {"verbose", true}})).find("unknown argument 'verbose'"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(5, "show_run", {{"run", 99}})).find("unknown run id 99"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(6, "compare_runs", {{"run_a", 1}, {"run_b", 99}})).find("unknown run id 99"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(7, "show_pair", {{"run", 1}, {"target", "ch07:nothing"}})).find("no pair"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(8, "explain_check", {{"query", "no-such-check"}})).find("no validity row"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(9, "list_targets", {{"group", "ch99"}})).find("no targets"), std::string::npos);
  const auto arguments_not_object = mcp.request(10, "tools/call", {{"name", "list_runs"}, {"arguments", json::array()}});
  EXPECT_NE(tool_error(arguments_not_object["result"]).find("arguments must be an object"), std::string::npos);
  const auto unknown_tool = mcp.request(11, "tools/call", {{"name", "launch_rockets"}, {"arguments", json::object()}});
  EXPECT_EQ(unknown_tool["error"]["code"], -32602) << unknown_tool.dump();
  EXPECT_EQ(mcp.request(12, "ping")["result"], json::object());  // still serving
  EXPECT_EQ(mcp.finish(), 0);
}

TEST_F(mcp_server, malformed_json_unknown_methods_and_invalid_requests_get_json_rpc_errors) {
  mcp_process mcp(db());
  for (const std::string garbage : {"{not json", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", "\x01\x02", "[1,2"}) {
    mcp.send(garbage);
    const auto answer = mcp.receive();
    ASSERT_FALSE(answer.is_discarded()) << "no answer to " << garbage;
    EXPECT_EQ(answer["error"]["code"], -32700) << answer.dump();
    EXPECT_TRUE(answer["id"].is_null());
  }
  EXPECT_EQ(mcp.request(1, "resources/list")["error"]["code"], -32601);
  mcp.send(R"(["batch","is","not","supported"])");
  EXPECT_EQ(mcp.receive()["error"]["code"], -32600);
  mcp.send(R"({"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"})");
  EXPECT_EQ(mcp.receive()["error"]["code"], -32600);
  for (const std::string wrong : {R"({"jsonrpc":"1.0","id":2,"method":"ping"})", R"({"jsonrpc":2,"id":2,"method":"ping"})",
                                  R"({"id":2,"method":"ping"})", R"({"jsonrpc":"2.0","id":2,"method":7})", "42", "null"}) {
    mcp.send(wrong);
    EXPECT_EQ(mcp.receive()["error"]["code"], -32600) << wrong;
  }
  mcp.send("");                                                        // blank lines are skipped
  mcp.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled"})");  // unknown to us, and no answer
  EXPECT_EQ(mcp.request(3, "tools/call", json::array())["error"]["code"], -32602);
  EXPECT_EQ(mcp.request(4, "ping")["result"], json::object());
  EXPECT_EQ(mcp.finish(), 0);
  EXPECT_EQ(mcp.rest(), "");
}

TEST_F(mcp_server, a_missing_database_is_a_tool_error_not_a_crash) {
  const auto missing = aisp::testing::two_host_runs().dir + "/absent.db";
  mcp_process mcp(missing);
  EXPECT_NE(tool_error(mcp.call(1, "list_runs", json::object())).find("no history database"), std::string::npos);
  structured(mcp.call(2, "explain_check", {{"query", "T1"}}));  // the tools that need no history still answer
  EXPECT_EQ(mcp.finish(), 0);
}

TEST(mcp_help, teaches_how_to_register_the_server_with_a_client) {
  const auto help = aisp::testing::run_command(aisp::testing::aisp_binary() + " mcp --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_NE(help.output.find("\"mcpServers\""), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("\"args\": [\"mcp\", \"--db\""), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("start_run"), std::string::npos) << help.output;
}

// A run started by a client: a job whose progress comes as notifications while wait_job waits,
// whose answer carries the results, and which lands in the history like a CLI run.
TEST_F(mcp_server, runs_a_host_pair_as_a_job_with_progress_and_results) {
  mcp_process mcp(db_copy("mcp_jobs"));
  const auto started = structured(mcp.call(1, "start_run", {{"targets", "labs/host:transpose"}, {"max_time_s", 0.3}}));
  ASSERT_EQ(started["job"], 1);
  EXPECT_EQ(started["state"], "running");
  mcp.send(json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"},
                {"params", {{"name", "wait_job"}, {"arguments", {{"job", 1}, {"timeout_s", 120}}}, {"_meta", {{"progressToken", "run-1"}}}}}}
               .dump());
  std::vector<json> progress;
  json answer;
  for (int lines = 0; lines < 20 && answer.is_null(); ++lines) {
    auto line = mcp.receive(150);  // a loaded 2-core machine took 24 s for this pair
    ASSERT_FALSE(line.is_discarded()) << "no answer to wait_job";
    if (line.value("method", "") == "notifications/progress") progress.push_back(line["params"]);
    if (line.contains("id")) answer = line;
  }
  ASSERT_FALSE(progress.empty()) << "no notifications/progress before the answer";
  EXPECT_EQ(progress.front()["progressToken"], "run-1");
  EXPECT_EQ(progress.back()["total"], 1);
  const auto status = structured(answer["result"]);
  EXPECT_EQ(status["state"], "done") << status.dump();
  EXPECT_EQ(status["results"]["pairs"][0]["target"], "labs/host:transpose") << status.dump();
  EXPECT_FALSE(status["results"]["pairs"][0]["speedups"].empty());
  // In the history, beside the two runs the fixture made.
  EXPECT_EQ(structured(mcp.call(3, "list_runs", {{"target", "labs/host:transpose"}}))["runs"].size(), 3u);
  EXPECT_EQ(mcp.finish(), 0);
}

TEST_F(mcp_server, cancels_a_running_job_and_refuses_bad_job_calls) {
  mcp_process mcp(db_copy("mcp_cancel"));
  const auto started = structured(mcp.call(1, "start_run", {{"targets", "labs/host"}, {"max_time_s", 5}}));
  const auto cancelled = structured(mcp.call(2, "cancel_job", {{"job", started["job"]}}));
  EXPECT_TRUE(cancelled["cancelled"].get<bool>());
  EXPECT_EQ(cancelled["state"], "cancelled");
  // Waiting on an ended job answers at once.
  const auto waited = structured(mcp.call(3, "wait_job", {{"job", started["job"]}, {"timeout_s", 30}}));
  EXPECT_EQ(waited["state"], "cancelled");
  EXPECT_NE(tool_error(mcp.call(4, "job_status", {{"job", 9}})).find("no job 9"), std::string::npos);
  EXPECT_NE(tool_error(mcp.call(5, "start_run", {{"targets", 7}})).find("must be a string"), std::string::npos);
  // An unknown target is the tool's error, not a job that fails later.
  EXPECT_NE(tool_error(mcp.call(6, "start_run", {{"targets", "labs/host:transpose, ch99:nothing"}})).find("ch99"), std::string::npos);
  EXPECT_EQ(mcp.finish(), 0);
}

}  // namespace
