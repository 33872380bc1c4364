#include "support/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace aisp {

std::string readable_symbol(std::string_view mangled) {
  const std::string name(mangled);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> readable(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                             &std::free);
  return status == 0 && readable != nullptr ? std::string(readable.get()) : name;
}

}  // namespace aisp
