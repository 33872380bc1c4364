// Note [sampled fp mode] (fp_mode_sampler.cpp): the serving thread's floating-point mode, read
// from inside its timed calls by a timer's signal.
#pragma once

#include <cstdint>
#include <vector>

namespace aisp {

struct fp_mode_samples {
  std::uint64_t taken = 0;        // signals handled while armed
  std::vector<unsigned> modes;    // the distinct modes they found (floating_point_mode's bits)
  std::uint64_t armed_windows = 0;  // windows a signal was set to land in
};

// Creates the calling thread's sampling timer and installs the handler, once; false where the
// platform has none (not x86-64 Linux) or a call failed.
bool start_fp_mode_sampler();
// A sample request's sampling: begun (counts reset), then windows drawn at random get a signal
// at a random point inside (opened just before the timed span, closed just after), then ended
// with what it found.
void begin_fp_mode_sampling();
void open_fp_mode_window();
void close_fp_mode_window();
fp_mode_samples end_fp_mode_sampling();
// The timer's id in /proc/self/timers, or -1: the harness's own, not a variant's (Note [armed timers]).
[[nodiscard]] long fp_mode_sampler_timer_id();

// A thread set this many signals inside its windows that took none kept them out.
inline constexpr std::uint64_t fp_mode_unsampled_windows = 8;

}  // namespace aisp
