// Every registered pair, in target order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "aisp/pair.hpp"

namespace aisp {

class registry {
 public:
  static registry& instance();
  // A duplicate target or a broken contract is recorded in broken(), never thrown: this runs
  // during static initialization, where an exception would abort the program.
  void add(pair declared);
  [[nodiscard]] const std::vector<pair>& pairs() const { return pairs_; }
  [[nodiscard]] const std::vector<std::string>& broken() const { return broken_; }
  [[nodiscard]] const pair* find(std::string_view target) const;

 private:
  std::vector<pair> pairs_;
  std::vector<std::string> broken_;
};

}  // namespace aisp
