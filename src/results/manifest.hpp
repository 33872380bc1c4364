// The run manifest (architecture §5), written to every artifact folder before any pair runs:
// what ran, where, built from which source with which switches, under which config and seeds,
// and what the environment gate found.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aisp {

struct manifest_inputs {
  nlohmann::json system;       // probe_system()
  nlohmann::json environment;  // the environment gate's report
  nlohmann::json config;       // the run config as the CLI recorded it
  std::string executable;      // for its recorded compiler switches
};

[[nodiscard]] nlohmann::json build_manifest(const manifest_inputs& inputs);
// A stable hash of the config (of its canonical dump), for comparing runs.
[[nodiscard]] std::string config_hash(const nlohmann::json& config);

}  // namespace aisp
