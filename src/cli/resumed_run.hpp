// Note [resumed runs]: `bench run --resume` finishes a run that was interrupted (Note
// [interrupted runs]: SIGINT or SIGTERM, the pairs it finished kept) in its own --artifacts-dir.
// The finished pairs stay as they were measured; the others are judged now; results.json then
// holds both, and `resumed_from` names each earlier part (its start, command and signal). A run
// is only resumed as itself: the same GPUs, driver and host, and every option the same, the
// seed included (it is taken from the earlier part, so each pair draws the inputs it would have
// drawn); anything else is refused in one line before any work. The use: a suite longer than
// one sitting, or than a lent machine's call (a device call of 600 s, where ch16 alone took
// 15 minutes on an H100, 2026-12-06), judged as one run.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace aisp::cli {

struct interrupted_run {
  nlohmann::json config;
  nlohmann::json device;
  nlohmann::json finished_pairs = nlohmann::json::array();
  nlohmann::json parts = nlohmann::json::array();  // every earlier part: started_at, command, interrupted_by
  std::set<std::string> finished_targets;
  std::uint64_t seed = 0;
};

// The interrupted run whose results.json is in `artifacts_dir`; contract_error (one line) when
// there is none, it is unreadable, or it ran to its end.
[[nodiscard]] interrupted_run read_interrupted_run(const std::string& artifacts_dir);

// contract_error naming the first option, GPU or host field where this run (`config`, `device`
// as results.json writes them) differs from the interrupted one.
void check_same_run(const interrupted_run& earlier, const nlohmann::json& config, const nlohmann::json& device);

}  // namespace aisp::cli
