#include "runner/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "runner/worker_sandbox.hpp"

extern char** environ;

namespace aisp {

std::string_view worker_failure_name(worker_failure_kind kind) {
  switch (kind) {
    case worker_failure_kind::timeout: return "timeout";
    case worker_failure_kind::crash: return "crash";
    case worker_failure_kind::cuda: return "cuda";
    case worker_failure_kind::contract: return "contract";
    case worker_failure_kind::exception: return "exception";
    case worker_failure_kind::sandbox: return "sandbox";
    case worker_failure_kind::unsupported: return "unsupported";
  }
  return "?";
}

std::string current_executable() {
  std::vector<char> path(4096);
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (length <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  return {path.data(), static_cast<std::size_t>(length)};
}

worker_process::worker_process(const std::string& executable, const std::string& log_path)
    : log_path_(log_path) {
  // Sockets, not pipes: a pipe can be reopened through /proc/<pid>/fd/N by a sibling process,
  // a socket cannot (Note [worker sandbox]).
  int to_child[2];
  int from_child[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, to_child) != 0 ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, from_child) != 0)
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
  std::string program = executable;
  std::string verb = "worker";
  char* argv[] = {program.data(), verb.data(), nullptr};
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int spawn_error = log_fd < 0 ? errno : 0;
  pid_ = spawn_error == 0 ? fork() : -1;
  if (pid_ == 0) {
    // The child: only async-signal-safe calls until exec (the judge may have threads).
    if (dup2(to_child[0], STDIN_FILENO) < 0 || dup2(from_child[1], STDOUT_FILENO) < 0 ||
        dup2(log_fd, STDERR_FILENO) < 0)
      _exit(126);
    sandbox::confine_before_exec(static_cast<pid_t>(syscall(SYS_getpid)));
    execve(program.c_str(), argv, environ);
    _exit(127);
  }
  const int status = spawn_error != 0 ? spawn_error : pid_ < 0 ? errno : 0;
  if (log_fd >= 0) close(log_fd);
  close(to_child[0]);
  close(from_child[1]);
  to_worker_ = to_child[1];
  from_worker_ = from_child[0];
  if (status != 0) {
    close(to_worker_);
    close(from_worker_);
    pid_ = -1;
    throw worker_failure(worker_failure_kind::crash,
                         fmt::format("cannot start worker: {}", std::strerror(status)));
  }
}

worker_process::~worker_process() {
  kill_and_reap();
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
}

void worker_process::kill_and_reap() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string worker_process::log_tail() const {
  std::ifstream log(log_path_);
  std::string line;
  std::string last;
  while (std::getline(log, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

void worker_process::fail_dead(const std::string& while_doing) {
  int status = 0;
  std::string how = "exited";
  if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
    if (WIFSIGNALED(status) && sandbox::killed_by_sandbox(WTERMSIG(status))) {
      pid_ = -1;
      throw worker_failure(worker_failure_kind::sandbox,
                           fmt::format("worker was killed by its sandbox (SIGSYS) during {}: a forbidden system call "
                                       "with SIGSYS blocked (process-spawning functions such as system() block every "
                                       "signal), or before main() (a static initializer of a pair file)",
                                       while_doing));
    }
    if (WIFSIGNALED(status)) how = fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status)) how = fmt::format("exited with code {}", WEXITSTATUS(status));
    pid_ = -1;
  }
  const std::string tail = log_tail();
  throw worker_failure(worker_failure_kind::crash,
                       fmt::format("worker {} during {}{}", how, while_doing,
                                   tail.empty() ? "" : ": " + tail));
}

nlohmann::json worker_process::request(const nlohmann::json& message, double timeout_s) {
  send(message);
  return receive(message.value("op", "?"), timeout_s);
}

void worker_process::send(const nlohmann::json& message) {
  const std::string op = message.value("op", "?");
  if (pid_ <= 0) throw worker_failure(worker_failure_kind::crash, "worker is not running");
  const std::string line = message.dump() + "\n";
  std::size_t written = 0;
  signal(SIGPIPE, SIG_IGN);  // a dead worker must surface as EPIPE, not kill the judge
  while (written < line.size()) {
    const ssize_t n = write(to_worker_, line.data() + written, line.size() - written);
    if (n <= 0) {
      if (errno == EINTR) continue;
      fail_dead(op);
    }
    written += static_cast<std::size_t>(n);
  }
}

nlohmann::json worker_process::receive(const std::string& op, double timeout_s, const std::function<bool()>& give_up) {
  if (pid_ <= 0) throw worker_failure(worker_failure_kind::crash, "worker is not running");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    const auto newline = pending_.find('\n');
    if (newline != std::string::npos) {
      const std::string answer = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      auto reply = nlohmann::json::parse(answer, nullptr, false);
      if (reply.is_discarded()) {
        throw worker_failure(worker_failure_kind::exception, "worker sent a malformed answer to " + op);
      }
      if (reply.contains("sandbox_denials")) sandbox_denials_ = reply.at("sandbox_denials");
      for (const auto& call : reply.value("audit_tampering", std::vector<std::string>{})) {
        if (std::find(audit_tampering_.begin(), audit_tampering_.end(), call) == audit_tampering_.end())
          audit_tampering_.push_back(call);
      }
      if (!reply.value("ok", false)) {
        const auto kind = reply.value("kind", "exception");
        const auto failure = kind == "cuda" ? worker_failure_kind::cuda
                             : kind == "unsupported" ? worker_failure_kind::unsupported
                             : kind == "contract" ? worker_failure_kind::contract
                                                  : worker_failure_kind::exception;
        throw worker_failure(failure, reply.value("message", "worker reported a failure"));
      }
      return reply;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill_and_reap();
      throw worker_failure(worker_failure_kind::timeout,
                           fmt::format("worker gave no answer to '{}' within {:.1f} s and was killed", op, timeout_s));
    }
    if (give_up && give_up()) {
      kill_and_reap();
      throw worker_failure(worker_failure_kind::crash, fmt::format("worker was ended during '{}': a peer rank failed", op));
    }
    pollfd wait_for{from_worker_, POLLIN, 0};
    const int ready = poll(&wait_for, 1, static_cast<int>(std::min<long long>(left, give_up ? 50 : 1000)));
    if (ready < 0 && errno != EINTR) fail_dead(op);
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = read(from_worker_, chunk, sizeof chunk);
    if (n == 0) fail_dead(op);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_dead(op);
    }
    pending_.append(chunk, static_cast<std::size_t>(n));
  }
}

void worker_process::shutdown() {
  if (pid_ <= 0) return;
  try {
    request({{"op", "exit"}}, 5.0);
  } catch (const worker_failure&) {
  }
  int status = 0;
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    usleep(20'000);
  }
  kill_and_reap();
}

}  // namespace aisp
