// Note [slow worker clock] (runner/sampling_rounds.cpp): the CPU's timestamp counter, a clock no
// variant code in the worker can redirect (its clock_gettime can be: the vDSO pointer glibc keeps
// in writable memory), read beside the host sampler's own clock.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace aisp {

// The counter's ticks (rdtsc), inlined at the read; 0 on a machine without one.
[[nodiscard]] inline std::uint64_t timestamp_counter() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

// Whether the counter runs at one rate on every core and through idle states (constant_tsc and
// nonstop_tsc in /proc/cpuinfo): without both its ticks do not measure time.
[[nodiscard]] bool timestamp_counter_is_invariant();

// The counter's ticks a second, measured in this process against its steady clock since its
// start (a reading taken when the program loaded); 0 when under 50 ms have passed or there is no
// invariant counter.
[[nodiscard]] double timestamp_counter_rate();

}  // namespace aisp
