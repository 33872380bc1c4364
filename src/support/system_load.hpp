// The machine's CPU time across all its CPUs, for Note [contended visits]
// (runner/contention_check.cpp): what else ran while a variant was timed.
#pragma once

#include <optional>

namespace aisp {

// CPU seconds every CPU of the machine has spent busy since boot (user, nice, system, irq and
// softirq in /proc/stat; guest time is inside user), or nothing where /proc/stat is unreadable.
// The kernel counts in clock ticks (10 ms at USER_HZ 100): a difference is good to a tick a CPU.
[[nodiscard]] std::optional<double> machine_busy_cpu_s();

}  // namespace aisp
