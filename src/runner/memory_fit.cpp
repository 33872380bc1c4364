#include "runner/memory_fit.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "support/warm_heap.hpp"

namespace aisp {
namespace {

// Headroom the CUDA context, cuBLAS workspaces and a variant's own scratch take beyond the
// declared buffers; a workload that leaves less than this free is refused too.
constexpr double headroom_fraction = 0.05;
constexpr std::uint64_t headroom_bytes = 512ull << 20;

struct buffer_bytes {
  std::uint64_t all = 0;
  std::uint64_t outputs = 0;
};

buffer_bytes bytes_of(const pair& declared, const workload& work) {
  buffer_bytes total;
  for (const auto& b : declared.buffers()) {
    const auto bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, b.num_elements(work))) * dtype_size(b.type);
    total.all += bytes;
    if (b.role == buffer_role::output) total.outputs += bytes;
  }
  return total;
}

std::string gib(std::uint64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

}  // namespace

memory_need device_memory_need(const pair& declared, const workload& work, int workers, std::optional<std::uint64_t> free_bytes) {
  const auto bytes = bytes_of(declared, work);
  memory_need need{"device", 2 * bytes.all, workers, 0, free_bytes};
  need.needed = need.per_worker * static_cast<std::uint64_t>(workers);
  return need;
}

memory_need host_memory_need(const pair& declared, const workload& work, int workers, std::optional<std::uint64_t> available_bytes) {
  const auto bytes = bytes_of(declared, work);
  // A host pair's workers hold their buffers in host memory; a CUDA pair's only what the judge
  // reads back. Either way the judge holds the baseline's outputs and one candidate's.
  const bool host_buffers = declared.where() == backend::host;
  // A host pair's worker also keeps a warmed heap (Note [warm heap]).
  const std::uint64_t per_worker = host_buffers ? 2 * bytes.all + warm_heap_default_bytes : bytes.outputs;
  memory_need need{"host", per_worker, workers, 0, available_bytes};
  need.needed = need.per_worker * static_cast<std::uint64_t>(workers) + 2 * bytes.outputs;
  return need;
}

namespace {

// What the judge holds beside the workers (a host need's two outputs), so the sum reads right.
std::string judge_share(const memory_need& need) {
  const auto workers_bytes = need.per_worker * static_cast<std::uint64_t>(need.workers);
  const double judge_gib = static_cast<double>(need.needed - std::min(need.needed, workers_bytes)) / (1ull << 30);
  return judge_gib >= 0.005 ? fmt::format(" + {} of the judge's output copies", gib(need.needed - workers_bytes)) : "";
}

}  // namespace

std::string memory_fit_problem(const memory_need& need) {
  if (!need.available) return "";
  const auto headroom = std::max(headroom_bytes, static_cast<std::uint64_t>(headroom_fraction * static_cast<double>(*need.available)));
  if (need.needed + headroom <= *need.available) return "";
  return fmt::format("the workload does not fit in {} memory: {} workers x {} (buffers and a moved copy; a host pair's warmed heap)"
                     "{} need {}, and {} is free; choose a smaller --size",
                     need.where, need.workers, gib(need.per_worker), judge_share(need), gib(need.needed), gib(*need.available));
}

std::string describe(const memory_need& need) {
  return fmt::format("{} memory: {} workers x {}{} = {} needed, {} free", need.where, need.workers, gib(need.per_worker), judge_share(need),
                     gib(need.needed), need.available ? gib(*need.available) : std::string("unknown"));
}

std::optional<std::uint64_t> host_available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (!line.starts_with("MemAvailable:")) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace aisp
