#include "runner/energy_window.hpp"

namespace aisp {

// Note [energy window edges]: NVML's energy counter steps every ~100 ms on the H100 (measured
// 2026-11-27: 20 steps in 2 s, idle and loaded), so a window whose ends fall anywhere between
// steps is off by up to a step at each end: ±20% for 1 s. Here the window opens on a step (the
// judge polls the counter until it moves, then starts the first visit) and closes on one (after
// `min_window_s`, visits go on until a visit ends with the counter moved). What is left is the
// part of the last visit after the step, at most one visit (~20 ms) of a ~0.5 s window.
std::optional<energy_window_result> measure_aligned_energy(const energy_window_probe& probe, double min_window_s,
                                                           double max_wait_s) {
  const auto first = probe.read_joules();
  if (!first) return std::nullopt;
  const double wait_until = probe.now_s() + max_wait_s;
  double opened_joules = *first;
  for (;;) {
    const auto reading = probe.read_joules();
    if (!reading) return std::nullopt;
    if (*reading != *first) {
      opened_joules = *reading;
      break;
    }
    if (probe.now_s() > wait_until) return std::nullopt;  // a counter that does not move
    probe.pause();
  }
  const double opened_s = probe.now_s();
  energy_window_result result;
  double last_joules = opened_joules;
  for (;;) {
    result.calls += probe.run_visit();
    const auto reading = probe.read_joules();
    if (!reading) return std::nullopt;
    const double elapsed = probe.now_s() - opened_s;
    const bool stepped = *reading != last_joules;
    last_joules = *reading;
    if (elapsed >= min_window_s && stepped) {
      result.seconds = elapsed;
      break;
    }
    if (elapsed > min_window_s + max_wait_s) return std::nullopt;  // stopped moving mid-window
  }
  result.joules = last_joules - opened_joules;
  if (result.joules <= 0 || result.calls <= 0) return std::nullopt;
  return result;
}

}  // namespace aisp
