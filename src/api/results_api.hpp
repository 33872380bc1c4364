// The results API (issue 23): one library layer that answers, as JSON, the questions the CLI, the
// MCP server and (later) `aisp serve` ask of the registry, the history and the validity matrix.
// Its callers format; they never read SQLite or results.json themselves. Every function is
// read-only. A question that names something that is not there (a run id, a target of a run, a
// check) throws api_error with one line a person or an agent can act on.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "history/history_store.hpp"
#include "history/run_comparison.hpp"

namespace aisp::api {

// Bad input (a question about something that is not there): the CLI's one-line error, exit 2.
class api_error : public contract_error {
 public:
  using contract_error::contract_error;
};

// Which runs `list_runs` keeps. Empty strings keep everything.
struct run_filter {
  std::string target;  // runs holding this pair ("labs/host:transpose")
  std::string gpu;     // a part of the GPU's name or the hardware key, any case ("h100", "H100 80GB")
  std::string since;   // ISO 8601 prefix: runs started on or after ("2026-11-01")
  std::string until;   // ISO 8601 prefix: runs started on or before, the whole day/month it names included
  int limit = 50;      // newest first; at most this many
};

// --- the registry and the validity matrix (target_catalogue.cpp) ---

// The registered pairs, as `bench list-targets --json` lists them; `group` keeps one chapter or lab.
[[nodiscard]] nlohmann::json list_targets(std::string_view group = "");
// The validity matrix's rows for a code ("S2", any case) or a check's name ("outliers").
[[nodiscard]] nlohmann::json validity_rows(std::string_view query);

// --- the history (results_api.cpp) ---

// Opens a history database that already exists: a read-only question never creates one.
[[nodiscard]] history_store open_history(const std::string& path);
// For the servers (serve, mcp), at start: a history file that exists must open (a corrupt or
// foreign file, or a folder, is refused then, not at a client's first request); a missing one
// is an empty history until a run records into it.
void check_history_if_present(const std::string& path);

// Runs, newest first: id, started_at, state, gpu, hardware, artifacts_dir, git_sha, pair count
// (and, with a target, that pair's status and speedups).
[[nodiscard]] nlohmann::json list_runs(history_store& history, const run_filter& filter);
// One run: its header (command, device, config) and per pair the verdicts, speedup CIs, medians,
// SOL and the failed checks with their codes.
[[nodiscard]] nlohmann::json show_run(history_store& history, std::int64_t run);
// One pair of a run: its stored result (checks, device audit, roofline...) with each variant's
// stored samples summarized (and listed, with `with_samples`).
[[nodiscard]] nlohmann::json show_pair(history_store& history, std::int64_t run, const std::string& target, bool with_samples);
// Run B against run A, per target and variant, both ids checked (an unknown one is an api_error):
// what `bench compare-runs` prints, and `compare` answers as JSON.
[[nodiscard]] run_comparison compare_checked(history_store& history, std::int64_t run_a, std::int64_t run_b);
// `bench compare-runs A B --json`.
[[nodiscard]] nlohmann::json compare(history_store& history, std::int64_t run_a, std::int64_t run_b);
// A target across runs, newest first: per run its status, medians and speedups, each speedup
// marked regressed when its expectation says so.
[[nodiscard]] nlohmann::json target_history(history_store& history, const std::string& target, int limit);

// The Chrome/Perfetto trace `bench run --trace DIR` stored for a pair of a run: the file's path,
// "" when the run stored none (show_pair says `trace: true` when there is one).
[[nodiscard]] std::string pair_trace_path(history_store& history, std::int64_t run, const std::string& target);
// That trace's JSON; api_error when none was stored.
[[nodiscard]] nlohmann::json pair_trace(history_store& history, std::int64_t run, const std::string& target);
// A run's roofline: per pair its arithmetic intensity, the ceilings it was judged against, its
// bound and ridge point, and per variant the achieved bytes/s and FLOP/s with their SOL %.
[[nodiscard]] nlohmann::json run_roofline(history_store& history, std::int64_t run);

// --- expectations (expectation_bands.cpp) ---

// What `dir`/<key>.json expects of `target` on each hardware key: {key: {variant: {speedup
// {point, low, high}, band {low, high}, median_s, provenance}}}, the band being the speedup CI
// widened by expectation_tolerance, inside which a run is "met". Keys without an entry are left out.
[[nodiscard]] nlohmann::json target_expectations(const std::string& target, const std::vector<std::string>& hardware_keys,
                                                 const std::string& dir);

// --- files outside the history (run_files.cpp) ---

// A run's results.json, summarized as show_run summarizes a stored run: per pair the status, the
// verdicts with their CIs and statistic, and the failed checks with their codes.
[[nodiscard]] nlohmann::json summarize_results(const std::string& results_path);
// The ceilings `aisp hw` measured and cached on this machine, one entry per card and driver:
// uuid, driver, the file and the ceilings (bytes/s and FLOP/s); empty when none were measured.
[[nodiscard]] nlohmann::json hardware_ceilings();
// A stored `aisp profile ncu` run (its profile.json or folder), every kernel judged again by this
// build's bottleneck classifier; only `target` when given (profile_report.cpp).
[[nodiscard]] nlohmann::json profile_report(const std::string& where, const std::string& target);

}  // namespace aisp::api
