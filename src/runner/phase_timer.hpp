// Where a pair's wall time goes (issue 17): each lap records the time since the previous one
// under a phase name, into the pair's result.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace aisp {

class phase_timer {
 public:
  explicit phase_timer(std::vector<std::pair<std::string, double>>& into) : into_(&into), last_(clock::now()) {}
  void lap(std::string phase) {
    const auto now = clock::now();
    into_->emplace_back(std::move(phase), std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  using clock = std::chrono::steady_clock;
  std::vector<std::pair<std::string, double>>* into_;
  clock::time_point last_;
};

}  // namespace aisp
