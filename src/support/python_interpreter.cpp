#include "support/python_interpreter.hpp"

#include <unistd.h>

#include <cstdlib>

namespace aisp {

std::string python_interpreter() {
  if (const char* chosen = std::getenv("AISP_PYTHON"); chosen != nullptr && *chosen != '\0') return chosen;
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

}  // namespace aisp
