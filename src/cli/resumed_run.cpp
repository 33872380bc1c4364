#include "cli/resumed_run.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "results/result_json.hpp"

namespace aisp::cli {
namespace {

// What makes two parts one run on one machine: the GPUs (by UUID), the driver and the host.
nlohmann::json machine_of(const nlohmann::json& device) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& gpu : device.value("gpus", nlohmann::json::array())) gpus.push_back(gpu.value("uuid", ""));
  return {{"gpus", gpus},
          {"cuda_driver_version", device.value("cuda_driver_version", 0)},
          {"hostname", device.value("host", nlohmann::json::object()).value("hostname", "")}};
}

}  // namespace

interrupted_run read_interrupted_run(const std::string& artifacts_dir) {
  const auto path = artifacts_dir + "/results.json";
  AISP_EXPECTS(std::filesystem::exists(path), "--resume: " + artifacts_dir + " holds no results.json: no run to resume there");
  const auto document = read_results_document(path);  // refuses a truncated or foreign document, saying where
  AISP_EXPECTS(document.contains("interrupted_by"),
               "--resume: the run in " + artifacts_dir + " ran to its end: nothing to resume (a new run wants its own --artifacts-dir)");
  interrupted_run run;
  run.config = document.value("config", nlohmann::json::object());
  run.device = document.value("device", nlohmann::json::object());
  run.finished_pairs = document["pairs"];
  for (const auto& p : run.finished_pairs) run.finished_targets.insert(p.value("target", ""));
  run.parts = document.value("resumed_from", nlohmann::json::array());
  std::size_t earlier_parts_pairs = 0;
  for (const auto& part : run.parts) earlier_parts_pairs += part.value("pairs", std::size_t{0});
  run.parts.push_back({{"started_at", document.value("started_at", "")},
                       {"command", document.value("command", "")},
                       {"interrupted_by", document["interrupted_by"]},
                       {"pairs", run.finished_pairs.size() - std::min(earlier_parts_pairs, run.finished_pairs.size())}});
  AISP_EXPECTS(run.config.contains("seed") && run.config["seed"].is_number_unsigned(),
               "--resume: " + path + " records no seed: it cannot be resumed with the inputs it drew");
  run.seed = run.config["seed"].get<std::uint64_t>();
  return run;
}

void check_same_run(const interrupted_run& earlier, const nlohmann::json& config, const nlohmann::json& device) {
  for (const auto& [key, value] : config.items()) {
    if (key == "seed" || key == "seed_fixed") continue;  // taken from the earlier part
    const auto before = earlier.config.value(key, nlohmann::json(nullptr));
    AISP_EXPECTS(before == value, fmt::format("--resume: the interrupted run had {} {}, this one asks {}: resume it with the same "
                                              "options, or start a new run in another --artifacts-dir",
                                              key, before.dump(), value.dump()));
  }
  const auto was = machine_of(earlier.device);
  const auto is = machine_of(device);
  for (const auto& [key, value] : is.items()) {
    AISP_EXPECTS(was[key] == value, fmt::format("--resume: the interrupted run ran with {} {}, this machine has {}: a run is resumed "
                                                "only where it started",
                                                key, was[key].dump(), value.dump()));
  }
}

}  // namespace aisp::cli
