#include "harness/plugin_probe.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "harness/plugin_loader.hpp"

namespace aisp {
namespace {

// What the user named: the pair files behind a bridge, else the library.
std::string named(const std::string& path) {
  const auto variable = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value != nullptr ? value : "?");
  };
  switch (kind_of_plugin(path)) {
    case plugin_kind::python_bridge: return "--python " + variable("AISP_PYTHON_PAIRS");
    case plugin_kind::exec_bridge: return "--exec " + variable("AISP_EXEC_PAIRS");
    case plugin_kind::library: break;
  }
  return "plugin '" + path + "'";
}

// "" when a child loaded `path` (or failed to, in the ordinary way) and said so; else how it ended.
std::string how_the_load_ended(const std::string& path) {
  int said[2];
  AISP_EXPECTS(pipe(said) == 0, "plugin load probe: no pipe: " + std::string(std::strerror(errno)));
  std::fflush(nullptr);  // nothing buffered here is written twice
  const pid_t child = fork();
  AISP_EXPECTS(child >= 0, "plugin load probe: fork failed: " + std::string(std::strerror(errno)));
  if (child == 0) {
    close(said[0]);
    if (const int quiet = open("/dev/null", O_WRONLY); quiet >= 0) {  // the judge's own load speaks
      dup2(quiet, STDOUT_FILENO);
      dup2(quiet, STDERR_FILENO);
    }
    try {
      load_plugins({path});
    } catch (...) {  // an ordinary failure: the judge's load reports it
    }
    const char returned = 1;
    (void)!write(said[1], &returned, 1);
    _exit(0);
  }
  close(said[1]);
  char returned = 0;
  const bool told = read(said[0], &returned, 1) == 1;
  close(said[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (told) return "";
  if (WIFSIGNALED(status)) return fmt::format("crashed while loading (signal {}, {})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("ended the process while loading (exit {})", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

}  // namespace

void probe_plugin_loads(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    const auto ending = how_the_load_ended(path);
    AISP_EXPECTS(ending.empty(), named(path) + " " + ending + ": nothing was run");
  }
}

}  // namespace aisp
