#include "audit/library_precision.hpp"

#include <algorithm>
#include <mutex>
#include <utility>

namespace aisp {
namespace {

std::mutex& noted_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<std::string>& noted() {
  static std::vector<std::string> seen;
  return seen;
}

}  // namespace

void note_library_precision(std::string what) {
  const std::lock_guard lock(noted_mutex());
  auto& seen = noted();
  if (std::find(seen.begin(), seen.end(), what) == seen.end()) seen.push_back(std::move(what));
}

std::vector<std::string> take_library_precision() {
  const std::lock_guard lock(noted_mutex());
  return std::exchange(noted(), {});
}

}  // namespace aisp
