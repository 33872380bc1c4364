// What a variant wrote down through run_context::note() in setup(): a few short keyed texts
// (the algorithm a library peer autotuned to) that travel from the worker into results.json.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace aisp {

class variant_notes {
 public:
  // Adds or replaces `key`; contract_error outside the bounds of aisp/run_context.hpp.
  void add(std::string_view key, std::string_view value);
  [[nodiscard]] const std::map<std::string, std::string>& all() const { return notes_; }

 private:
  std::map<std::string, std::string> notes_;
};

}  // namespace aisp
