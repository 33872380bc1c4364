#include "aisp/registry.hpp"

#include <algorithm>
#include <exception>

#include "aisp/check.hpp"

namespace aisp {

registry& registry::instance() {
  static registry the_registry;
  return the_registry;
}

void registry::add(pair declared) {
  try {
    declared.validate();
    AISP_EXPECTS(find(declared.target()) == nullptr,
                 "target " + declared.target() + " is registered twice");
  } catch (const std::exception& error) {
    broken_.emplace_back(error.what());
    return;
  }
  const auto position = std::upper_bound(
      pairs_.begin(), pairs_.end(), declared.target(),
      [](const std::string& target, const pair& p) { return target < p.target(); });
  pairs_.insert(position, std::move(declared));
}

const pair* registry::find(std::string_view target) const {
  for (const auto& p : pairs_) {
    if (p.target() == target) return &p;
  }
  return nullptr;
}

}  // namespace aisp
