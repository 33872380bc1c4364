#include "audit/clock_interposition.hpp"

#include <dlfcn.h>

#include <array>
#include <string_view>

namespace aisp {

std::vector<std::string> interposed_clocks() {
  // glibc binds gettimeofday and time straight to the kernel's vDSO.
  struct owned_symbol {
    const char* name;
    std::string_view library;  // part of the owning library's file name
    std::string_view or_library = "linux-vdso";
  };
  static constexpr std::array symbols{
      owned_symbol{"clock_gettime", "libc.so"},
      owned_symbol{"gettimeofday", "libc.so"},
      owned_symbol{"clock", "libc.so"},
      owned_symbol{"time", "libc.so"},
      owned_symbol{"_ZNSt6chrono3_V212steady_clock3nowEv", "libstdc++"},
      owned_symbol{"_ZNSt6chrono3_V212system_clock3nowEv", "libstdc++"},
  };
  std::vector<std::string> found;
  for (const auto& symbol : symbols) {
    void* address = dlsym(RTLD_DEFAULT, symbol.name);
    if (address == nullptr) continue;  // not linked into this process at all: nothing binds to it
    Dl_info info{};
    const std::string_view file = dladdr(address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
    if (file.find(symbol.library) == std::string_view::npos && file.find(symbol.or_library) == std::string_view::npos)
      found.push_back(std::string(symbol.name) + " (defined in " + (file.empty() ? "an unnamed object" : std::string(file)) + ")");
  }
  return found;
}

}  // namespace aisp
