#include "mcp/mcp_tools.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "api/results_api.hpp"
#include "support/readable_error.hpp"

namespace aisp::mcp {
namespace {

using nlohmann::json;

json text_property(const std::string& description) { return {{"type", "string"}, {"description", description}}; }
// Run ids and limits: SQLite's row ids start at 1.
json positive_property(const std::string& description) { return {{"type", "integer"}, {"minimum", 1}, {"description", description}}; }

// A message on one line: errors raised deep in aisp carry source locations and may wrap.
std::string one_line(const char* what) {
  auto text = without_source_locations(what);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

json tool_result(const json& structured) {
  return {{"content", json::array({{{"type", "text"}, {"text", structured.dump()}}})}, {"structuredContent", structured},
          {"isError", false}};
}

json tool_error(const std::string& message) {
  return {{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}};
}

std::string names_of(const json& properties) {
  std::string names;
  for (const auto& item : properties.items()) names += (names.empty() ? "" : ", ") + item.key();
  return names.empty() ? "none" : names;
}

bool has_type(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "boolean") return value.is_boolean();
  if (type == "number") return value.is_number();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  return false;
}

}  // namespace

json object_schema(json properties, std::vector<std::string> required) {
  json schema = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

json result_schema(json properties, std::vector<std::string> required) {
  json schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

json typed(const char* type) { return {{"type", type}}; }

json job_status_schema() {
  return result_schema({{"job", typed("integer")}, {"state", typed("string")}, {"pairs_done", typed("integer")},
                        {"pairs_total", typed("integer")}, {"artifacts_dir", typed("string")}, {"last_lines", typed("array")},
                        {"exit_code", typed("integer")}, {"results", typed("object")}, {"cancelled", typed("boolean")}},
                       {"job", "state", "pairs_done", "pairs_total", "last_lines"});
}

std::string schema_violation(const json& schema, const json& arguments) {
  if (!arguments.is_object()) return "arguments must be an object";
  for (const auto& name : schema.value("required", json::array())) {
    if (!arguments.contains(name.get<std::string>())) return "missing required argument '" + name.get<std::string>() + "'";
  }
  const auto& properties = schema["properties"];
  for (const auto& [name, value] : arguments.items()) {
    if (!properties.contains(name)) {
      if (!schema.value("additionalProperties", true)) return "unknown argument '" + name + "' (this tool takes: " + names_of(properties) + ")";
      continue;
    }
    if (!properties[name].contains("type")) continue;
    const auto type = properties[name]["type"].get<std::string>();
    if (!has_type(value, type))
      return "argument '" + name + "' must be " + (type == "integer" ? "an " : "a ") + type + ", not " + value.dump();
    const auto minimum = properties[name].value("minimum", json(nullptr));
    if (!minimum.is_null() && value.get<double>() < minimum.get<double>())
      return "argument '" + name + "' must be at least " + minimum.dump() + ", not " + value.dump();
    const auto above = properties[name].value("exclusiveMinimum", json(nullptr));
    if (!above.is_null() && value.get<double>() <= above.get<double>())
      return "argument '" + name + "' must be more than " + above.dump() + ", not " + value.dump();
  }
  return "";
}

tool_box::tool_box(std::string db_path, job_table& jobs) : db_path_(std::move(db_path)) {
  const auto& db = db_path_;
  tools_.push_back({"list_targets", "List targets", "The registered pairs (`aisp bench list-targets`): target, backend, variants, summary, tags.",
                    object_schema({{"group", text_property("only this chapter or lab, e.g. ch07 or labs/host")}}, {}),
                    result_schema({{"targets", typed("array")}}, {"targets"}),
                    [](const json& a) { return json{{"targets", api::list_targets(a.value("group", ""))}}; }});
  tools_.push_back(
      {"list_runs", "List recorded runs",
       "The runs in the history database, newest first (`aisp bench history`): id, start, state, GPU, hardware key, pairs.",
       object_schema({{"target", text_property("only runs holding this target, e.g. labs/host:transpose")},
                      {"gpu", text_property("only runs on this card: part of its name or the hardware key (h100)")},
                      {"since", text_property("ISO 8601 date or prefix: runs started on or after it (2026-11-01)")},
                      {"until", text_property("ISO 8601 date or prefix: runs started on or before it, that day included")},
                      {"limit", positive_property("at most this many runs (default 50)")}},
                     {}),
       result_schema({{"runs", typed("array")}}, {"runs"}),
       [db](const json& a) {
         auto history = api::open_history(db);
         const api::run_filter filter{a.value("target", ""), a.value("gpu", ""), a.value("since", ""), a.value("until", ""),
                                      a.value("limit", 50)};
         return json{{"runs", api::list_runs(history, filter)}};
       }});
  tools_.push_back({"show_run", "Show a run",
                    "One run's pairs: status, verdicts, speedups with 95% CIs, medians, SOL %, and the failed checks with their codes.",
                    object_schema({{"run", positive_property("the run id (list_runs)")}}, {"run"}),
                    result_schema({{"id", typed("integer")}, {"state", typed("string")}, {"started_at", typed("string")},
                                   {"command", typed("string")}, {"artifacts_dir", typed("string")}, {"git", json::object()},
                                   {"hardware", typed("string")}, {"gpu", typed("string")}, {"config", json::object()},
                                   {"pairs", typed("array")}},
                                  {"id", "state", "pairs"}),
                    [db](const json& a) {
                      auto history = api::open_history(db);
                      return api::show_run(history, a["run"].get<std::int64_t>());
                    }});
  tools_.push_back({"show_pair", "Show one pair of a run",
                    "One pair's full stored result: per variant the statistics, stored samples summary, device audit, SOL; "
                    "every check with its codes; the roofline.",
                    object_schema({{"run", positive_property("the run id (list_runs)")},
                                   {"target", text_property("the pair, e.g. labs/host:transpose")},
                                   {"with_samples", {{"type", "boolean"}, {"description", "also list every stored sample (seconds)"}}}},
                                  {"run", "target"}),
                    result_schema({{"run", typed("integer")}, {"target", typed("string")}, {"status", typed("string")},
                                   {"variants", typed("array")}, {"checks", typed("array")}, {"failed_checks", typed("array")}},
                                  {"run", "target", "variants", "failed_checks"}),
                    [db](const json& a) {
                      auto history = api::open_history(db);
                      return api::show_pair(history, a["run"].get<std::int64_t>(), a["target"].get<std::string>(),
                                            a.value("with_samples", false));
                    }});
  tools_.push_back({"compare_runs", "Compare two runs",
                    "Per target and variant: run B's median time over run A's with a bootstrap CI on the stored samples, and "
                    "faster/slower/unchanged; warnings when the card, driver, mode or sizes differ (`aisp bench compare-runs`).",
                    object_schema({{"run_a", positive_property("the earlier run id")}, {"run_b", positive_property("the later run id")}},
                                  {"run_a", "run_b"}),
                    result_schema({{"run_a", typed("integer")}, {"run_b", typed("integer")}, {"warnings", typed("array")},
                                   {"changes", typed("array")}},
                                  {"run_a", "run_b", "warnings", "changes"}),
                    [db](const json& a) {
                      auto history = api::open_history(db);
                      return api::compare(history, a["run_a"].get<std::int64_t>(), a["run_b"].get<std::int64_t>());
                    }});
  tools_.push_back({"target_history", "A target's history",
                    "One target across runs, newest first: status, medians, speedups with CIs, each marked regressed when its "
                    "expectation says so, and failed checks (`aisp bench history --target`).",
                    object_schema({{"target", text_property("the pair, e.g. labs/host:transpose")},
                                   {"limit", positive_property("at most this many runs (default 50)")}},
                                  {"target"}),
                    result_schema({{"target", typed("string")}, {"runs", typed("array")}}, {"target", "runs"}),
                    [db](const json& a) {
                      auto history = api::open_history(db);
                      return api::target_history(history, a["target"].get<std::string>(), a.value("limit", 50));
                    }});
  tools_.push_back({"explain_check", "Explain a check",
                    "What a failed check means (`aisp bench explain`): its validity-matrix rows: how a benchmark lies, what aisp "
                    "does about it, the planted cheat that proves it.",
                    object_schema({{"query", text_property("a code (T1, S2) or a check name (outliers, escaped-kernel)")}}, {"query"}),
                    result_schema({{"rows", typed("array")}}, {"rows"}),
                    [](const json& a) { return json{{"rows", api::validity_rows(a["query"].get<std::string>())}}; }});
  tools_.push_back({"show_profile", "Show a profile",
                    "A stored `aisp profile ncu` run: per pair, variant and kernel the Nsight Compute key metrics (duration, "
                    "memory and SM throughput, occupancy, stalls) and the bottleneck class with its evidence and the lab pairs "
                    "that teach the remedy, judged by this build's classifier (`aisp profile classify`).",
                    object_schema({{"profile", text_property("the profile.json of `aisp profile ncu`, or its folder")},
                                   {"target", text_property("only this pair, e.g. ch08:loop_unrolling")}},
                                  {"profile"}),
                    result_schema({{"profile", typed("string")}, {"pairs", typed("array")}}, {"profile", "pairs"}),
                    [](const json& a) { return api::profile_report(a["profile"].get<std::string>(), a.value("target", "")); }});
  add_job_tools(tools_, jobs);
}

json tool_box::listing() const {
  json tools = json::array();
  for (const auto& t : tools_)
    tools.push_back({{"name", t.name}, {"title", t.title}, {"description", t.description}, {"inputSchema", t.input_schema},
                     {"outputSchema", t.output_schema}});
  return tools;
}

bool tool_box::has(const std::string& name) const {
  return std::any_of(tools_.begin(), tools_.end(), [&](const tool& t) { return t.name == name; });
}

json tool_box::schema_of(const std::string& name) const {
  const auto found = std::find_if(tools_.begin(), tools_.end(), [&](const tool& t) { return t.name == name; });
  return found == tools_.end() ? json::object() : found->input_schema;
}

json tool_box::call(const std::string& name, const json& arguments) const {
  const auto found = std::find_if(tools_.begin(), tools_.end(), [&](const tool& t) { return t.name == name; });
  if (found == tools_.end()) return tool_error("unknown tool '" + name + "'");
  if (const auto why = schema_violation(found->input_schema, arguments); !why.empty()) return tool_error(name + ": " + why);
  try {
    const json answer = found->answer(arguments);
    // A client checks structuredContent against outputSchema: an answer that breaks it is a bug
    // here, reported as one, not handed on.
    if (const auto why = schema_violation(found->output_schema, answer); !why.empty())
      return tool_error(name + ": internal error: the answer breaks the tool's output schema (" + why + ")");
    return tool_result(answer);
  } catch (const std::exception& error) {
    return tool_error(name + ": " + one_line(error.what()));
  }
}

}  // namespace aisp::mcp
