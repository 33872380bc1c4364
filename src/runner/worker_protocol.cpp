#include "runner/worker_protocol.hpp"

#include "aisp/check.hpp"
#include "aisp/run_context.hpp"

namespace aisp::protocol {

nlohmann::json workload_to_json(const workload& work) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : work.params) params[name] = value;
  return {{"kind", workload_kind_name(work.kind)}, {"params", params}};
}

workload workload_from_json(const nlohmann::json& j) {
  workload work;
  const auto kind = j.at("kind").get<std::string>();
  if (kind == "benchmark") work.kind = workload_kind::benchmark;
  else if (kind == "validation") work.kind = workload_kind::validation;
  else if (kind == "held_out") work.kind = workload_kind::held_out;
  else AISP_EXPECTS(false, "unknown workload kind '" + kind + "'");
  for (const auto& [name, value] : j.at("params").items()) work.params[name] = value.get<std::int64_t>();
  return work;
}

nlohmann::json sample_to_json(const sample_record& record) {
  return {{"t", record.duration_s}, {"wall", record.host_wall_s}, {"mhz", record.sm_clock_mhz},
          {"calls", record.calls}, {"cost", record.cost_s}, {"gated", record.gated}, {"ticks", record.counter_ticks}};
}

sample_record sample_from_json(const nlohmann::json& j) {
  sample_record record;
  record.duration_s = j.at("t").get<double>();
  record.host_wall_s = j.at("wall").get<double>();
  record.sm_clock_mhz = j.at("mhz").get<double>();
  record.calls = j.at("calls").get<int>();
  record.cost_s = j.value("cost", record.host_wall_s);
  record.gated = j.value("gated", false);
  record.counter_ticks = j.value("ticks", std::uint64_t{0});
  return record;
}

nlohmann::json notes_to_json(const variant_notes& notes) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : notes.all()) j[key] = value;
  return j;
}

variant_notes notes_from_json(const nlohmann::json& j) {
  AISP_EXPECTS(j.is_object(), "a load's notes must be a JSON object");
  variant_notes notes;
  for (const auto& [key, value] : j.items()) {
    AISP_EXPECTS(value.is_string(), "note '" + key.substr(0, max_note_key_chars) + "' is not a string");
    notes.add(key, value.get<std::string>());
  }
  return notes;
}

}  // namespace aisp::protocol
