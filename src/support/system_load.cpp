#include "support/system_load.hpp"

#include <unistd.h>

#include <cstdio>

namespace aisp {

std::optional<double> machine_busy_cpu_s() {
  std::FILE* stat = std::fopen("/proc/stat", "r");
  if (stat == nullptr) return std::nullopt;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  const int read = std::fscanf(stat, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait, &irq, &softirq);
  std::fclose(stat);
  const long ticks_a_second = sysconf(_SC_CLK_TCK);
  if (read != 7 || ticks_a_second <= 0) return std::nullopt;
  return static_cast<double>(user + nice + system + irq + softirq) / static_cast<double>(ticks_a_second);
}

}  // namespace aisp
