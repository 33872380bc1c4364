#include "results/pair_result.hpp"

namespace aisp {

bool suite_result::any_failed() const {
  for (const auto& p : pairs) {
    if (p.status == "fail") return true;
  }
  return false;
}

}  // namespace aisp
