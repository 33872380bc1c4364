#include "profile/bottleneck.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace aisp::profile {
namespace {

// Note [bottleneck classes]: a unit is busy when its throughput is at least 60% of its peak,
// Nsight Compute's own line between "well used" and "not the limiter".
//  - launch-bound: the kernel lasts under 5 us, about what a launch costs, so its duration says
//    more about the launch path than about the GPU (the fix is fewer, larger launches: graphs,
//    batching);
//  - memory-bound: the busiest memory level (DRAM, L2, L1/TEX) is busy and at least as busy as
//    the SMs; the level is named, because an L1-bound kernel wants register reuse, not fewer
//    DRAM bytes;
//  - compute-bound: the SMs are busy and busier than any memory level;
//  - occupancy-limited: neither is busy, the schedulers have under one eligible warp a cycle,
//    and the theoretical occupancy is under 50%: too few warps to hide latency, with the
//    resource that caps them named;
//  - latency-bound: neither is busy otherwise: warps wait on dependencies the occupancy cannot
//    hide (more independent work per thread, deeper pipelines).
// Host-bound cannot be seen from one kernel; the harness's audit (GPU busy fraction) says it.
constexpr double busy_pct = 60;
constexpr double launch_scale_s = 5e-6;
// Note [L2 as DRAM's pass-through]: every DRAM byte crosses L2, so a streaming kernel's L2
// throughput is its DRAM stream plus little else. On an H200 (HBM3e, the H100's L2) such kernels
// read L2 busier than DRAM: 14 of the lab's DRAM-bound baselines came out "L2" (2026-11-28,
// docs/profiling.md), softmax at L2 88.9% / DRAM 88.3% with 1.6% of L2 hits. Where L2 hits are
// the minority and DRAM is within a fifth of L2, DRAM is the level to name: its bytes are the
// ones to cut. Many L2 hits (a transpose, 87.5%) keep L2 named: reuse is what L2 is serving.
constexpr double pass_through_hit_pct = 70;
constexpr double pass_through_dram_share = 0.8;

std::string pct(double value) { return fmt::format("{:.1f}%", value); }

std::vector<std::string> remedies_for(bottleneck kind, const std::string& level) {
  switch (kind) {
    case bottleneck::memory_bound:
      if (level == "L1/TEX")
        return {"ch08:loop_unrolling (reuse loaded values in registers instead of reloading from L1)",
                "ch06:bank_conflicts (conflict-free shared-memory access)"};
      return {"ch07:vectorized_copy and ch07:coalesced_copy (full sectors, wide accesses)",
              "ch09:elementwise_fusion (fewer bytes per result)", "ch02:l2_persisting_window (keep reused data in L2)"};
    case bottleneck::compute_bound:
      return {"ch01:gemm_tensor_cores and labs/gemm (tensor cores)", "ch08:predication (fewer instructions per result)"};
    case bottleneck::occupancy_limited:
      return {"ch08:occupancy_tuning (a tile sized so that blocks fit)", "ch06:launch_bounds (registers per thread)",
              "ch08:spill_restructure (registers and local memory)"};
    case bottleneck::latency_bound:
      return {"ch06:ilp_accumulators (independent work per thread)",
              "ch10:double_buffered_pipeline and ch10:tma_2d_pipeline (loads in flight during compute)"};
    case bottleneck::launch_bound:
      return {"ch01:graph_chain (CUDA graphs)", "ch01:batched_launches (one launch for many items)"};
    case bottleneck::unknown:
      break;
  }
  return {};
}

}  // namespace

memory_level busiest_memory_level(const kernel_metrics& m) {
  memory_level level{"DRAM", m.dram_pct.value_or(0)};
  if (m.l2_pct.value_or(0) > level.pct) level = {"L2", *m.l2_pct};
  if (m.l1_pct.value_or(0) > level.pct) level = {"L1/TEX", *m.l1_pct};
  return level;
}

memory_level limiting_memory_level(const kernel_metrics& m) {
  const auto busiest = busiest_memory_level(m);
  if (busiest.name != "L2" || !m.dram_pct || !m.l2_hit_pct) return busiest;
  if (*m.l2_hit_pct >= pass_through_hit_pct || *m.dram_pct < pass_through_dram_share * busiest.pct) return busiest;
  return {"DRAM", *m.dram_pct};
}

