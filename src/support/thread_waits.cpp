#include "support/thread_waits.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include <fmt/format.h>

namespace aisp {
namespace {

// One thread: its kernel wait channel, else its scheduler state in words.
std::string wait_of(const std::filesystem::path& task) {
  std::string channel;
  std::ifstream(task / "wchan") >> channel;
  if (!channel.empty() && channel != "0") return "in " + channel;
  std::string stat;
  std::getline(std::ifstream(task / "stat"), stat);
  const auto after_name = stat.rfind(')');  // the name may hold spaces and parentheses
  const char state = after_name != std::string::npos && after_name + 2 < stat.size() ? stat[after_name + 2] : '?';
  switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "in an uninterruptible wait";
    case 'T':
    case 't': return "stopped";
    default: return "";
  }
}

}  // namespace

std::string thread_waits(pid_t pid) {
  const std::filesystem::path tasks = fmt::format("/proc/{}/task", pid);
  std::error_code error;
  std::map<std::string, int> counts;
  int threads = 0;
  std::string main_thread;
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    const auto wait = wait_of(task.path());
    if (wait.empty()) continue;
    ++threads;
    ++counts[wait];
    if (task.path().filename() == std::to_string(pid)) main_thread = wait;
  }
  if (threads == 0) return "";
  std::string all;
  for (const auto& [wait, count] : counts) all += fmt::format("{}{} {}", all.empty() ? "" : ", ", count, wait);
  return fmt::format("main thread {}; {} thread{}: {}", main_thread.empty() ? "gone" : main_thread, threads, threads == 1 ? "" : "s", all);
}

}  // namespace aisp
