// A pair as data, for Note [untrusted pairs] (pair_host.cpp): what a plugin's pair declares,
// written by the pair host that loaded it and read back by the judge, which never loads it. The
// declaration holds every field but the functions; an evaluation holds what the functions give
// at one workload (buffer sizes, work, items, passes, collectives). Both ends are the same
// executable, so enums travel as their numbers.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "aisp/pair.hpp"

namespace aisp {

[[nodiscard]] nlohmann::json declaration_of(const pair& declared);
[[nodiscard]] nlohmann::json evaluation_of(const pair& declared, const workload& work);

// What the judge's copy of a pair asks its host for: an evaluation at a workload, and a reference.
struct pair_functions {
  std::function<nlohmann::json(const workload&)> evaluate;
  reference_fn reference;
};

// The judge's copy of a declared pair: every field from `declaration`, every function through
// `functions`. Its variants' stages refuse to run: variants run in workers, which load the plugin.
[[nodiscard]] pair pair_from_declaration(const nlohmann::json& declaration, pair_functions functions);

}  // namespace aisp
