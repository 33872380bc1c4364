// A clock's reading in seconds (clock_gettime: monotonic, process or thread CPU time). Safe in a
// signal handler, as clock_gettime is.
#pragma once

#include <ctime>

namespace aisp {

[[nodiscard]] inline double clock_seconds(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace aisp
