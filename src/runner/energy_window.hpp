// One energy window aligned on the edges of NVML's energy counter (Note [energy window edges]).
#pragma once

#include <functional>
#include <optional>

namespace aisp {

struct energy_window_probe {
  std::function<std::optional<double>()> read_joules;  // the counter now; nullopt when unreadable
  std::function<int()> run_visit;                      // one visit of samples; returns its calls
  std::function<double()> now_s;                       // a steady clock
  std::function<void()> pause;                         // a short sleep between polls
};

struct energy_window_result {
  double joules = 0;
  double seconds = 0;  // from the counter's first step to its last
  int calls = 0;
};

// Waits (at most `max_wait_s`) for the counter to step, runs visits for at least `min_window_s`,
// then until the counter steps again. nullopt when the counter never moved or could not be read.
[[nodiscard]] std::optional<energy_window_result> measure_aligned_energy(const energy_window_probe& probe,
                                                                         double min_window_s, double max_wait_s);

}  // namespace aisp
