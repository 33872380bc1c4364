// The results history (architecture §8): every run in an embedded SQLite database, WAL-journaled,
// with versioned schema migrations. A run is registered when it starts; each pair is stored in
// one transaction as it finishes, so a run killed mid-suite keeps its finished pairs and is left
// marked "running". The artifact folder stays the portable copy; `ingest` reads one back in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/sqlite_db.hpp"
#include "results/result_json.hpp"  // primary_gpu

namespace aisp {

inline constexpr int history_schema_version = 1;

// A finished run's state from its results: interrupted, failed (a pair failed), skipped (every
// pair skipped: nothing measured) or complete. `bench merge` records a run by it, as `bench run`
// records it from its suite_result (any_failed, nothing_measured).
[[nodiscard]] std::string run_state_of(const nlohmann::json& results);

class history_store {
 public:
  // Opens or creates the database and migrates it; history_error (one line) when it cannot.
  explicit history_store(const std::string& path);

  // `header`: a results document without pairs (started_at, device, config, artifacts_dir...).
  std::int64_t begin_run(const nlohmann::json& header);
  void add_pair(std::int64_t run, const nlohmann::json& pair);
  void finish_run(std::int64_t run, const std::string& state);  // complete | failed | skipped | interrupted
  // A whole results.json in one transaction (merge, or a run recorded without history).
  // Returns the run id; a run already stored (same artifacts folder and start) is skipped.
  std::int64_t ingest(const nlohmann::json& results);

  // Every run, newest first: id, started_at, state, gpu, hardware, artifacts_dir, pair count;
  // with `target`, only runs holding it, each with that pair's variants and speedups.
  [[nodiscard]] nlohmann::json runs(const std::string& target = "");
  [[nodiscard]] std::optional<nlohmann::json> run_header(std::int64_t run);
  // The stored pair results of a run, keyed by target.
  [[nodiscard]] std::vector<nlohmann::json> pairs_of(std::int64_t run);
  [[nodiscard]] std::vector<double> samples(std::int64_t run, const std::string& target, const std::string& variant);
  [[nodiscard]] int schema_version();

 private:
  void migrate();
  // The statements of begin_run and add_pair, inside a transaction the caller holds.
  std::int64_t insert_run(const nlohmann::json& header);
  void insert_pair(std::int64_t run, const nlohmann::json& pair);
  sqlite_db db_;
};

// "h100", "h200", ... from a results document's first GPU; "host" without one.
[[nodiscard]] std::string hardware_key_of(const nlohmann::json& results);

}  // namespace aisp
