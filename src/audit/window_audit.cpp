#include "audit/window_audit.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <unordered_map>
#include <utility>

namespace aisp {
namespace {

// Event and kernel timestamps come from the same device timer; a stop event is written after
// the work before it ends, so 2 us covers the timer's granularity and nothing a cheat could use.
constexpr std::uint64_t edge_slack_ns = 2000;

std::string describe(const timeline_activity& r) {
  return r.kind == activity_kind::kernel ? r.name : std::string(activity_kind_name(r.kind)) + " " + r.name;
}

// The part of [start, stop] that some activity covers, and the part left idle in gaps longer
// than long_gap_ns (the edges of the window count as gaps too).
struct coverage {
  double covered_ns = 0;
  double long_gaps_ns = 0;
};

coverage covered(std::vector<std::pair<std::uint64_t, std::uint64_t>> spans, std::uint64_t start, std::uint64_t stop) {
  std::sort(spans.begin(), spans.end());
  coverage c;
  std::uint64_t reach = start;
  const auto gap_until = [&](std::uint64_t until) {
    if (until > reach && until - reach > long_gap_ns) c.long_gaps_ns += static_cast<double>(until - reach);
  };
  for (auto [begin, end] : spans) {
    if (begin >= stop) break;
    gap_until(begin);
    begin = std::max(begin, reach);
    end = std::min(end, stop);
    if (end > begin) {
      c.covered_ns += static_cast<double>(end - begin);
      reach = end;
    }
  }
  gap_until(stop);
  return c;
}

void add_unique(std::vector<std::string>& list, std::string item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(std::move(item));
}

}  // namespace

run_api_calls& run_api_calls::operator+=(const run_api_calls& other) {
  allocations += other.allocations;
  host_callbacks += other.host_callbacks;
  stream_creations += other.stream_creations;
  access_policy += other.access_policy;
  module_loads += other.module_loads;
  device_switches += other.device_switches;
  math_mode_changes += other.math_mode_changes;
  return *this;
}

namespace {

// One window against the records launched inside it (`in_run`) and those launched by nobody's
// run() (`outside`: the harness's flush and clock probe, or work a cheat left behind).
window_audit audit_one(const sample_window& window, std::uint64_t start, std::uint64_t stop,
                       std::span<const timeline_activity* const> in_run, std::span<const timeline_activity* const> outside,
                       std::span<const timeline_activity* const> migrations, std::uint32_t own_device,
                       const std::set<std::string>& child_launchers) {
  window_audit audit;
  audit.api = window.api;
  if (start == 0 || stop < start) return audit;
  audit.complete = true;
  audit.window_s = static_cast<double>(stop - start) * 1e-9;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> in_driver;  // CUDA calls run() made
  for (const auto* r : outside) {
    if (r->kind == activity_kind::api) continue;
    if (r->start_ns < stop && r->end_ns > start + edge_slack_ns) {
      busy.emplace_back(r->start_ns, r->end_ns);
      add_unique(audit.foreign, describe(*r));
    }
  }
  for (const auto* record : in_run) {
    const auto& r = *record;
    if (r.kind == activity_kind::api) {
      in_driver.emplace_back(r.start_ns, r.end_ns);
      continue;
    }
    busy.emplace_back(r.start_ns, r.end_ns);
    if (r.device != own_device) add_unique(audit.other_devices, describe(r) + " on device " + std::to_string(r.device));
    // Still running at the stop event, or run before the start event: work run() put on a stream
    // the launch gate does not hold runs while the gate holds the window (Note [launch gate]).
    const bool ran_late = r.end_ns > stop + edge_slack_ns;
    const bool ran_early = r.start_ns + edge_slack_ns < start;
    const bool escaped = ran_late || ran_early;
    if (ran_late) audit.overrun_s = std::max(audit.overrun_s, static_cast<double>(r.end_ns - stop) * 1e-9);
    if (ran_early) audit.overrun_s = std::max(audit.overrun_s, static_cast<double>(start - r.start_ns) * 1e-9);
    switch (r.kind) {
      case activity_kind::kernel:
        ++audit.kernels;
        audit.kernel_names.insert(r.name);
        ++audit.kernel_launches[r.name];
        audit.cooperative_launches += r.launch_type == 1 || r.launch_type == 2;
        if (escaped) add_unique(audit.escaped_kernels, r.name);
        if (r.device_launched || child_launchers.count(r.name) > 0) add_unique(audit.device_launched, r.name);
        if (r.access_policy_window) add_unique(audit.access_policy_kernels, r.name);
        break;
      case activity_kind::memcpy:
      case activity_kind::memset:
        ++(r.kind == activity_kind::memcpy ? audit.copies : audit.memsets);
        if (r.kind == activity_kind::memcpy) audit.copy_bytes += r.bytes;
        if (escaped) add_unique(audit.escaped_copies, describe(r));
        break;
      case activity_kind::jit: ++audit.jit_compiles; break;
      default: break;
    }
  }
  // Migrations carry no correlation id: any inside the window is the sample's (C10). They are
  // the device's copy engines at work (a prefetch has no other record), so they count as busy.
  for (const auto* m : migrations) {
    if (m->start_ns > stop || std::max(m->end_ns, m->start_ns) < start) continue;
    const bool fault = m->name.starts_with("fault");
    audit.unified_memory_bytes += fault ? 0 : m->bytes;
    if (!fault) busy.emplace_back(m->start_ns, m->end_ns);
    add_unique(audit.unified_memory, m->name);
  }
  const double window_ns = static_cast<double>(stop - start);
  const auto device = covered(busy, start, stop);
  audit.busy_fraction = window_ns > 0 ? device.covered_ns / window_ns : 1.0;
  // Host work is the time neither the device nor the driver was busy: a slow prefetch or a
  // synchronous pageable copy keeps the host in the driver, not in run()'s own code.
  busy.insert(busy.end(), in_driver.begin(), in_driver.end());
  audit.long_gap_fraction = window_ns > 0 ? covered(std::move(busy), start, stop).long_gaps_ns / window_ns : 0.0;
  return audit;
}

bool by_correlation(const timeline_activity* a, const timeline_activity* b) { return a->correlation < b->correlation; }

}  // namespace

std::vector<window_audit> audit_windows(const std::vector<sample_window>& windows, const std::vector<timeline_activity>& records,
                                        std::uint32_t own_device, const std::set<std::string>& child_launchers) {
  std::unordered_map<std::uint32_t, std::uint64_t> event_time;  // correlation -> device timestamp
  std::vector<const timeline_activity*> work;
  std::vector<const timeline_activity*> migrations;
  for (const auto& r : records) {
    if (r.kind == activity_kind::event) {
      event_time[r.correlation] = r.start_ns;
    } else if (r.kind == activity_kind::unified_memory) {
      migrations.push_back(&r);
    } else if (r.kind != activity_kind::phase) {
      work.push_back(&r);
    }
  }
  std::sort(work.begin(), work.end(), by_correlation);
  // Windows come in order and never overlap in correlation: one pass splits the records into
  // each window's own and the rest.
  std::vector<std::span<const timeline_activity* const>> own(windows.size());
  std::vector<const timeline_activity*> outside;
  std::size_t next = 0;
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto& window = windows[w];
    for (; next < work.size() && work[next]->correlation <= window.start_correlation; ++next) outside.push_back(work[next]);
    const std::size_t first = next;
    while (next < work.size() && work[next]->correlation < window.stop_correlation) ++next;
    own[w] = std::span<const timeline_activity* const>(work.data() + first, next - first);
  }
  for (; next < work.size(); ++next) outside.push_back(work[next]);
  std::vector<window_audit> audits;
  audits.reserve(windows.size());
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto& window = windows[w];
    const auto find = [&](std::uint64_t given, std::uint32_t correlation) -> std::uint64_t {
      if (given != 0) return given;
      const auto found = event_time.find(correlation);
      return found != event_time.end() ? found->second : 0;
    };
    const auto start = find(window.start_ns, window.start_correlation);
    const auto stop = find(window.stop_ns, window.stop_correlation);
    audits.push_back(audit_one(window, start, stop, own[w], outside, migrations, own_device, child_launchers));
  }
  return audits;
}

