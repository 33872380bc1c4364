#include "results/manifest.hpp"

#include <fmt/format.h>

#include "aisp_git.hpp"
#include "audit/build_flags.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {

std::string config_hash(const nlohmann::json& config) {
  const std::string text = config.dump();
  return fmt::format("{:016x}", hash_bytes(reinterpret_cast<const unsigned char*>(text.data()), text.size()));
}

nlohmann::json build_manifest(const manifest_inputs& inputs) {
  const auto switches = recorded_compile_switches(inputs.executable);
  return {{"schema", "aisp.manifest"},
          {"schema_version", 1},
          {"git", {{"sha", AISP_GIT_SHA}, {"dirty", AISP_GIT_DIRTY}}},
          {"system", inputs.system},
          {"environment", inputs.environment},
          {"config", inputs.config},
          {"config_hash", config_hash(inputs.config)},
          {"seed", inputs.config.value("seed", nlohmann::json(nullptr))},
          // One binary builds every variant: these are the switches of each of its units (K4).
          {"compile_switches", switches},
          {"unsafe_math_flags", unsafe_math_flags(switches)}};
}

}  // namespace aisp
