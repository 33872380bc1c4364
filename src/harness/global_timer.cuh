// The GPU's %globaltimer in nanoseconds: wall time on the device, independent of the SM clock
// (the clock probe's denominator, the spin kernel's span, the launch gate's timeout).
#pragma once

namespace aisp {

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

}  // namespace aisp