window_audit audit_window(const sample_window& window, const std::vector<timeline_activity>& records,
                          std::uint32_t own_device, const std::set<std::string>& child_launchers) {
  return audit_windows({window}, records, own_device, child_launchers).front();
}

std::string library_of_kernel(std::string_view name) {
  // Markers of the kernels each library ships (cuBLAS's Hopper GEMMs are "nvjet_*"), read from
  // the kernel names in the CUDA 13.0 libraries. Device-API helpers compiled into a user's own
  // kernel (curand_init's state types, cub:: block primitives) are not library kernels, so the
  // cuRAND and CUB markers name host-API kernels and the CUB namespace's device-wide entry points.
  struct marker {
    std::string_view text;
    std::string_view library;
  };
  static constexpr std::array markers{
      marker{"nvjet", "cuBLAS"},          marker{"cublas", "cuBLAS"},          marker{"xmma_gemm", "cuBLAS"},
      marker{"gemv2", "cuBLAS"},          marker{"gemmSN", "cuBLAS"},          marker{"splitKreduce", "cuBLAS"},
      marker{"cudnn", "cuDNN"},           marker{"sm90_xmma", "cuDNN"},        marker{"sm80_xmma", "cuDNN"},
      marker{"nccl", "NCCL"},             marker{"cutlass", "CUTLASS"},        marker{"3cub", "CUB"},
      marker{"cub::", "CUB"},             marker{"cufft", "cuFFT"},            marker{"regular_fft", "cuFFT"},
      marker{"vector_fft", "cuFFT"},      marker{"spRadix", "cuFFT"},          marker{"dpRadix", "cuFFT"},
      marker{"packR2C", "cuFFT"},         marker{"cusparse", "cuSPARSE"},      marker{"gen_sequenced", "cuRAND"},
      marker{"gen_mtgp", "cuRAND"},       marker{"gen_quasi", "cuRAND"},       marker{"MT19937", "cuRAND"},
      marker{"generate_seed_pseudo", "cuRAND"}, marker{"cusolver", "cuSOLVER"}, marker{"getrf_", "cuSOLVER"},
      marker{"potrf", "cuSOLVER"},        marker{"geqrf", "cuSOLVER"},         marker{"sytrd", "cuSOLVER"},
      marker{"stedc_params", "cuSOLVER"}, marker{"jacobi_alg", "cuSOLVER"},    marker{"cutensor", "cuTENSOR"},
  };
  for (const auto& m : markers) {
    if (name.find(m.text) != std::string_view::npos) return std::string(m.library);
  }
  return "";
}

