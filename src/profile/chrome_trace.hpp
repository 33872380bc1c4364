// A run's timelines as a Chrome/Perfetto trace (the Trace Event Format JSON object), so the
// baseline and the optimized variant can be laid side by side in ui.perfetto.dev or
// chrome://tracing: one process per variant, one thread per GPU stream, one for the phases.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/timeline.hpp"

namespace aisp {

// One variant's timeline (baseline, optimized, baseline_twin...): a process in the trace.
struct trace_lane {
  std::string process_name;
  std::vector<timeline_activity> activities;
};

// {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": metadata}. Lane i is pid i+1.
// Phases go on tid 0 ("phases"); device work on tid 1000*device + stream + 1. Every ts is in
// microseconds from the earliest start across all lanes, so the lanes share one time origin.
[[nodiscard]] nlohmann::json chrome_trace(const std::vector<trace_lane>& lanes, const nlohmann::json& metadata);

// What, in `trace`, breaks the subset of the Trace Event Format that chrome_trace emits: one
// message per problem, empty when the trace is valid.
[[nodiscard]] std::vector<std::string> trace_format_problems(const nlohmann::json& trace);

// Writes atomically (temporary file beside it, then rename): a crash never leaves half a trace.
// Throws std::runtime_error with a one-line message on failure.
void write_chrome_trace(const std::filesystem::path& file, const nlohmann::json& trace);

}  // namespace aisp
