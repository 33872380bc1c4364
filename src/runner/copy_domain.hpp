// Note [a copy's domain] (copy_domain.cpp): which derived copies a wide level carries past their
// type's range, and whether a variant answers from such a copy (the level is then not its domain).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/verification_phase.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {

struct variant_slot;

// The derived inputs `level` would carry past their type's largest value (an fp8 or int8 copy
// scaled for [-1, 1)), in declaration order.
[[nodiscard]] std::vector<std::string> overflowing_derived_inputs(const pair& declared, input_values level);

// One variant's answer to "does it answer from this copy?", asked at most once a copy: its
// outputs move (past its tolerance) when the copy alone is drawn again, and stay when the source
// moves within the copy's rounding. Two verified calls a copy, four for a variant that reads it,
// at the size the slot has loaded (the battery's).
class copy_readers {
 public:
  copy_readers(const judge_scope& scope, variant_slot& slot) : scope_(scope), slot_(slot) {}
  [[nodiscard]] bool answers_from(const std::string& copy);

 private:
  const judge_scope& scope_;
  variant_slot& slot_;
  std::map<std::string, bool> known_;
};

}  // namespace aisp
