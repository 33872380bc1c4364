#include "verify/golden_store.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "aisp/check.hpp"
#include "support/seeded_fill.hpp"

namespace aisp::verify {

golden_fingerprint fingerprint_of(const std::vector<double>& reference, std::uint64_t seed) {
  golden_fingerprint fingerprint;
  fingerprint.elements = reference.size();
  fingerprint.positions = probe_positions(seed, reference.size(), 32);
  for (std::size_t p : fingerprint.positions) fingerprint.values.push_back(reference[p]);
  return fingerprint;
}

std::string golden_drift(const golden_fingerprint& golden, const golden_fingerprint& current) {
  if (golden.elements != current.elements)
    return fmt::format("{} elements now, {} in the golden", current.elements, golden.elements);
  if (golden.positions != current.positions) return "sampled positions differ from the golden";
  for (std::size_t j = 0; j < golden.values.size(); ++j) {
    const double want = golden.values[j];
    const double got = current.values[j];
    if (!(std::abs(got - want) <= 1e-9 * std::max(1.0, std::abs(want))))
      return fmt::format("reference[{}] = {:.17g}, golden {:.17g}", golden.positions[j], got, want);
  }
  return "";
}

golden_store::golden_store(std::string path) : path_(std::move(path)) {
  std::ifstream file(path_);
  if (!file.good()) return;
  const auto document = nlohmann::json::parse(file, nullptr, false);
  AISP_EXPECTS(!document.is_discarded() && document.is_object() && document.contains("goldens") && document.at("goldens").is_object(),
               "malformed golden file " + path_ + " (want an object with \"goldens\")");
  for (const auto& [key, entry] : document.at("goldens").items()) {
    try {
      entries_[key] = {entry.at("elements").get<std::size_t>(), entry.at("positions").get<std::vector<std::size_t>>(),
                       entry.at("values").get<std::vector<double>>()};
    } catch (const nlohmann::json::exception&) {  // a wrong shape is the file's fault: say which entry
      throw contract_error("malformed golden file " + path_ + ": entry '" + key +
                           "' wants \"elements\" (a count), \"positions\" (counts) and \"values\" (numbers)");
    }
  }
}

const golden_fingerprint* golden_store::find(const std::string& key) const {
  const auto found = entries_.find(key);
  return found == entries_.end() ? nullptr : &found->second;
}

void golden_store::put(const std::string& key, golden_fingerprint fingerprint) { entries_[key] = std::move(fingerprint); }

void golden_store::save() const {
  nlohmann::json goldens = nlohmann::json::object();
  for (const auto& [key, g] : entries_) {
    goldens[key] = {{"elements", g.elements}, {"positions", g.positions}, {"values", g.values}};
  }
  const auto parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream file(path_ + ".tmp");
  file << nlohmann::json{{"schema", "aisp.goldens"}, {"schema_version", 1}, {"goldens", goldens}}.dump(1) << '\n';
  file.close();
  AISP_EXPECTS(std::rename((path_ + ".tmp").c_str(), path_.c_str()) == 0, "cannot write " + path_);
}

std::string golden_store::key(const std::string& target, const std::string& workload, const std::string& output,
                              std::uint64_t seed) {
  return fmt::format("{}|{}|{}|seed={}", target, workload, output, seed);
}

}  // namespace aisp::verify
