#include "profile/chrome_trace.hpp"

#include "support/demangle.hpp"
#include "support/json_file.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace aisp {
namespace {

using json = nlohmann::json;

constexpr std::int64_t phase_tid = 0;

// 1000 streams per device: CUPTI's stream ids are small per-context counters, and a readable
// tid ("2003" is device 2, stream 2) is worth the theoretical overlap past stream 998.
std::int64_t stream_tid(const timeline_activity& activity) {
  return 1000 * static_cast<std::int64_t>(activity.device) + static_cast<std::int64_t>(activity.stream) + 1;
}

double microseconds(std::uint64_t nanoseconds) { return static_cast<double>(nanoseconds) / 1e3; }

std::uint64_t earliest_start_ns(const std::vector<trace_lane>& lanes) {
  std::uint64_t earliest = std::numeric_limits<std::uint64_t>::max();
  for (const auto& lane : lanes) {
    for (const auto& activity : lane.activities) earliest = std::min(earliest, activity.start_ns);
  }
  return earliest == std::numeric_limits<std::uint64_t>::max() ? 0 : earliest;
}

json metadata_event(const char* name, std::int64_t pid, std::int64_t tid, json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

json activity_args(const timeline_activity& activity) {
  json args = json::object();
  if (activity.kind == activity_kind::phase) return args;
  args["correlation"] = activity.correlation;
  if (activity.kind == activity_kind::memcpy || activity.kind == activity_kind::memset) args["bytes"] = activity.bytes;
  if (activity.kind == activity_kind::kernel) {
    args["device_launched"] = activity.device_launched;
    args["access_policy_window"] = activity.access_policy_window;
    args["launch_type"] = activity.launch_type;
  }
  return args;
}

json activity_event(const timeline_activity& activity, std::int64_t pid, std::uint64_t origin_ns) {
  const std::string_view category = activity_kind_name(activity.kind);
  const bool kernel = activity.kind == activity_kind::kernel;
  json event = {{"name", activity.name.empty() ? std::string(category) : kernel ? readable_symbol(activity.name) : activity.name},
                {"cat", category},
                {"pid", pid},
                {"tid", activity.kind == activity_kind::phase ? phase_tid : stream_tid(activity)},
                {"ts", microseconds(activity.start_ns - origin_ns)},
                {"args", activity_args(activity)}};
  if (kernel) event["args"]["symbol"] = activity.name;
  if (activity.kind == activity_kind::event) {
    event["ph"] = "i";
    event["s"] = "t";  // thread-scoped: the mark sits on its stream's track
    return event;
  }
  event["ph"] = "X";
  // A record that ends before it starts is broken; draw it as a point and say so, not a huge bar.
  if (activity.end_ns < activity.start_ns) event["args"]["end_before_start"] = true;
  event["dur"] = microseconds(activity.end_ns >= activity.start_ns ? activity.end_ns - activity.start_ns : 0);
  return event;
}

void append_lane(json& events, const trace_lane& lane, std::int64_t pid, std::uint64_t origin_ns) {
  events.push_back(metadata_event("process_name", pid, phase_tid, {{"name", lane.process_name}}));
  events.push_back(metadata_event("process_sort_index", pid, phase_tid, {{"sort_index", pid}}));
  std::map<std::int64_t, std::string> thread_names;  // ordered, so the metadata is deterministic
  std::vector<json> timed;
  timed.reserve(lane.activities.size());
  for (const auto& activity : lane.activities) {
    if (activity.kind == activity_kind::phase) {
      thread_names.emplace(phase_tid, "phases");
    } else {
      thread_names.emplace(stream_tid(activity), fmt::format("GPU {} stream {}", activity.device, activity.stream));
    }
    timed.push_back(activity_event(activity, pid, origin_ns));
  }
  for (const auto& [tid, name] : thread_names) {
    events.push_back(metadata_event("thread_name", pid, tid, {{"name", name}}));
    events.push_back(metadata_event("thread_sort_index", pid, tid, {{"sort_index", tid}}));
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const json& a, const json& b) { return a["ts"].get<double>() < b["ts"].get<double>(); });
  for (auto& event : timed) events.push_back(std::move(event));
}

// --- the validator ---

bool is_timed_phase(const std::string& ph) { return ph == "X" || ph == "i" || ph == "B" || ph == "E"; }

void check_metadata_args(const json& event, const std::string& name, const std::string& where,
                         std::vector<std::string>& problems) {
  const json* args = event.contains("args") && event["args"].is_object() ? &event["args"] : nullptr;
  if (name == "process_name" || name == "thread_name" || name == "process_labels") {
    if (args == nullptr || !args->contains("name") || !(*args)["name"].is_string())
      problems.push_back(where + ": M event without string args.name");
  } else if (name == "process_sort_index" || name == "thread_sort_index") {
    if (args == nullptr || !args->contains("sort_index") || !(*args)["sort_index"].is_number_integer())
      problems.push_back(where + ": M event without integer args.sort_index");
  } else {
    problems.push_back(where + ": unknown metadata event name");
  }
}

void check_event(const json& event, std::size_t index, std::vector<std::string>& problems) {
  std::string where = fmt::format("traceEvents[{}]", index);
  if (!event.is_object()) {
    problems.push_back(where + ": not an object");
    return;
  }
  const bool has_name = event.contains("name") && event["name"].is_string();
  if (!has_name) problems.push_back(where + ": no string name");
  const std::string name = has_name ? event["name"].get<std::string>() : std::string();
  if (has_name) where += fmt::format(" \"{}\"", name);
  for (const char* id : {"pid", "tid"}) {
    if (!event.contains(id) || !event[id].is_number_integer()) problems.push_back(fmt::format("{}: no integer {}", where, id));
  }
  if (!event.contains("ph") || !event["ph"].is_string()) {
    problems.push_back(where + ": no string ph");
    return;
  }
  static const std::set<std::string> known_phases = {"X", "i", "M", "B", "E"};
  const std::string ph = event["ph"].get<std::string>();
  if (!known_phases.contains(ph)) {
    problems.push_back(fmt::format("{}: ph \"{}\" is not one of X, i, M, B, E", where, ph));
    return;
  }
  if (is_timed_phase(ph)) {
    if (!event.contains("ts") || !event["ts"].is_number()) {
      problems.push_back(fmt::format("{}: {} event without numeric ts", where, ph));
    } else if (event["ts"].get<double>() < 0) {
      problems.push_back(fmt::format("{}: negative ts {}", where, event["ts"].get<double>()));
    }
  }
  if (ph == "X") {
    if (!event.contains("dur") || !event["dur"].is_number()) {
      problems.push_back(where + ": X event without numeric dur");
    } else if (event["dur"].get<double>() < 0) {
      problems.push_back(fmt::format("{}: negative dur {}", where, event["dur"].get<double>()));
    }
  }
  if (ph == "M" && has_name) check_metadata_args(event, name, where, problems);
}

}  // namespace

json chrome_trace(const std::vector<trace_lane>& lanes, const json& metadata) {
  const std::uint64_t origin_ns = earliest_start_ns(lanes);
  json events = json::array();
  for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
    append_lane(events, lanes[lane], static_cast<std::int64_t>(lane) + 1, origin_ns);
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData", metadata.is_null() ? json::object() : metadata}};
}

std::vector<std::string> trace_format_problems(const json& trace) {
  std::vector<std::string> problems;
  if (!trace.is_object()) return {"trace is not a JSON object"};
  if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array()) return {"trace has no traceEvents array"};
  if (trace.contains("displayTimeUnit")) {
    const json& unit = trace["displayTimeUnit"];
    if (!unit.is_string() || (unit != "ns" && unit != "ms")) problems.emplace_back("displayTimeUnit is not \"ns\" or \"ms\"");
  }
  const json& events = trace["traceEvents"];
  for (std::size_t index = 0; index < events.size(); ++index) check_event(events[index], index, problems);
  return problems;
}

void write_chrome_trace(const std::filesystem::path& file, const json& trace) {
  try {
    write_json_file(file.string(), trace, -1);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(std::string("cannot write Chrome trace: ") + error.what());
  }
}

}  // namespace aisp
