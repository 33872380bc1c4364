#include "history/history_store.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hw/datasheet.hpp"

namespace aisp {
namespace {

using nlohmann::json;

// Schema migrations, in order: entry i brings the schema from version i to i + 1.
const std::vector<const char*>& migrations() {
  static const std::vector<const char*> steps{
      R"(CREATE TABLE runs(id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, artifacts_dir TEXT NOT NULL,
             aisp_version TEXT, git_sha TEXT, gpu_name TEXT, gpu_uuid TEXT, driver INTEGER, hardware TEXT,
             state TEXT NOT NULL, header_json TEXT NOT NULL, UNIQUE(artifacts_dir, started_at));
         CREATE TABLE pairs(id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
             target TEXT NOT NULL, status TEXT, result_json TEXT NOT NULL, UNIQUE(run_id, target));
         CREATE TABLE samples(pair_id INTEGER NOT NULL REFERENCES pairs(id) ON DELETE CASCADE, variant TEXT NOT NULL,
             seq INTEGER NOT NULL, duration_s REAL NOT NULL);
         CREATE INDEX pairs_by_target ON pairs(target);
         CREATE INDEX samples_by_pair ON samples(pair_id, variant);)"};
  return steps;
}

// The pair document without its raw samples (they live in the samples table).
json without_samples(json pair) {
  for (auto& v : pair["variants"]) {
    v.erase("samples_s");
    v.erase("sample_host_wall_s");
    v.erase("sample_sm_clock_mhz");
  }
  return pair;
}

}  // namespace

std::string hardware_key_of(const json& results) {
  const auto gpu = primary_gpu(results);
  if (gpu.empty()) return "host";
  const auto* sheet = datasheet_for_device(gpu.value("name", ""));
  return sheet != nullptr ? sheet->key : "unknown";
}

history_store::history_store(const std::string& path) : db_(path) { migrate(); }

int history_store::schema_version() {
  auto statement = db_.prepare("PRAGMA user_version");
  return statement.step() ? static_cast<int>(statement.integer(0)) : 0;
}

void history_store::migrate() {
  const int version = schema_version();
  if (version == 0) {  // aisp makes its tables only in an empty database, never beside someone else's
    std::string others;
    auto tables = db_.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (tables.step()) others += (others.empty() ? "" : ", ") + tables.text(0);
    if (!others.empty())
      throw history_error(fmt::format("{} is not an aisp history database (it holds other tables: {}); pass another --db or --history",
                                      db_.path(), others));
  }
  if (version > static_cast<int>(migrations().size()))
    throw history_error(fmt::format("history database {} has schema {}, newer than this aisp ({})", db_.path(), version,
                                    migrations().size()));
  for (int step = version; step < static_cast<int>(migrations().size()); ++step) {
    sqlite_transaction transaction(db_);
    db_.execute(migrations()[static_cast<std::size_t>(step)]);
    db_.execute(fmt::format("PRAGMA user_version={}", step + 1));
    transaction.commit();
  }
}

std::int64_t history_store::begin_run(const json& header) {
  sqlite_transaction transaction(db_);
  const auto id = insert_run(header);
  transaction.commit();
  return id;
}

std::int64_t history_store::insert_run(const json& header) {
  const json gpu = primary_gpu(header);
  db_.prepare("INSERT INTO runs(started_at, artifacts_dir, aisp_version, git_sha, gpu_name, gpu_uuid, driver, hardware, state, header_json)"
              " VALUES(?,?,?,?,?,?,?,?,'running',?)")
      .bind(1, header.value("started_at", ""))
      .bind(2, header.value("artifacts_dir", ""))
      .bind(3, header.value("aisp_version", ""))
      .bind(4, header.value("git", json::object()).value("sha", ""))  // the results document's git.sha
      .bind(5, gpu.value("name", ""))
      .bind(6, gpu.value("uuid", ""))
      .bind(7, std::int64_t{header.value("device", json::object()).value("cuda_driver_version", 0)})
      .bind(8, hardware_key_of(header))
      .bind(9, header.dump())
      .run();
  return db_.last_insert_id();
}

void history_store::add_pair(std::int64_t run, const json& pair) {
  sqlite_transaction transaction(db_);
  insert_pair(run, pair);
  transaction.commit();
}

