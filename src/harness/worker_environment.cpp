#include "harness/worker_environment.hpp"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness/program_environment.hpp"

extern char** environ;

namespace aisp {

// Note [worker environment]
// Libraries read some environment variables once, lazily, at their first use: ATen picks its
// kernels' instruction set at its first dispatch (ATEN_CPU_CAPABILITY), oneDNN at its first
// primitive, numpy at import (NPY_DISABLE_CPU_FEATURES), the OpenMP pools as they start. A red
// team's Python baseline set ATEN_CPU_CAPABILITY=default in its setup(), before anything in its
// worker had dispatched, and ran unvectorized (1.35x for the same code); an executable baseline
// ran its program through `env NPY_DISABLE_CPU_FEATURES=...` (1.88x; round nine, 2026-12-05).
// The worker reads its environment against the one it had at its first reading, and each child
// program's starting environment (/proc/<pid>/environ) against the same; a baseline that runs
// under a change no candidate also ends under fails `worker-state`.
namespace {

using variables = std::map<std::string, std::string>;

variables parse_entries(const std::vector<std::string>& entries) {
  variables parsed;
  for (const auto& text : entries) {
    const auto equals = text.find('=');
    if (equals != std::string::npos && equals > 0) parsed[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return parsed;
}

variables parse(const std::string& block, char separator) {
  std::vector<std::string> entries;
  std::stringstream stream(block);
  for (std::string entry; std::getline(stream, entry, separator);) entries.push_back(entry);
  return parse_entries(entries);
}

variables own_environment() {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) entries.emplace_back(*entry);
  return parse_entries(entries);
}

nlohmann::json changes(const variables& first, const variables& now) {
  nlohmann::json changed = nlohmann::json::object();
  for (const auto& [name, value] : now) {
    const auto was = first.find(name);
    if (was == first.end() || was->second != value) changed[name] = value;
  }
  for (const auto& [name, value] : first)
    if (!now.contains(name)) changed[name] = nullptr;
  return changed;
}

// A runtime may name a variable for its process (Intel's OpenMP sets __KMP_REGISTERED_LIB_<pid>):
// named for no process, twin programs compare alike.
variables for_no_process(const variables& program, long pid) {
  const auto number = std::to_string(pid);
  variables named;
  for (const auto& [name, value] : program)
    named[name.ends_with(number) ? name.substr(0, name.size() - number.size()) + "<pid>" : name] = value;
  return named;
}

// Each child program's starting environment, and the one it runs under now where its memory can
// be read (Note [live program environment]: its own setenv calls are only there).
nlohmann::json programs_changes(const variables& first) {
  nlohmann::json changed = nlohmann::json::object();
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return changed;
  while (const dirent* task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::ifstream children(std::string("/proc/self/task/") + task->d_name + "/children");
    for (long child = 0; children >> child;) {
      std::ifstream file("/proc/" + std::to_string(child) + "/environ", std::ios::binary);
      const std::string block{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
      if (!block.empty()) changed.update(changes(first, for_no_process(parse(block, '\0'), child)));
      if (const auto live = live_environment(child)) changed.update(changes(first, for_no_process(parse_entries(*live), child)));
    }
  }
  closedir(tasks);
  return changed;
}

}  // namespace

nlohmann::json environment_changes() {
  static const variables first = own_environment();
  return {{"own", changes(first, own_environment())}, {"programs", programs_changes(first)}};
}

}  // namespace aisp
