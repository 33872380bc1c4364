// Expectations (`expectations/<hardware>.json`): per target and variant, the median, speedup with
// its CI, SOL %, ratio to the peer and recorded metrics' tail ratios of a trusted run, with its
// provenance (date, card, driver, sample count).
// A new run is marked against them, noise-aware: `regressed` when its speedup CI lies wholly
// below the expected CI less expectation_tolerance, `improved` when wholly above it plus the
// tolerance, `met` otherwise (Note [expectation tolerance] in expectations.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aisp {

// The card-to-card margin around an expected CI (3%).
inline constexpr double expectation_tolerance = 0.03;

// Reads an expectations file; an absent file is an empty set. history_error (one line) when
// the file is malformed.
[[nodiscard]] nlohmann::json load_expectations(const std::string& path, const std::string& hardware);
void save_expectations(const std::string& path, const nlohmann::json& expectations);

// A variant's recorded metrics (its goal_metrics' "recorded"), or null.
[[nodiscard]] nlohmann::json recorded_metrics_of(const nlohmann::json& goal_metrics);

// Adds or replaces the entries of every passing, verified candidate of `results` whose speedup
// CI low is at least `min_speedup`; returns how many entries were written.
int update_expectations(nlohmann::json& expectations, const nlohmann::json& results, double min_speedup);

// "met", "regressed", "improved", or "new" (no entry) for one speedup of one target. With the
// variant's ratio to its library peer (`vs_peer`: point, low, high) and an expected one, a ratio
// CI wholly below the expected is "regressed vs peer" whatever the speedup says, and one wholly
// above, with the speedup met, "improved vs peer". With the variant's median (seconds, 0 when
// unknown), a speedup below the expected one while the variant kept its recorded time is
// "baseline moved" (Note [baseline moved]), not a regression. With the variant's recorded
// metrics (goal_metrics.recorded) and expected tail ratios, a metric's p99 ratio CI wholly below
// the expected is "regressed <metric> p99" (Note [tail expectations]).
[[nodiscard]] std::string mark_against(const nlohmann::json& expectations, const std::string& target,
                                       const std::string& variant, double low, double high,
                                       const nlohmann::json& vs_peer = nullptr, double median_s = 0,
                                       const nlohmann::json& recorded = nullptr);

}  // namespace aisp
