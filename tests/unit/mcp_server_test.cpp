// The MCP server's JSON-RPC layer and argument checks (src/mcp/), one line at a time, without a
// process or a history: the answers a client gets to each shape of message.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "mcp/mcp_server.hpp"
#include "mcp/mcp_tools.hpp"
#include "mcp/run_jobs.hpp"

namespace {

using nlohmann::json;

json answer(aisp::mcp::server& server, const std::string& line) {
  const auto reply = server.answer_line(line);
  EXPECT_TRUE(reply.has_value()) << "no answer to " << line;
  return reply ? json::parse(*reply) : json();
}

TEST(mcp_server_lines, initialize_answers_the_version_it_speaks_whatever_was_asked) {
  aisp::mcp::server server("/nonexistent/aisp.db");
  const auto reply = answer(server, R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2024-11-05"}})");
  EXPECT_EQ(reply["id"], "a");
  EXPECT_EQ(reply["result"]["protocolVersion"], "2025-06-18");
  EXPECT_TRUE(reply["result"]["capabilities"].contains("tools"));
}

TEST(mcp_server_lines, notifications_responses_and_blank_lines_get_no_answer) {
  aisp::mcp::server server("/nonexistent/aisp.db");
  EXPECT_FALSE(server.answer_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(server.answer_line(R"({"jsonrpc":"2.0","id":5,"result":{}})"));
  EXPECT_FALSE(server.answer_line("   \r"));
}

TEST(mcp_server_lines, each_broken_message_gets_its_json_rpc_error_code) {
  aisp::mcp::server server("/nonexistent/aisp.db");
  EXPECT_EQ(answer(server, "{\"jsonrpc\":")["error"]["code"], -32700);
  EXPECT_EQ(answer(server, "[]")["error"]["code"], -32600);
  EXPECT_EQ(answer(server, R"({"jsonrpc":"2.0","id":true,"method":"ping"})")["error"]["code"], -32600);
  const auto neither = answer(server, R"({"jsonrpc":"2.0","id":7})");  // no method, no result, no error
  EXPECT_EQ(neither["error"]["code"], -32600);
  EXPECT_EQ(neither["id"], 7);
  EXPECT_EQ(answer(server, R"({"jsonrpc":"2.0","id":1,"method":"prompts/list"})")["error"]["code"], -32601);
  EXPECT_EQ(answer(server, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})")["error"]["code"], -32602);
  EXPECT_EQ(answer(server, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})")["error"]["code"], -32602);
}

TEST(mcp_server_lines, a_tool_on_a_missing_history_is_a_tool_error) {
  aisp::mcp::server server("/nonexistent/aisp.db");
  const auto reply = answer(server, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_runs"}})");
  EXPECT_TRUE(reply["result"]["isError"].get<bool>());
  EXPECT_NE(reply["result"]["content"][0]["text"].get<std::string>().find("no history database at /nonexistent/aisp.db"),
            std::string::npos);
}

TEST(mcp_schema, names_the_first_way_arguments_break_a_schema) {
  const json schema = {{"type", "object"},
                       {"properties", {{"run", {{"type", "integer"}, {"minimum", 1}}}, {"target", {{"type", "string"}}}}},
                       {"required", {"run"}},
                       {"additionalProperties", false}};
  EXPECT_EQ(aisp::mcp::schema_violation(schema, {{"run", 3}, {"target", "ch07:transpose"}}), "");
  EXPECT_EQ(aisp::mcp::schema_violation(schema, json::array()), "arguments must be an object");
  EXPECT_EQ(aisp::mcp::schema_violation(schema, {{"target", "x"}}), "missing required argument 'run'");
  EXPECT_EQ(aisp::mcp::schema_violation(schema, {{"run", 1}, {"gpu", "h100"}}), "unknown argument 'gpu' (this tool takes: run, target)");
  EXPECT_EQ(aisp::mcp::schema_violation(schema, {{"run", 1.5}}), "argument 'run' must be an integer, not 1.5");
  EXPECT_EQ(aisp::mcp::schema_violation(schema, {{"run", 0}}), "argument 'run' must be at least 1, not 0");
  EXPECT_EQ(aisp::mcp::schema_violation(schema, {{"run", 2}, {"target", 7}}), "argument 'target' must be a string, not 7");
}

TEST(mcp_tool_box, every_tool_declares_object_schemas_and_refuses_unknown_arguments) {
  aisp::mcp::job_table jobs("/nonexistent/aisp.db", "/nonexistent/jobs");
  const aisp::mcp::tool_box tools("/nonexistent/aisp.db", jobs);
  const auto listing = tools.listing();
  EXPECT_EQ(listing.size(), 13u);
  for (const auto& t : listing) {
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false) << t["name"];
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t["name"];
    EXPECT_TRUE(tools.has(t["name"].get<std::string>()));
  }
}

// The job tools refuse what they cannot start or find, in one line, before anything runs.
TEST(mcp_tool_box, the_job_tools_refuse_bad_requests_in_one_line) {
  aisp::mcp::job_table jobs("/nonexistent/aisp.db", "/nonexistent/jobs");
  const aisp::mcp::tool_box tools("/nonexistent/aisp.db", jobs);
  const auto unknown_job = tools.call("job_status", {{"job", 42}});
  EXPECT_TRUE(unknown_job["isError"].get<bool>());
  EXPECT_NE(unknown_job.dump().find("no job 42"), std::string::npos) << unknown_job.dump();
  const auto no_targets = tools.call("start_run", {{"targets", ""}});
  EXPECT_TRUE(no_targets["isError"].get<bool>());
  const auto bad_time = tools.call("start_run", {{"targets", "labs/host"}, {"max_time_s", -1}});
  EXPECT_NE(bad_time.dump().find("must be more than 0"), std::string::npos) << bad_time.dump();
  // 0 is no time limit a run can sample in (the CLI refuses --max-time 0): refused, not the default.
  const auto zero_time = tools.call("start_run", {{"targets", "labs/host"}, {"max_time_s", 0}});
  EXPECT_TRUE(zero_time["isError"].get<bool>());
  EXPECT_NE(zero_time.dump().find("must be more than 0, not 0"), std::string::npos) << zero_time.dump();
  const auto missing_file = tools.call("start_run", {{"targets", "mine"}, {"python", "/nonexistent/pairs.py"}});
  EXPECT_NE(missing_file.dump().find("no pair file"), std::string::npos) << missing_file.dump();
}

// The run a request becomes: the history and artifacts it names, its options only when asked.
TEST(mcp_run_jobs, a_request_becomes_a_bench_command_line) {
  const auto run = aisp::mcp::run_arguments({"labs/host", false, 0.5, ""}, "db.sqlite", "out");
  EXPECT_EQ(run, (std::vector<std::string>{"bench", "run", "--targets", "labs/host", "--history", "db.sqlite", "--artifacts-dir",
                                           "out", "--max-time", "0.5"}));
  const auto verify = aisp::mcp::run_arguments({"mine", true, 2, "p.py"}, "db", "out");
  EXPECT_EQ(verify, (std::vector<std::string>{"bench", "verify", "--targets", "mine", "--history", "db", "--artifacts-dir", "out",
                                              "--python", "p.py"}));
}

}  // namespace
