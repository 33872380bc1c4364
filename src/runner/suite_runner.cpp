#include "runner/suite_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "audit/math_unit_evidence.hpp"
#include "audit/nvml_reader.hpp"
#include "history/expectations.hpp"
#include "history/history_store.hpp"
#include "results/result_json.hpp"
#include "results/terminal_table.hpp"
#include "results/time_breakdown.hpp"
#include "runner/gpu_lanes.hpp"
#include "runner/run_interruption.hpp"
#include "support/readable_error.hpp"

namespace aisp {
namespace {

void save(const suite_result& suite, const suite_outputs& outputs) {
  const auto document = to_json(suite);
  write_json_file(outputs.results_path, document);
  if (!outputs.extra_json_path.empty()) write_json_file(outputs.extra_json_path, document);
}

std::string one_line_outcome(const pair_result& result) {
  if (result.status == "skip") return "skipped: " + result.message;
  if (result.status == "fail" && result.failure_kind != "verify")
    return "FAILED (" + result.failure_kind + "): " + without_source_locations(result.message);
  std::string text;
  for (const auto& s : result.speedups) {
    text += fmt::format("{}{} {:.3f}x [{:.3f}, {:.3f}] {}", text.empty() ? "" : "; ", s.variant,
                        s.speedup.point, s.speedup.low, s.speedup.high, s.verdict);
  }
  // `bench verify` has no speedups: say what it found rather than print nothing.
  if (text.empty()) {
    std::size_t failed = 0;
    std::string first;
    for (const auto& c : result.checks) {
      if (c.passed) continue;
      if (failed++ == 0) first = c.check + " (" + c.variant + ")";
    }
    text = failed == 0 ? "verified" : fmt::format("FAILED verification: {} check{}, first {}", failed, failed == 1 ? "" : "s", first);
  }
  return text + fmt::format(" ({:.1f} s)", result.wall_s);
}

// " (1m05s elapsed, about 3m10s left)": the average pair so far times the pairs still to run.
std::string eta_text(std::chrono::steady_clock::time_point started, std::size_t done, std::size_t total) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (done == 0) return "";
  return fmt::format(" ({} elapsed, about {} left)", short_duration(elapsed),
                     short_duration(elapsed / static_cast<double>(done) * static_cast<double>(total - done)));
}

// Why CUDA pairs cannot run on GPU `index`, or its clock, ceilings and NVML readers.
device_availability availability_of(const system_info& system, int index, std::function<nlohmann::json()>* telemetry_now) {
  device_availability device;
  device.absence_reason = system.gpu_absence_reason;
  if (!device.absence_reason.empty()) return device;
  const auto chosen = static_cast<std::size_t>(index);
  if (chosen >= system.gpus.size()) {
    device.absence_reason = fmt::format("--device {} does not exist ({} GPUs)", index, system.gpus.size());
    return device;
  }
  const auto& gpu = system.gpus[chosen];
  device.default_sm_clock_mhz = gpu.max_sm_clock_mhz;
  device.compute_major = gpu.compute_major;
  device.compute_minor = gpu.compute_minor;
  device.gpu_count = static_cast<int>(system.gpus.size());
  device.ceilings = gpu_ceilings(gpu.name, gpu.uuid, system.cuda_driver_version);
  std::string why;
  std::shared_ptr<const nvml_session> nvml = nvml_session::open(why);
  device.free_device_memory = [nvml, uuid = gpu.uuid, total = std::uint64_t{gpu.memory_bytes}]() -> std::optional<std::uint64_t> {
    if (const auto reading = nvml != nullptr ? nvml->read(uuid) : std::nullopt; reading && reading->memory_total_bytes > 0)
      return reading->memory_free_bytes;
    return total > 0 ? std::optional<std::uint64_t>(total) : std::nullopt;
  };
  if (nvml != nullptr) {
    device.read_telemetry = [nvml, uuid = gpu.uuid](bool with_energy) { return nvml->read_visit(uuid, with_energy); };
    if (telemetry_now != nullptr) {
      *telemetry_now = [nvml, uuid = gpu.uuid] {
        const auto reading = nvml->read(uuid);
        return reading ? to_json(*reading) : nlohmann::json(nullptr);
      };
    }
  }
  return device;
}

}  // namespace

