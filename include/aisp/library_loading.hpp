// Libraries aisp never links, loaded at run time with dlopen: the version probes of `aisp info`
// (src/hw/library_versions.cpp) and cuDNN for labs/attention's peer. A machine without one says
// why instead of failing to start. Host-only.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace aisp {

// Where the toolkit keeps its libraries when the loader's search path does not (no ldconfig entry).
inline constexpr std::string_view toolkit_library_dir = "/usr/local/cuda/lib64/";

// A message on one line, for reports and one-line errors.
[[nodiscard]] inline std::string on_one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// `soname` bare first, so the loader's own search (LD_LIBRARY_PATH, ldconfig) decides which copy
// a benchmark would get; the toolkit directory only when that finds nothing.
inline void add_library_candidates(std::vector<std::string>& names, std::string_view soname) {
  names.emplace_back(soname);
  names.push_back(std::string(toolkit_library_dir) + std::string(soname));
}

struct opened_library {
  void* handle = nullptr;   // null: none of the candidates loaded
  std::string name;         // the candidate that loaded
  std::string first_error;  // else the first candidate's failure: it says most (usually "no such file")
};

// The first of `candidates` dlopen accepts, with RTLD_LOCAL: its symbols resolve nothing else in
// this process. `mode` is RTLD_NOW or RTLD_LAZY.
[[nodiscard]] inline opened_library open_first_library(const std::vector<std::string>& candidates, int mode) {
  opened_library opened;
  for (const auto& name : candidates) {
    opened.handle = dlopen(name.c_str(), mode | RTLD_LOCAL);
    if (opened.handle != nullptr) {
      opened.name = name;
      return opened;
    }
    const char* error = dlerror();
    if (opened.first_error.empty()) opened.first_error = on_one_line(error != nullptr ? error : name + ": dlopen failed");
  }
  return opened;
}

}  // namespace aisp
