#include "cli/artifacts_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "aisp/check.hpp"

namespace aisp::cli {

void hold_artifacts_folder(const std::string& folder) {
  static std::set<std::string> held;  // a second lock of this process's own would refuse itself
  if (held.contains(folder)) return;
  const std::string path = folder + "/.aisp.lock";
  // Never closed: the lock lasts as long as the process (the kernel drops it when the run ends,
  // however it ends).
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  AISP_EXPECTS(fd >= 0, "--artifacts-dir " + folder + ": cannot open " + path + " (" + std::strerror(errno) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    std::ifstream holder(path);
    std::string who;
    std::getline(holder, who);
    ::close(fd);
    AISP_EXPECTS(false, "--artifacts-dir " + folder + ": another run is writing there" + (who.empty() ? "" : " (" + who + ")") +
                            "; wait for it to end, or choose another folder");
  }
  held.insert(folder);
  const std::string who = "aisp process " + std::to_string(::getpid());
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const auto wrote = ::pwrite(fd, who.data(), who.size(), 0);
  }
}

}  // namespace aisp::cli