suite_result run_suite(const std::vector<pair_request>& requests, const run_config& config,
                       const system_info& system, suite_result header, const suite_outputs& outputs,
                       const progress_fn& progress) {
  suite_result suite = std::move(header);
  const interruption_watch interruption;  // Note [interrupted runs]
  std::function<nlohmann::json()> telemetry_now;  // full NVML reading, for the end of the run
  const device_availability device = availability_of(system, config.device, &telemetry_now);
  // Speed-of-light percentages against a datasheet read lower than against the copy ceiling
  // `aisp hw` measures (3.35 TB/s vs ~3.0 TB/s on the H100): say which one this run uses.
  if (device.absence_reason.empty() && device.ceilings.source.starts_with("datasheet"))
    progress(fmt::format("[ceilings] SOL % against the {} ceilings: no `aisp hw` measurement is cached for this GPU and "
                         "driver; run `aisp hw` once to judge against measured ones",
                         device.ceilings.source));
  // The history records the run as it goes: each finished pair in one transaction, so a run
  // killed mid-suite keeps what it finished. A database that fails mid-run costs the history,
  // never the results (results.json is written regardless).
  // A malformed expectations file or an unusable database is refused before anything is written:
  // refused after the first save, it left the folder's earlier results.json an empty run (a
  // user's walkthrough, 2026-12-04).
  const nlohmann::json expectations =
      config.expectations_file.empty() ? nlohmann::json(nullptr) : load_expectations(config.expectations_file, hardware_key_of(to_json(suite)));
  std::unique_ptr<history_store> history;
  std::int64_t run_id = 0;
  if (!outputs.history_db.empty()) {
    try {
      history = std::make_unique<history_store>(outputs.history_db);
    } catch (const history_error& error) {
      throw contract_error(std::string("--history: ") + error.what());
    }
  }
  save(suite, outputs);
  if (history) run_id = history->begin_run(to_json(suite));
  const auto record = [&](auto&& write) {
    if (history == nullptr) return;
    try {
      write();
    } catch (const history_error& error) {
      progress(std::string("[history] ") + error.what() + "; the run goes on, results.json keeps everything");
      history.reset();
    }
  };
  // Without a GPU every CUDA pair is skipped for the same reason: one line says so.
  std::size_t skipped_gpu = 0;
  for (const auto& r : requests) skipped_gpu += r.declared->where() == backend::cuda && !device.absence_reason.empty();
  if (skipped_gpu > 0)
    progress(fmt::format("[skip] {} GPU pair{} skipped: {}", skipped_gpu, skipped_gpu == 1 ? "" : "s", device.absence_reason));
  const std::size_t to_run = requests.size() - skipped_gpu;
  // --trace draws the device's timeline (CUPTI): a host pair has none, and gets no file. Say so
  // rather than leave the folder short of files without a word.
  if (!config.trace_dir.empty()) {
    const auto host_pairs = std::count_if(requests.begin(), requests.end(), [](const auto& r) { return r.declared->where() != backend::cuda; });
    if (host_pairs > 0)
      progress(fmt::format("[trace] {} host {} no trace: --trace draws the GPU's timeline, and a host pair has none", host_pairs,
                           host_pairs == 1 ? "pair gets" : "pairs get"));
  }
  // Note [sass cache]: on a machine that has not cached this binary's SASS table, cuobjdump reads
  // it (about 30 s on the H100 machine) while the first pairs run, not inside the first pair.
  std::future<void> sass_table;
  const bool any_gpu_pair = std::any_of(requests.begin(), requests.end(), [](const auto& r) { return r.declared->where() == backend::cuda; });
  if (any_gpu_pair && device.absence_reason.empty() && config.audit) {
    sass_table = std::async(std::launch::async, [&config] {
      std::string why;
      (void)sass_math_units_of(config.executable, why);
    });
  }
  const auto started = std::chrono::steady_clock::now();
  std::size_t done = 0;
  std::mutex finishing;  // lanes finish pairs one at a time: results, history and progress
  const auto mark_expectations = [&](pair_result& result) {
    if (expectations.is_null()) return;
    for (auto& s : result.speedups) {
      if (s.verdict == "invalid") continue;
      nlohmann::json vs_peer;
      nlohmann::json recorded;
      double median_s = 0;
      for (const auto& v : result.variants) {
        if (v.name != s.variant) continue;
        median_s = v.stats.median;
        if (v.vs_peer) vs_peer = {{"point", v.vs_peer->point}, {"low", v.vs_peer->low}, {"high", v.vs_peer->high}};
        recorded = recorded_metrics_of(v.goal_metrics);
      }
      s.expectation = mark_against(expectations, result.target, s.variant, s.speedup.low, s.speedup.high, vs_peer, median_s, recorded);
    }
  };
  const auto run_one = [&](const pair_request& request, const run_config& pair_config, const device_availability& on,
                           const std::string& lane) {
    if (interruption.signal() != 0) return;  // no pair starts after a Ctrl-C
    const auto& target = request.declared->target();
    const bool skipped = request.declared->where() == backend::cuda && !on.absence_reason.empty();
    if (!skipped) {
      const std::lock_guard lock(finishing);
      progress(fmt::format("[{}/{}] {}{}{}", done + 1, to_run, target, lane, eta_text(started, done, to_run)));
    }
    // Lanes report side by side: one line at a time.
    const progress_fn locked = [&](const std::string& line) {
      const std::lock_guard lock(finishing);
      progress(line);
    };
    auto result = run_pair(request, pair_config, on, lane.empty() ? progress : locked);
    if (!lane.empty()) result.gpu = pair_config.device;
    mark_expectations(result);
    const std::lock_guard lock(finishing);
    // Note [interrupted runs]: a pair the interruption ended has no result, and its failure is
    // the interruption's, not its code's: it is left out and said so.
    if (interruption.signal() != 0 && result.status == "fail") {
      progress(fmt::format("[{}/{}] {}{}: interrupted before it finished, not recorded", done + 1, to_run, target, lane));
      return;
    }
    suite.pairs.push_back(std::move(result));
    if (!skipped) progress(fmt::format("[{}/{}] {}{}: {}", ++done, to_run, target, lane, one_line_outcome(suite.pairs.back())));
    // History first: once results.json lists a pair, its history transaction has committed
    // (a run killed between the two kept a pair in results.json that the history lacked).
    record([&] { history->add_pair(run_id, to_json(suite.pairs.back())); });
    save(suite, outputs);
  };
  // Note [gpu lanes]: with --gpus, single-GPU CUDA pairs run side by side, one per GPU; host
  // pairs (whose timings the lanes' judges would disturb) and multi-GPU pairs (which need every
  // GPU) run afterwards, alone, as without --gpus.
  std::vector<const pair_request*> laned;
  std::vector<const pair_request*> alone;
  for (const auto& r : requests) {
    const bool lane_it = config.gpu_lanes.size() > 1 && device.absence_reason.empty() && r.declared->where() == backend::cuda &&
                         r.declared->gpus() == 1;
    (lane_it ? laned : alone).push_back(&r);
  }
  if (!laned.empty()) {
    std::vector<device_availability> lanes;
    for (const int gpu : config.gpu_lanes) lanes.push_back(availability_of(system, gpu, nullptr));
    progress(fmt::format("[gpus] {} single-GPU pairs on {} GPUs side by side", laned.size(), config.gpu_lanes.size()));
    // Each lane judges SOL against its own GPU's ceilings: a lane with no `aisp hw` measurement
    // falls back to the datasheet while the others use measured ones, so the same kernel reads
    // another SOL % on another lane. Say which lanes.
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
      if (lanes[lane].absence_reason.empty() && lanes[lane].ceilings.source.starts_with("datasheet"))
        progress(fmt::format("[ceilings] GPU {}: SOL % against the {} ceilings, none measured for it (`aisp hw --device {}`)",
                             config.gpu_lanes[lane], lanes[lane].ceilings.source, config.gpu_lanes[lane]));
    }
    run_on_lanes(laned.size(), config.gpu_lanes, [&](std::size_t item, int gpu) {
      run_config on_gpu = config;
      on_gpu.device = gpu;
      const auto lane = static_cast<std::size_t>(std::find(config.gpu_lanes.begin(), config.gpu_lanes.end(), gpu) - config.gpu_lanes.begin());
      run_one(*laned[item], on_gpu, lanes[lane], fmt::format(" (GPU {})", gpu));
    });
  }
  for (const auto* request : alone) run_one(*request, config, device, "");
  if (done > 0) progress("[time] " + describe(break_down(suite.pairs)));
  // The card at the end of the run, beside the reading at its start in `device` (E2, E7, E8).
  if (telemetry_now) {
    suite.telemetry_end = telemetry_now();
    save(suite, outputs);
  }
  if (interruption.signal() != 0) {
    suite.interrupted_by = interruption.signal();
    save(suite, outputs);
    progress(fmt::format("[interrupted] by {} after {} of {} pairs; results.json and the history keep the {} it finished",
                         strsignal(suite.interrupted_by), done, to_run, suite.pairs.size()));
    record([&] { history->finish_run(run_id, "interrupted"); });
    return suite;
  }
  record([&] { history->finish_run(run_id, suite.any_failed() ? "failed" : suite.nothing_measured() ? "skipped" : "complete"); });
  return suite;
}

}  // namespace aisp