nlohmann::json to_json(const window_audit& a) {
  return {{"complete", a.complete}, {"window_s", a.window_s}, {"kernels", a.kernels}, {"copies", a.copies},
          {"copy_bytes", a.copy_bytes}, {"memsets", a.memsets}, {"jit_compiles", a.jit_compiles}, {"busy_fraction", a.busy_fraction},
          {"long_gap_fraction", a.long_gap_fraction}, {"cooperative_launches", a.cooperative_launches},
          {"unified_memory_bytes", a.unified_memory_bytes}, {"unified_memory", a.unified_memory},
          {"kernel_launches", a.kernel_launches}, {"rank_kernel_launches", a.rank_kernel_launches},
          {"overrun_s", a.overrun_s}, {"escaped_kernels", a.escaped_kernels}, {"escaped_copies", a.escaped_copies},
          {"foreign", a.foreign}, {"other_devices", a.other_devices}, {"device_launched", a.device_launched},
          {"access_policy_kernels", a.access_policy_kernels}, {"kernel_names", a.kernel_names},
          {"api", {{"allocations", a.api.allocations}, {"host_callbacks", a.api.host_callbacks},
                   {"stream_creations", a.api.stream_creations}, {"access_policy", a.api.access_policy},
                   {"module_loads", a.api.module_loads}, {"device_switches", a.api.device_switches},
                   {"math_mode_changes", a.api.math_mode_changes}}},
          {"managed_allocations", a.managed_allocations}};
}

window_audit window_audit_from_json(const nlohmann::json& j) {
  window_audit a;
  a.complete = j.value("complete", false);
  a.window_s = j.value("window_s", 0.0);
  a.kernels = j.value("kernels", 0);
  a.copies = j.value("copies", 0);
  a.copy_bytes = j.value("copy_bytes", std::uint64_t{0});
  a.memsets = j.value("memsets", 0);
  a.jit_compiles = j.value("jit_compiles", 0);
  a.busy_fraction = j.value("busy_fraction", 0.0);
  a.long_gap_fraction = j.value("long_gap_fraction", 0.0);
  a.cooperative_launches = j.value("cooperative_launches", 0);
  a.managed_allocations = j.value("managed_allocations", 0);
  a.unified_memory_bytes = j.value("unified_memory_bytes", std::uint64_t{0});
  a.kernel_launches = j.value("kernel_launches", std::map<std::string, int>{});
  a.rank_kernel_launches = j.value("rank_kernel_launches", std::vector<std::map<std::string, int>>{});
  a.overrun_s = j.value("overrun_s", 0.0);
  const auto list = [&](const char* key) { return j.value(key, std::vector<std::string>{}); };
  a.escaped_kernels = list("escaped_kernels");
  a.escaped_copies = list("escaped_copies");
  a.foreign = list("foreign");
  a.other_devices = list("other_devices");
  a.device_launched = list("device_launched");
  a.access_policy_kernels = list("access_policy_kernels");
  a.unified_memory = list("unified_memory");
  const auto names = list("kernel_names");
  a.kernel_names = {names.begin(), names.end()};
  const auto api = j.value("api", nlohmann::json::object());
  a.api.allocations = api.value("allocations", 0);
  a.api.host_callbacks = api.value("host_callbacks", 0);
  a.api.stream_creations = api.value("stream_creations", 0);
  a.api.access_policy = api.value("access_policy", 0);
  a.api.module_loads = api.value("module_loads", 0);
  a.api.device_switches = api.value("device_switches", 0);
  a.api.math_mode_changes = api.value("math_mode_changes", 0);
  return a;
}

}  // namespace aisp