void history_store::insert_pair(std::int64_t run, const json& pair) {
  db_.prepare("INSERT OR REPLACE INTO pairs(run_id, target, status, result_json) VALUES(?,?,?,?)")
      .bind(1, run)
      .bind(2, pair.value("target", ""))
      .bind(3, pair.value("status", ""))
      .bind(4, without_samples(pair).dump())
      .run();
  const auto pair_id = db_.last_insert_id();
  auto insert = db_.prepare("INSERT INTO samples(pair_id, variant, seq, duration_s) VALUES(?,?,?,?)");
  for (const auto& v : pair.value("variants", json::array())) {
    std::int64_t seq = 0;
    for (const auto& s : v.value("samples_s", json::array())) {
      insert.bind(1, pair_id).bind(2, v.value("name", "")).bind(3, seq++).bind(4, s.get<double>()).run();
      insert.reset();
    }
  }
}

std::string run_state_of(const json& results) {
  if (results.contains("interrupted_by")) return "interrupted";
  const auto& pairs = results.value("pairs", json::array());
  if (std::any_of(pairs.begin(), pairs.end(), [](const json& p) { return p.value("status", "") == "fail"; })) return "failed";
  if (!pairs.empty() && std::all_of(pairs.begin(), pairs.end(), [](const json& p) { return p.value("status", "") == "skip"; }))
    return "skipped";
  return "complete";
}

void history_store::finish_run(std::int64_t run, const std::string& state) {
  db_.prepare("UPDATE runs SET state=? WHERE id=?").bind(1, state).bind(2, run).run();
}

std::int64_t history_store::ingest(const json& results) {
  auto existing = db_.prepare("SELECT id FROM runs WHERE artifacts_dir=? AND started_at=?");
  existing.bind(1, results.value("artifacts_dir", "")).bind(2, results.value("started_at", ""));
  if (existing.step()) return existing.integer(0);
  json header = results;
  header.erase("pairs");
  sqlite_transaction transaction(db_);  // a whole run or nothing
  const auto run = insert_run(header);
  for (const auto& pair : results.value("pairs", json::array())) insert_pair(run, pair);
  db_.prepare("UPDATE runs SET state=? WHERE id=?").bind(1, run_state_of(results)).bind(2, run).run();
  transaction.commit();
  return run;
}

json history_store::runs(const std::string& target) {
  json out = json::array();
  auto statement = db_.prepare(
      "SELECT r.id, r.started_at, r.state, r.gpu_name, r.gpu_uuid, r.driver, r.hardware, r.artifacts_dir, r.git_sha,"
      " (SELECT COUNT(*) FROM pairs p WHERE p.run_id=r.id), (SELECT p.result_json FROM pairs p WHERE p.run_id=r.id AND p.target=?)"
      " FROM runs r ORDER BY r.id DESC");
  statement.bind(1, target);
  while (statement.step()) {
    if (!target.empty() && statement.text(10).empty()) continue;
    json row = {{"id", statement.integer(0)}, {"started_at", statement.text(1)}, {"state", statement.text(2)},
                {"gpu", statement.text(3)}, {"gpu_uuid", statement.text(4)}, {"driver", statement.integer(5)},
                {"hardware", statement.text(6)}, {"artifacts_dir", statement.text(7)}, {"git_sha", statement.text(8)},
                {"pairs", statement.integer(9)}};
    if (!target.empty()) row["result"] = json::parse(statement.text(10));
    out.push_back(row);
  }
  return out;
}

std::optional<json> history_store::run_header(std::int64_t run) {
  auto statement = db_.prepare("SELECT header_json, state FROM runs WHERE id=?");
  statement.bind(1, run);
  if (!statement.step()) return std::nullopt;
  auto header = json::parse(statement.text(0));
  header["state"] = statement.text(1);
  return header;
}

std::vector<json> history_store::pairs_of(std::int64_t run) {
  std::vector<json> pairs;
  auto statement = db_.prepare("SELECT result_json FROM pairs WHERE run_id=? ORDER BY id");
  statement.bind(1, run);
  while (statement.step()) pairs.push_back(json::parse(statement.text(0)));
  return pairs;
}

std::vector<double> history_store::samples(std::int64_t run, const std::string& target, const std::string& variant) {
  std::vector<double> values;
  auto statement = db_.prepare(
      "SELECT s.duration_s FROM samples s JOIN pairs p ON p.id=s.pair_id WHERE p.run_id=? AND p.target=? AND s.variant=? ORDER BY s.seq");
  statement.bind(1, run).bind(2, target).bind(3, variant);
  while (statement.step()) values.push_back(statement.real(0));
  return values;
}

}  // namespace aisp