std::string name_of(bottleneck kind) {
  switch (kind) {
    case bottleneck::memory_bound: return "memory-bound";
    case bottleneck::compute_bound: return "compute-bound";
    case bottleneck::latency_bound: return "latency-bound";
    case bottleneck::occupancy_limited: return "occupancy-limited";
    case bottleneck::launch_bound: return "launch-bound";
    case bottleneck::unknown: break;
  }
  return "unknown";
}

bottleneck_verdict classify(const kernel_metrics& m) {
  bottleneck_verdict verdict;
  if (!m.sm_pct || (!m.dram_pct && !m.l2_pct && !m.l1_pct)) {
    verdict.detail = "the profile lacks the Speed Of Light section";
    return verdict;
  }
  auto [level, memory] = busiest_memory_level(m);
  const double sm = *m.sm_pct;
  verdict.evidence.push_back(fmt::format("busiest memory level {} at {} of peak; SM throughput {}", level, pct(memory), pct(sm)));
  if (m.issue_busy_pct) verdict.evidence.push_back("issue slots busy " + pct(*m.issue_busy_pct));
  if (m.achieved_occupancy_pct && m.theoretical_occupancy_pct)
    verdict.evidence.push_back(fmt::format("occupancy {} achieved of {} theoretical{}", pct(*m.achieved_occupancy_pct),
                                           pct(*m.theoretical_occupancy_pct),
                                           m.occupancy_limiter.empty() ? "" : ", limited by " + m.occupancy_limiter));
  if (m.eligible_warps_per_scheduler)
    verdict.evidence.push_back(fmt::format("{:.2f} eligible warps per scheduler a cycle", *m.eligible_warps_per_scheduler));
  if (!m.top_stalls.empty())
    verdict.evidence.push_back(fmt::format("top stall: {} ({:.2f} warps per issued instruction)", m.top_stalls[0].first, m.top_stalls[0].second));
  if (m.global_load_sectors_per_request && *m.global_load_sectors_per_request > 4.5)
    verdict.evidence.push_back(fmt::format("{:.1f} sectors per global load request (4 when 32 lanes read 4 coalesced bytes each)",
                                           *m.global_load_sectors_per_request));
  if (m.shared_bank_conflicts && *m.shared_bank_conflicts > 0)
    verdict.evidence.push_back(fmt::format("{:.0f} shared-memory bank conflicts", *m.shared_bank_conflicts));

  if (m.duration_s && *m.duration_s < launch_scale_s) {
    verdict.kind = bottleneck::launch_bound;
    verdict.detail = fmt::format("{:.2f} us, about one launch's cost", *m.duration_s * 1e6);
  } else if (memory >= busy_pct && memory >= sm) {
    verdict.kind = bottleneck::memory_bound;
    const auto limiting = limiting_memory_level(m);
    verdict.detail = limiting.name == level
                         ? fmt::format("{} {} of peak", level, pct(memory))
                         : fmt::format("{} {} of peak (L2 {} carries its stream: {} L2 hits)", limiting.name,
                                       pct(limiting.pct), pct(memory), pct(*m.l2_hit_pct));
    level = limiting.name;
  } else if (sm >= busy_pct) {
    verdict.kind = bottleneck::compute_bound;
    verdict.detail = fmt::format("SM {} of peak", pct(sm));
  } else if (m.eligible_warps_per_scheduler.value_or(1) < 1 && m.theoretical_occupancy_pct.value_or(100) < 50) {
    verdict.kind = bottleneck::occupancy_limited;
    verdict.detail = fmt::format("{} theoretical occupancy{}", pct(*m.theoretical_occupancy_pct),
                                 m.occupancy_limiter.empty() ? "" : " (" + m.occupancy_limiter + ")");
  } else {
    verdict.kind = bottleneck::latency_bound;
    verdict.detail = fmt::format("no unit busy: memory {}, SM {}", pct(memory), pct(sm));
  }
  verdict.remedies = remedies_for(verdict.kind, level);
  return verdict;
}

nlohmann::json to_json(const bottleneck_verdict& verdict) {
  return {{"class", name_of(verdict.kind)},
          {"detail", verdict.detail},
          {"evidence", verdict.evidence},
          {"remedies", verdict.remedies}};
}

}  // namespace aisp::profile
