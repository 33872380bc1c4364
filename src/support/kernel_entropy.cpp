#include "support/kernel_entropy.hpp"

#include <sys/random.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace aisp {
namespace {

// getrandom(buffer, count, 0) through an inline `syscall`: nothing another library or a patched
// GOT can answer for.
long getrandom_syscall(void* buffer, std::size_t count) {
#if defined(__x86_64__)
  long result = SYS_getrandom;
  asm volatile("syscall\n" : "+a"(result) : "D"(buffer), "S"(count), "d"(0L) : "rcx", "r11", "memory");
  return result;
#else
  const long got = static_cast<long>(::getrandom(buffer, count, 0));
  return got < 0 ? -errno : got;
#endif
}

}  // namespace

std::uint64_t kernel_entropy() {
  std::uint64_t value = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const long got = getrandom_syscall(&value, sizeof value);
    if (got == static_cast<long>(sizeof value)) return value;
    if (got != -EINTR && got != -EAGAIN) break;
  }
  throw std::runtime_error("the kernel's entropy (getrandom) is unavailable");
}

bool drawn_with_chance(std::uint64_t draw, double chance) {
  if (!(chance > 0.0)) return false;
  if (chance >= 1.0) return true;
  // The top 53 bits as a uniform double in [0, 1).
  return std::ldexp(static_cast<double>(draw >> 11), -53) < chance;
}

}  // namespace aisp
