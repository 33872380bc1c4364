// `aisp bench run` and `aisp bench verify`: the same pipeline, verify with a token time budget.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <random>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "aisp/registry.hpp"
#include "cli/artifacts_lock.hpp"
#include "cli/commands.hpp"
#include "cli/launch_options.hpp"
#include "cli/number_checks.hpp"
#include "cli/resumed_run.hpp"
#include "runner/size_overrides.hpp"
#include "history/history_store.hpp"
#include "hw/system_info.hpp"
#include "audit/environment_gate.hpp"
#include "results/manifest.hpp"
#include "results/quarantine.hpp"
#include "results/report_formats.hpp"
#include "results/result_json.hpp"
#include "results/terminal_table.hpp"
#include "runner/pair_runner.hpp"
#include "runner/suite_runner.hpp"
#include "harness/plugin_loader.hpp"
#include "runner/target_selector.hpp"
#include "runner/gpu_lanes.hpp"
#include "runner/launch_share.hpp"
#include "runner/worker_process.hpp"
#include "support/utc_time.hpp"
#include "verify/golden_store.hpp"
#include "support/paths.hpp"

namespace aisp::cli {
namespace {

struct run_options {
  std::vector<std::string> targets{"all"};
  std::vector<std::string> plugins;
  std::string json_path;
  std::string artifacts_dir;
  std::string mode;  // "" = not chosen: cold, or a pair's own graph mode (Note [short calls])
  std::string phase = "gate";
  std::string quarantine_file = artifacts_root() + "/quarantine.json";
  std::optional<std::uint64_t> seed;  // absent: a random seed, recorded in the results
  double max_time_s = 5;  // Note [sampling ceiling] in stopping_rule.hpp
  std::optional<double> min_time_s;  // default 0.25 (at most --max-time): Note [sampling floor] in src/stats/stopping_rule.hpp
  std::size_t min_samples = stats::least_samples_for_a_verdict;
  double target_ci = 0.005;
  double min_effect = 0.01;
  double worker_timeout_s = 60;
  unsigned judge_threads = 0;
  int device = 0;
  std::string gpus;  // --gpus: "" (only --device), all, a count or a list
  bool aa_test = false;
  bool quiet = false;
  bool verify_only = false;
  bool small_sizes_only = false;
  bool validation_sizes_only = false;
  bool skip_battery = false;
  bool without_baseline = false;
  bool resume = false;  // Note [resumed runs]
  std::string golden_file = shipped_data_file("expectations/goldens.json");
  bool update_goldens = false;
  std::string env_profile = "auto";
  std::string l2_flush = "read";
  bool launch_gate = true;
  std::string audit = "on";
  std::string trace_dir;
  double energy_window_s = 0.5;
  std::string history_db;  // "" = beside the artifacts folder; "none" = no history
  std::string expectations_file;  // "" = expectations/<hardware>.json when present
  std::vector<std::string> sizes;  // --size name=value
  launch_options launch;           // Note [launch]: mpirun / srun
};

// A run's folder when --artifacts-dir is not given: artifacts/run-<time>-<pid>.
std::string default_artifacts_dir() { return artifacts_root() + "/run-" + utc_now("%Y%m%dT%H%M%SZ") + "-" + std::to_string(getpid()); }

verify_phase parse_phase(const std::string& text) {
  if (text == "detect") return verify_phase::detect;
  if (text == "quarantine") return verify_phase::quarantine;
  return verify_phase::gate;
}

run_config make_config(const run_options& options) {
  const auto mode = parse_timing_mode(options.mode.empty() ? "cold" : options.mode);
  AISP_EXPECTS(mode.has_value(), "--mode must be cold, hot or graph, not '" + options.mode + "'");
  run_config config;
  config.mode = *mode;
  config.mode_chosen = !options.mode.empty();
  // Note [fresh calls]: a fixed default seed would give every run the same validation inputs;
  // the seed is random unless the user fixes it, and the results record it either way.
  config.seed = options.seed.value_or(std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32));
  config.stopping.max_time_s = options.max_time_s;
  // A floor the user asks for above the ceiling is a contradiction, not a wish to trim silently.
  AISP_EXPECTS(!options.min_time_s || *options.min_time_s <= options.max_time_s,
               fmt::format("--min-time {} is more than --max-time {}: sampling stops at --max-time, so raise it too", *options.min_time_s,
                           options.max_time_s));
  config.stopping.min_time_s = options.min_time_s.value_or(std::min(0.25, options.max_time_s));
  // S5: a verdict's CI comes from at least this many samples a variant, whatever is asked.
  AISP_EXPECTS(options.min_samples >= stats::least_samples_for_a_verdict,
               fmt::format("--min-samples {}: a speedup needs at least {} samples a variant (S5: a CI from fewer claims more than "
                           "it measured); for slow calls raise --max-time instead",
                           options.min_samples, stats::least_samples_for_a_verdict));
  // A count the run could never reach is refused, not found out after sampling (a user's
  // walkthrough, 2026-12-04: --min-samples 99999999999 ran, then failed sample-count).
  constexpr std::size_t most_samples = 1'000'000;
  AISP_EXPECTS(options.min_samples <= most_samples,
               fmt::format("--min-samples {}: at most {} (a variant's samples are kept in memory and each takes a visit)",
                           options.min_samples, most_samples));
  config.stopping.min_samples = options.min_samples;
  config.stopping.target_rel_half_width = options.target_ci;
  config.verdicts.min_effect = options.min_effect;
  config.worker_timeout_s = options.worker_timeout_s;
  AISP_EXPECTS(options.judge_threads <= 1024, fmt::format("--judge-threads {}: at most 1024 (0: every core)", options.judge_threads));
  config.judge_threads = options.judge_threads;
  config.device = options.device;
  config.aa_test = options.aa_test;
  config.phase = parse_phase(options.phase);
  config.verify_only = options.verify_only;
  config.small_sizes_only = options.small_sizes_only || options.validation_sizes_only;
  config.skip_held_out = options.validation_sizes_only;
  AISP_EXPECTS(!options.skip_battery || config.small_sizes_only,
               "--skip-battery needs --small-sizes-only or --validation-sizes-only: without the battery a run "
               "judges nothing it could call verified");
  config.skip_battery = options.skip_battery;
  AISP_EXPECTS(!options.without_baseline || (options.validation_sizes_only && options.skip_battery),
               "--without-baseline needs --validation-sizes-only and --skip-battery: the held-out draw and the battery "
               "take their truths from the baseline");
  config.without_baseline = options.without_baseline;
  config.golden_file = options.golden_file;
  config.update_goldens = options.update_goldens;
  AISP_EXPECTS(options.audit == "on" || options.audit == "off", "--audit must be on or off, not '" + options.audit + "'");
  config.audit = options.audit == "on";
  config.energy_window_s = options.energy_window_s;
  config.expectations_file = options.expectations_file;
  if (!options.trace_dir.empty()) {
    AISP_EXPECTS(config.audit, "--trace needs the device audit (--audit on)");
    std::error_code made;
    std::filesystem::create_directories(options.trace_dir, made);
    AISP_EXPECTS(!made, "--trace " + options.trace_dir + ": cannot make the folder (" + made.message() + ")");
    config.trace_dir = std::filesystem::canonical(options.trace_dir).string();
  }
  // --size rows=1024,cols=1024 (repeatable): each name=value replaces one benchmark parameter.
  config.benchmark_override = parse_size_overrides(options.sizes);
  if (options.verify_only) {  // checks only: a token of sampling, enough for the timed-call checks
    config.stopping.min_samples = 3;
    config.stopping.min_time_s = 0;
    config.stopping.max_time_s = 0.05;
  }
  config.executable = current_executable();
  // --json's file is written after every pair: a path that cannot be written is bad usage, said
  // before any work (it was found after the first pair, exit 1), never a lost run. Its folder is
  // made as --artifacts-dir's is.
  if (!options.json_path.empty()) {
    const std::filesystem::path json_file(options.json_path);
    const auto folder = json_file.has_parent_path() ? json_file.parent_path() : std::filesystem::path(".");
    AISP_EXPECTS(!std::filesystem::is_directory(json_file), "--json " + options.json_path + ": is a folder; name a file");
    std::error_code json_folder;
    std::filesystem::create_directories(folder, json_folder);
    AISP_EXPECTS(!json_folder && std::filesystem::is_directory(folder),
                 "--json " + options.json_path + ": cannot make the folder " + folder.string() + " (" +
                     (json_folder ? json_folder.message() : "not a folder") + ")");
    AISP_EXPECTS(::access(std::filesystem::exists(json_file) ? json_file.c_str() : folder.c_str(), W_OK) == 0,
                 "--json " + options.json_path + ": cannot be written here (permission denied)");
  }
  config.artifacts_dir = options.artifacts_dir.empty() ? default_artifacts_dir() : options.artifacts_dir;
  std::error_code made;
  std::filesystem::create_directories(config.artifacts_dir, made);
  AISP_EXPECTS(!made && std::filesystem::is_directory(config.artifacts_dir),
               "--artifacts-dir " + config.artifacts_dir + ": cannot make the folder (" + (made ? made.message() : "not a folder") + ")");
  config.artifacts_dir = std::filesystem::canonical(config.artifacts_dir).string();
  hold_artifacts_folder(config.artifacts_dir);  // Note [one run a folder]
  // A folder reused from an earlier run: its files are replaced as this run writes its own. Say
  // so once, before any work, rather than overwrite without a word (the history keeps that run).
  if (const auto earlier = config.artifacts_dir + "/results.json"; std::filesystem::exists(earlier) && !options.quiet && !options.resume) {
    std::ifstream in(earlier);
    const auto document = nlohmann::json::parse(in, nullptr, false);
    const std::string started = document.is_object() && document.contains("started_at") && document["started_at"].is_string()
                                    ? document["started_at"].get<std::string>()
                                    : "at an unknown time";
    std::fprintf(stderr, "[artifacts] %s holds the run started %s: this run replaces its results.json and report.md\n",
                 config.artifacts_dir.c_str(), started.c_str());
  }
  return config;
}

// The plugins of the run, for the results: which pairs came from where, and how they were built.
nlohmann::json plugins_json() {
  auto list = nlohmann::json::array();
  for (const auto& plugin : loaded_plugins()) {
    nlohmann::json entry = {{"path", plugin.path},
                            {"optimized", plugin.optimized ? nlohmann::json(*plugin.optimized) : nlohmann::json(nullptr)},
                            {"targets", plugin.targets}};
    // The Python bridge: which pair files, through which libpython (the interpreter's version).
    if (plugin.python_bridge) {
      const auto variable = [](const char* name) { return std::string(std::getenv(name) != nullptr ? std::getenv(name) : ""); };
      entry["python"] = {{"pair_files", variable("AISP_PYTHON_PAIRS")}, {"library", variable("AISP_PYTHON_LIBRARY")},
                         {"glibc_tunables", variable("GLIBC_TUNABLES")}};
    }
    list.push_back(std::move(entry));
  }
  return list;
}

int run_here(const run_options& options, const std::string& command_line, const std::optional<launch_position>& launch,
             const std::string& share_dir = "");

// Note [launch]: launch rank 0 judges with the others' GPUs at hand; every other launch rank is
// a rank host that judges its share of the pairs first; a run of one process is the ordinary run.
int run_bench(const run_options& options, const std::string& command_line) {
  const auto launch = launch_position_of(options.launch);
  if (launch && launch->rank > 0) {
    return serve_as_rank_host(options.launch, *launch, options.device, options.artifacts_dir,
                              [&](const std::string& dir) { return run_here(options, command_line, launch, dir); });
  }
  return run_here(options, command_line, launch);
}

// `share_dir`: a rank host's folder, where it judges its share (launch rank > 0).
int run_here(const run_options& options, const std::string& command_line, const std::optional<launch_position>& launch,
             const std::string& share_dir) {
  fail_on_broken_registrations();
  load_user_plugins(options.plugins);
  // With --plugin or --python and no --targets, the user's pairs are the ones to judge.
  auto targets = options.targets;
  if (targets == std::vector<std::string>{"all"} && !loaded_plugins().empty()) {
    targets.clear();
    for (const auto& plugin : loaded_plugins()) targets.insert(targets.end(), plugin.targets.begin(), plugin.targets.end());
  }
  auto requests = select_targets(registry::instance(), targets);
  for (const auto& request : requests) {
    const bool a_candidate = std::ranges::any_of(request.candidates, [](const std::string& v) { return v != "baseline"; });
    AISP_EXPECTS(!options.without_baseline || a_candidate,
                 "--without-baseline checks the variants a target names, and " + request.declared->target() +
                     " names no candidate: give " + request.declared->target() + ":VARIANT");
  }
  if (launch) requests = launch_share(requests, launch->rank, launch->size);
  if (launch && launch->rank > 0 && requests.empty()) return 0;  // nothing to judge: the manifest says who it was
  std::string launch_base;  // the run's folder; launch rank 0 writes into its launch-rank-0
  auto config = [&] {
    if (!launch) return make_config(options);
    auto own = options;
    launch_base = options.artifacts_dir.empty() ? default_artifacts_dir() : options.artifacts_dir;
    own.artifacts_dir = launch->rank > 0 ? share_dir : launch_rank_dir(launch_base, 0);
    own.device = options.device + launch->local_rank;
    return make_config(own);
  }();
  std::optional<interrupted_run> earlier;  // Note [resumed runs]
  std::size_t kept_pairs = 0;
  if (options.resume) {
    AISP_EXPECTS(!launch, "--resume: a launch's run (mpirun, srun) is not resumed; run it again");
    AISP_EXPECTS(!options.artifacts_dir.empty(), "--resume needs --artifacts-dir: the folder of the interrupted run");
    earlier = read_interrupted_run(config.artifacts_dir);
    AISP_EXPECTS(!options.seed || *options.seed == earlier->seed,
                 fmt::format("--resume: the interrupted run drew its inputs from seed {}; --seed {} asks for others", earlier->seed, *options.seed));
    config.seed = earlier->seed;
    const auto before = requests.size();
    std::erase_if(requests, [&](const pair_request& r) { return earlier->finished_targets.contains(r.declared->target()); });
    AISP_EXPECTS(!requests.empty(), "--resume: the interrupted run in " + config.artifacts_dir + " finished every pair it asked: nothing left to judge");
    kept_pairs = before - requests.size();
  }
  for (const auto& plugin : options.plugins) config.plugins.push_back(std::filesystem::canonical(plugin).string());
  config.l2_flush = options.l2_flush;
  config.launch_gate = options.launch_gate;
  const auto system = probe_system();
  if (launch && launch->rank == 0)
    config.launch = open_launch(options.launch, *launch, config.device, static_cast<int>(system.gpus.size()), launch_base);
  if (!options.gpus.empty()) {
    // Note [gpu lanes]. Without a GPU the GPU pairs are skipped anyway: the list is only checked.
    const auto lanes = parse_gpu_lanes(options.gpus, system.gpus.empty() ? max_world_size : static_cast<int>(system.gpus.size()));
    if (!system.gpus.empty()) config.gpu_lanes = lanes;
  }
  // A bad --size, or one that cannot fit, fails before any pair runs (E4 checks again per pair).
  const auto chosen_gpu = static_cast<std::size_t>(std::max(0, config.device));
  check_size_overrides(requests, config,
                       chosen_gpu < system.gpus.size() ? std::optional<std::uint64_t>(system.gpus[chosen_gpu].memory_bytes) : std::nullopt);
  if (config.phase == verify_phase::quarantine) (void)load_quarantine(options.quarantine_file);  // unreadable: fail now
  (void)verify::golden_store(config.golden_file);  // malformed: fail now, not once a pair (a missing file is an empty store)
  if (config.expectations_file.empty()) {
    const auto key = hardware_key_of({{"device", to_json(system)}});
    if (std::filesystem::exists("expectations/" + key + ".json")) config.expectations_file = "expectations/" + key + ".json";
  }
  suite_result header;
  header.aisp_version = aisp_version();
  header.command = command_line;
  header.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  header.artifacts_dir = config.artifacts_dir;
  header.device = to_json(system);
  header.config = {{"mode", timing_mode_name(config.mode)}, {"mode_chosen", config.mode_chosen}, {"seed", config.seed}, {"seed_fixed", options.seed.has_value()}, {"max_time_s", config.stopping.max_time_s},
                   {"min_time_s", config.stopping.min_time_s}, {"min_samples", config.stopping.min_samples},
                   {"target_rel_ci_half_width", options.target_ci}, {"min_effect", options.min_effect},
                   {"worker_timeout_s", options.worker_timeout_s}, {"judge_threads", options.judge_threads}, {"device", options.device}, {"gpus", config.gpu_lanes},
                   {"aa_test", options.aa_test}, {"verify_phase", options.phase},
                   {"verify_only", options.verify_only}, {"targets", options.targets},
                   {"audit", options.audit}, {"trace_dir", config.trace_dir}, {"l2_flush", options.l2_flush},
                   {"launch_gate", options.launch_gate}, {"energy_window_s", options.energy_window_s}, {"plugins", plugins_json()}};
  // `bench verify`'s narrowing flags, only where given (so a run interrupted before they were
  // recorded still resumes): a reader can tell a sanitizer run's scope from its results alone.
  if (options.small_sizes_only || options.validation_sizes_only) header.config["sizes_only"] = options.validation_sizes_only ? "validation" : "small";
  if (options.skip_battery) header.config["skip_battery"] = true;
  if (options.without_baseline) header.config["without_baseline"] = true;
  if (earlier) {  // Note [resumed runs]: the earlier part's seed, and the same run or none
    header.config["seed_fixed"] = earlier->config.value("seed_fixed", false);
    check_same_run(*earlier, header.config, header.device);
    header.carried_pairs = earlier->finished_pairs;
    header.resumed_from = earlier->parts;
    if (!options.quiet)
      std::fprintf(stderr, "[resume] %zu pairs the run started %s finished are kept; %zu left to judge\n", kept_pairs,
                   earlier->parts.back().value("started_at", "").c_str(), requests.size());
  }
  if (launch) header.config["launch_position"] = {{"rank", launch->rank}, {"size", launch->size}, {"local_rank", launch->local_rank}};
  if (config.launch) header.config["launch"] = config.launch->to_json();
  // Every return from here tells the rank hosts the run is over, with its exit code (which counts
  // their shares: the run failed where any launch rank's pairs failed).
  const auto finish = [&](int exit_code) {
    if (!config.launch) return exit_code;
    exit_code = std::max(exit_code, config.launch->await_shares());
    write_judge_launch_manifest(config.artifacts_dir, *config.launch, header.device, exit_code);
    config.launch->finish(exit_code);
    return exit_code;
  };
  // The environment gate and the manifest come first: a run that dies mid-suite still says
  // what it ran on.
  auto environment = read_environment(options.env_profile);
  if (options.verify_only && !config.audit) allow_tools_for_unaudited_checks(environment);  // scripts/sanitize.sh
  if (static_cast<std::size_t>(options.device) < system.gpus.size())
    add_gpu_findings(environment, system.gpus[static_cast<std::size_t>(options.device)].telemetry);
  header.environment = to_json(environment);
  write_json_file(config.artifacts_dir + "/manifest.json",
                  build_manifest({header.device, header.environment, header.config, config.executable}));
  if (environment.failed()) {
    for (const auto& f : environment.findings) {
      if (f.severity == "fail") std::fprintf(stderr, "aisp: environment gate: %s %s\n", f.code.c_str(), f.what.c_str());
    }
    return finish(1);
  }
  // Beside the run's folder: a launch's run folder is launch-rank-0's parent.
  const auto run_folder = launch ? std::filesystem::path(config.artifacts_dir).parent_path() : std::filesystem::path(config.artifacts_dir);
  // A rank host records no history of its own unless told where: `bench merge` folds its folder in.
  const bool no_history = options.history_db == "none" || (launch && launch->rank > 0 && options.history_db.empty());
  const std::string history = no_history ? ""
                              : !options.history_db.empty()
                                  ? options.history_db
                              : std::getenv("AISP_DB") != nullptr && *std::getenv("AISP_DB") != '\0'
                                  ? default_history_db()
                                  : (run_folder.parent_path() / "aisp.db").string();
  suite_outputs outputs{config.artifacts_dir + "/results.json", options.json_path, history};
  // A terminal gets every line; a log (CI) gets each pair's phases indented under its "[i/n]"
  // line, so a long pair shows where it is (a log once held nothing for a pair's minute).
  const bool on_a_terminal = isatty(STDERR_FILENO) != 0;
  const progress_fn progress = [on_a_terminal, &options](const std::string& line) {
    if (options.quiet) return;
    const bool inside_a_pair = !line.starts_with("[");
    std::fprintf(stderr, "%s%s\n", inside_a_pair && !on_a_terminal ? "  " : "", line.c_str());
  };
  const auto suite = run_suite(requests, config, system, header, outputs, progress);
  if (config.phase == verify_phase::quarantine) {
    auto entries = load_quarantine(options.quarantine_file);
    update_quarantine(entries, suite);
    save_quarantine(options.quarantine_file, entries);
  }
  std::printf("%s", render_table(suite).c_str());
  {
    // The portable copy: results.json (every sample), manifest.json, and this report.
    std::ofstream report(config.artifacts_dir + "/report.md");
    report << report_markdown(to_json(suite));
  }
  std::printf("results: %s\n", outputs.results_path.c_str());
  if (suite.interrupted_by != 0) return finish(128 + suite.interrupted_by);  // Note [interrupted runs]
  if (suite.any_failed()) return finish(1);
  // Note [nothing measured]: a run whose every pair was skipped (GPU pairs on a machine without
  // one) measured nothing; exit 0 would let a CI gate that lost its GPU pass. Exit 3, one line.
  if (suite.nothing_measured()) {
    std::fprintf(stderr, "aisp: nothing was measured: all %zu selected pairs were skipped (%s)\n", suite.pairs.size(),
                 suite.pairs.front().message.c_str());
    return finish(3);
  }
  return finish(0);
}

void add_shared_options(CLI::App& command, run_options& options) {
  command.add_option("--targets", options.targets,
                     "all | chNN | chNN:name | chNN:name:variant | labs/<lab>[:name[:variant]], several separated by spaces or commas (default: all; with --plugin or --python, all of their pairs)")
      ->expected(1, -1);
  add_plugin_option(command, options.plugins);
  command.add_option("--json", options.json_path, "also write the results JSON here");
  command.add_option("--artifacts-dir", options.artifacts_dir, "where results and logs go (default: $AISP_ARTIFACTS/run-<time>, else artifacts/run-<time>)");
  command.add_option("--mode", options.mode,
                     "cold: L2 flushed before every sample (the default, but for pairs that declare short calls: graph); "
                     "hot: warm batches, for microsecond kernels; graph: batches replayed from a CUDA graph, the L2 "
                     "flushed before each batch (in both, a few more samples of one call each check that no call "
                     "reused the batch's earlier work: batch-reuse). Given, it applies to every pair")
      ->check(CLI::IsMember({"cold", "hot", "graph"}));
  command.add_option("--seed", options.seed,
                     "seed of the validation-size inputs and of the challenges (default: random, recorded in "
                     "results.json); timed calls always get fresh inputs from the judge's own entropy")
      ->check(unsigned_integer);
  command.add_option("--verify-phase", options.phase,
                     "what a failed check does: detect (record it), quarantine (record it and list the target in "
                     "--quarantine-file), gate (fail the pair and void its verdicts; the default)")
      ->check(CLI::IsMember({"detect", "quarantine", "gate"}));
  command.add_option("--quarantine-file", options.quarantine_file, "the quarantine list (default artifacts/quarantine.json)");
  command.add_option("--worker-timeout", options.worker_timeout_s, "seconds a worker may take to answer one request before it is killed (default 60)")
      ->check(positive_number);
  command.add_option("--judge-threads", options.judge_threads,
                     "host threads of the judge: the variants' workers are verified side by side and fp64 references "
                     "are computed ahead on this many cores (default 0: every core); 1 does one thing at a time, for a "
                     "pair whose reference is not reentrant. Timed samples are never taken side by side")
      ->check(non_negative_number);
  command.add_option("--device", options.device, "CUDA device index (default 0); a multi-GPU pair's ranks use it and the GPUs after it")
      ->check(non_negative_number);
  command.add_option("--gpus", options.gpus,
                     "run single-GPU pairs side by side, one per GPU: all, a count (2: GPUs 0 and 1) or a list (0,2). Each pair "
                     "still has its GPU to itself; host and multi-GPU pairs run afterwards, alone");
  command.add_option("--golden-file", options.golden_file,
                     "stored reference fingerprints; a reference that drifts from its golden is flagged O6 "
                     "(default expectations/goldens.json here, else the one shipped with aisp)");
  command.add_flag("--update-goldens", options.update_goldens, "record the goldens that are missing (never overwrites)");
  command.add_option("--l2-flush", options.l2_flush,
                     "how cold mode flushes the L2 before each sample: read (the default: leaves clean lines) or "
                     "write (the flush before 2026-11-27: leaves the L2 dirty, and the timed call pays ~8 us on an H100 "
                     "writing it back; for comparing with older results). docs/proposals/clean-l2-flush.md")
      ->check(CLI::IsMember({"read", "write"}));
  command.add_flag("--launch-gate,!--no-launch-gate", options.launch_gate,
                   "on by default: queue each cold or hot GPU sample behind a kernel that holds the GPU until the sample is "
                   "queued, as nvbench's blocking kernel does, so the window leaves out the host's launch latency and run()'s "
                   "host work before its first launch (ch16:gemv_fp8_weights: 71.9 us a cold sample ungated, 61.6 us gated, "
                   "H200 2026-12-02). A variant whose run() waits for the GPU, or whose host takes longer to queue a sample "
                   "than the GPU to run it, is sampled ungated from then on (results: gated_samples). Pairs that time the "
                   "host's launches on purpose declare it and are never gated (results: launch_gate_reason). "
                   "--no-launch-gate: every sample as before 2026-12-02. Note [launch gate]");
  command.add_option("--env-profile", options.env_profile,
                     "environment gate: strict (findings fail the run), portable (reported), auto (portable when "
                     "a hypervisor is seen; the default)")
      ->check(CLI::IsMember({"strict", "portable", "auto"}));
  command.add_option("--audit", options.audit,
                     "on (default): the first visit of each variant and about one in three after it run under CUPTI, "
                     "which records every kernel, copy and API call and checks each sample's window (T1, T2, C1, C4, "
                     "C5, C9, L1, L7, W2, W3, X4, X6); those samples are checked, not timed. A worker that cannot be "
                     "audited (CUPTI unavailable or taken, switched off by the pair's code) fails the pair (device-audit). "
                     "off: CUDA events only, recorded in the results")
      ->check(CLI::IsMember({"on", "off"}));
  command.add_option("--trace", options.trace_dir,
                     "write one Chrome/Perfetto trace per pair into this folder (open in ui.perfetto.dev): every "
                     "variant's kernels, copies and phases (setup, warmup, samples, verify). GPU pairs only: a host pair has no "
                     "device timeline, and a line says which get none");
  command.add_option("--energy-window", options.energy_window_s,
                     "seconds each GPU worker runs alone after sampling, read through NVML's energy counter, for "
                     "the energy per call and mean power, opened and closed on the counter's ~100 ms steps (default 0.5; 0 = skip)")
      ->check(number_between(0, 60));
  command.add_option("--size", options.sizes,
                     "replace a benchmark parameter, e.g. --size n=1048576 (repeatable; see `bench list-targets` for the names)");
  command.add_option("--expectations", options.expectations_file,
                     "mark each speedup met/regressed/improved against this file (default: expectations/<hardware>.json "
                     "when it exists; see `bench expectations`)")
      ->check(CLI::ExistingFile);
  command.add_option("--history", options.history_db,
                     "the SQLite results history (default: $AISP_DB, else aisp.db beside the artifacts folder, e.g. artifacts/aisp.db); "
                     "none = do not record");
  command.add_flag("--resume", options.resume,
                   "finish the interrupted run (Ctrl-C, SIGTERM) in --artifacts-dir: the pairs it finished are kept as measured, "
                   "the rest are judged now, and results.json holds both (resumed_from names the parts). Only the same run "
                   "resumes: the same options and machine; its seed is reused. Note [resumed runs]");
  command.add_flag("--quiet", options.quiet, "no progress lines");
  add_launch_options(command, options.launch);
  command.footer(launch_help);
}

}  // namespace

