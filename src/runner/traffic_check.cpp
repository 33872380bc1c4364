#include "runner/traffic_check.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "runner/judge_checks.hpp"
#include "runner/worker_process.hpp"

namespace aisp {
namespace {

// Counters refused for a reason that holds for every process on this machine: recorded, not
// failed (a workstation's driver often keeps counters to administrators).
bool machine_wide(const std::string& why) {
  return why.find("ERR_NVGPUCTRPERM") != std::string::npos || why.find("permission") != std::string::npos ||
         why.find("not supported") != std::string::npos || why.find("unsupported") != std::string::npos;
}

// Bytes the copy engines moved in one call of the audited samples (the median): CUPTI's copy
// records see them, the SM-side L2 counters do not (a peer copy over NVLink read 2% of its bytes
// through L2 on the H200 pair, 2026-11-28).
double copy_engine_bytes_per_call(const variant_slot& slot) {
  std::vector<double> per_call;
  const double calls = std::max(1, slot.result.calls_per_sample);
  for (const auto& audit : slot.audits)
    if (audit.complete) per_call.push_back(static_cast<double>(audit.copy_bytes) / calls);
  if (per_call.empty()) return 0;
  std::nth_element(per_call.begin(), per_call.begin() + static_cast<std::ptrdiff_t>(per_call.size() / 2), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

std::string traffic_shortfall(double declared_bytes, double measured_bytes_per_call, double copy_engine_bytes) {
  if (declared_bytes <= 0 || measured_bytes_per_call >= traffic_floor * declared_bytes) return "";
  const std::string copies = copy_engine_bytes > 0 ? fmt::format(", {:.4g} of them by copy engines", copy_engine_bytes) : "";
  return fmt::format("one call moved {:.4g} bytes through L2 (hardware counters){}, {:.0f}% of the {:.4g} declared as the "
                     "fewest any variant moves",
                     measured_bytes_per_call, copies, 100 * measured_bytes_per_call / declared_bytes, declared_bytes);
}

void check_traffic(const pair& declared, const work_amount& work, std::vector<variant_slot>& slots, const run_config& config,
                   std::vector<check_result>& checks) {
  if (declared.where() != backend::cuda || !config.audit) return;
  const bool comparable = !crosses_pcie(declared.path_of()) && !declared.allows_managed_memory();
  bool any_read = false;
  std::vector<std::pair<variant_slot*, std::string>> refused;
  for (auto& slot : slots) {
    if (slot.role == slot_role::noise_twin) continue;  // the baseline's code, counted in the baseline's worker
    const auto reply = slot.worker->request({{"op", "traffic"}}, config.worker_timeout_s);
    auto& record = slot.result.traffic;
    if (reply.contains("unavailable")) {
      const auto why = reply.value("unavailable", std::string("?"));
      record = {{"state", "unavailable: " + why}};
      if (!machine_wide(why)) refused.emplace_back(&slot, why);
      continue;
    }
    any_read = true;
    const double calls = std::max(1, reply.value("calls", 1));
    const double l2 = (reply.value("l2_read_bytes", 0.0) + reply.value("l2_write_bytes", 0.0)) / calls;
    const double copied = copy_engine_bytes_per_call(slot);
    const double moved = l2 + copied;
    record = {{"state", "on"}, {"l2_bytes_per_call", l2}, {"copy_engine_bytes_per_call", copied},
              {"dram_bytes_per_call", (reply.value("dram_read_bytes", 0.0) + reply.value("dram_write_bytes", 0.0)) / calls},
              {"declared_bytes", work.bytes}, {"passes", reply.value("passes", 0)}, {"compared", comparable}};
    if (work.bytes > 0) record["fraction_of_declared"] = moved / work.bytes;
    if (!comparable) continue;
    const auto shortfall = traffic_shortfall(work.bytes, moved, copied);
    add_check(checks, verify::checks::traffic, slot.label, shortfall.empty(),
              shortfall.empty() ? fmt::format("{:.0f}% of the declared bytes", 100 * moved / std::max(work.bytes, 1.0)) : shortfall);
  }
  // Counters that answered one worker and not another: the other's own code holds them.
  for (const auto& [slot, why] : refused) {
    if (any_read) add_check(checks, verify::checks::traffic, slot->label, false, "the hardware counters answered the other workers but not this one: " + why);
  }
}

}  // namespace aisp
