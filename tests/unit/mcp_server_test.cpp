// The MCP server's JSON-RPC layer and argument checks (src/mcp/), one line at a time, without a
// process or a history: the answers a client gets to each shape of message.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "mcp/mcp_server.hpp"
#include "mcp/mcp_tools.hpp"

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

TEST(mcp_tool_box, every_tool_declares_an_object_schema_that_refuses_unknown_arguments) {
  const aisp::mcp::tool_box tools("/nonexistent/aisp.db");
  const auto listing = tools.listing();
  EXPECT_EQ(listing.size(), 7u);
  for (const auto& t : listing) {
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false) << t["name"];
    EXPECT_TRUE(tools.has(t["name"].get<std::string>()));
  }
}

}  // namespace