void add_bench_run_commands(CLI::App& bench, outcome& result) {
  auto* run = bench.add_subcommand(
      "run",
      "Time pairs interleaved (A B B A) in worker processes, verify them against the fp64 reference and\n"
      "each other with the full challenge battery, and give each candidate a speedup with a bootstrap 95% CI and\n"
      "a verdict that never claims more than the measured noise floor (baseline vs itself). Exit 1 if anything failed.");
  auto options = std::make_shared<run_options>();
  add_shared_options(*run, *options);
  run->add_option("--max-time", options->max_time_s, "seconds of sampling per variant before giving up on the CI target (default 5; 15 for nvbench's patience); a variant short of --min-samples whose pace reaches it by 6x this samples on (calls of 0.5-2.5 s at the default)")
      ->check(positive_number);
  run->add_option("--min-time", options->min_time_s, "seconds of sampling per variant (visits, fills and flushes included) before stopping may be considered (default 0.25)")
      ->check(non_negative_number);
  run->add_option("--min-samples", options->min_samples, "samples per variant before stopping may be considered (default and least 10: S5)")
      ->check(non_negative_number);
  run->add_option("--target-ci", options->target_ci, "stop when the 95% CI half-width of the median is below this fraction of it (default 0.005; the trimmed mean's must be within 5%, from 20 samples)")
      ->check(positive_number);
  run->add_option("--min-effect", options->min_effect,
                  "smallest speedup worth a verdict, as a fraction (default 0.01): identical variants in two processes "
                  "differ by up to 0.4% on an H100")
      ->check(non_negative_number);
  run->add_flag("--aa-test", options->aa_test, "run the baseline in the candidate's slot: a correct harness says no-difference");
  run->callback([options, &result] { result.exit_code = run_bench(*options, result.command_line); });

  auto* verify = bench.add_subcommand(
      "verify", "Run only the checks (reference, challenge battery, verified timed calls), with a token of sampling:\n"
                "the fast edit-and-check loop. No speedups are claimed.");
  auto verify_options = std::make_shared<run_options>();
  verify_options->verify_only = true;
  add_shared_options(*verify, *verify_options);
  verify->add_flag("--small-sizes-only", verify_options->small_sizes_only,
                   "stop after the validation and held-out sizes and the challenge battery: no benchmark-size call. "
                   "For tools that slow every kernel down, e.g. scripts/sanitize.sh (compute-sanitizer memcheck, racecheck)");
  verify->add_flag("--validation-sizes-only", verify_options->validation_sizes_only,
                   "as --small-sizes-only, without the held-out sizes: only the validation sizes and the battery "
                   "(on the largest validation size). scripts/sanitize.sh's default: held-out sizes can be large "
                   "enough to take a sanitizer hours");
  verify->add_flag("--skip-battery", verify_options->skip_battery,
                   "with --small-sizes-only or --validation-sizes-only: the sizes' reference checks alone, no "
                   "challenge battery. For racecheck, where every battery call of a shared-memory GEMM costs minutes");
  verify->add_flag("--without-baseline", verify_options->without_baseline,
                   "with --validation-sizes-only and --skip-battery: the baseline and its twin are not started; each "
                   "variant named (chNN:name:variant) is checked against the fp64 reference alone. For a sanitizer on "
                   "your kernel when the baseline is a library's the sanitizer cannot run (compute-sanitizer racecheck "
                   "faulted in cuBLAS's kernels under ch15:moe_grouped_gemm, H100, 2026-12-06)");
  verify->callback([verify_options, &result] { result.exit_code = run_bench(*verify_options, result.command_line); });
}

}  // namespace aisp::cli
