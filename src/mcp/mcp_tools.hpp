// The MCP server's tools (issue 23): each mirrors a CLI command and answers through the results
// API; the job tools start and follow runs. A tool declares its arguments once, as the JSON Schema that tools/list shows; the
// same schema checks every call's arguments, so the two cannot drift apart.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aisp::mcp {

struct tool {
  std::string name;
  std::string title;
  std::string description;
  nlohmann::json input_schema;   // type object: properties, required, additionalProperties false
  nlohmann::json output_schema;  // what structuredContent holds: type object, properties, required
  std::function<nlohmann::json(const nlohmann::json& arguments)> answer;  // an object: structuredContent
};

class job_table;

// Adds start_run, job_status, wait_job, cancel_job and hardware_ceilings over `jobs` (job_tools.cpp).
void add_job_tools(std::vector<tool>& tools, job_table& jobs);

class tool_box {
 public:
  // `db_path`: the history database the history tools read (opened per call: new runs show up);
  // `jobs`: the runs the job tools start and follow.
  tool_box(std::string db_path, job_table& jobs);

  // tools/list's `tools`.
  [[nodiscard]] nlohmann::json listing() const;
  [[nodiscard]] bool has(const std::string& name) const;
  // A tool's input schema (an empty object for an unknown tool).
  [[nodiscard]] nlohmann::json schema_of(const std::string& name) const;
  // tools/call's result for a known tool: content and structuredContent, or isError with one line
  // when the arguments break the schema or the question names something that is not there.
  [[nodiscard]] nlohmann::json call(const std::string& name, const nlohmann::json& arguments) const;

 private:
  std::string db_path_;
  std::vector<tool> tools_;
};

// A tool's input schema: an object of these properties, no others, `required` among them.
[[nodiscard]] nlohmann::json object_schema(nlohmann::json properties, std::vector<std::string> required);
// A tool's output schema: an object with at least `required` of these properties (answers may
// grow fields: an output schema does not forbid others). A property's type may be omitted
// (null allowed).
[[nodiscard]] nlohmann::json result_schema(nlohmann::json properties, std::vector<std::string> required);
// {"type": T}, the property types result schemas use.
[[nodiscard]] nlohmann::json typed(const char* type);
// job_status's answer (start_run, wait_job and cancel_job answer it too).
[[nodiscard]] nlohmann::json job_status_schema();

// The first way `arguments` breaks `schema` (one line), or "" when it fits. Knows the subset the
// tools use: object, array, string, integer and number (with minimum), boolean, required,
// additionalProperties (false: no other properties); a property without a type takes anything.
[[nodiscard]] std::string schema_violation(const nlohmann::json& schema, const nlohmann::json& arguments);

}  // namespace aisp::mcp
