#include "runner/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "runner/run_interruption.hpp"
#include "runner/worker_sandbox.hpp"
#include "support/thread_waits.hpp"

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
    case worker_failure_kind::interrupted: return "interrupted";
  }
  return "?";
}

namespace {

// Note [worker descriptors]: a worker starts with the channel and its log (0, 1, 2) and nothing
// else of the judge's. Whatever launched the judge (a CI runner, a shell's `exec 7>log`) may have
// left descriptors open without close-on-exec; inherited by every worker, one such file would be
// "held by both" for `shared-state`, and it is a way for workers to reach each other besides.
// Async-signal-safe: runs in the forked child.
void close_inherited_descriptors() {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
#endif
  for (int fd = 3; fd < 65536; ++fd) close(fd);
}

}  // namespace

std::string current_executable() {
  std::vector<char> path(4096);
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (length <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  return {path.data(), static_cast<std::size_t>(length)};
}

worker_process::worker_process(const std::string& executable, const std::string& log_path, bool end_with_parent,
                               bool allow_subprocesses, const std::vector<std::string>& extra_environment)
    : log_path_(log_path) {
  // Built before fork: the child may only make async-signal-safe calls.
  const std::string allowance = std::string(sandbox::worker_subprocess_variable) + "=";
  const auto replaced = [&](std::string_view entry) {
    if (entry.starts_with(allowance)) return true;
    for (const auto& extra : extra_environment)
      if (entry.starts_with(extra.substr(0, extra.find('=') + 1))) return true;
    return false;
  };
  std::vector<std::string> environment_text;
  for (char** entry = environ; *entry != nullptr; ++entry)
    if (!replaced(*entry)) environment_text.emplace_back(*entry);
  if (allow_subprocesses) environment_text.push_back(allowance + "1");
  environment_text.insert(environment_text.end(), extra_environment.begin(), extra_environment.end());
  std::vector<char*> environment;
  for (auto& entry : environment_text) environment.push_back(entry.data());
  environment.push_back(nullptr);
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
  const pid_t parent = getpid();
  pid_ = spawn_error == 0 ? fork() : -1;
  if (pid_ == 0) {
    // The child: only async-signal-safe calls until exec (the judge may have threads).
    if (end_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)) _exit(125);
    if (setpgid(0, 0) != 0) _exit(125);  // Note [interrupted runs]: a terminal's Ctrl-C is the judge's alone
    if (dup2(to_child[0], STDIN_FILENO) < 0 || dup2(from_child[1], STDOUT_FILENO) < 0 ||
        dup2(log_fd, STDERR_FILENO) < 0)
      _exit(126);
    close_inherited_descriptors();
    sandbox::confine_before_exec(static_cast<pid_t>(syscall(SYS_getpid)), allow_subprocesses);
    execve(program.c_str(), argv, environment.data());
    _exit(127);
  }
  const int status = spawn_error != 0 ? spawn_error : pid_ < 0 ? errno : 0;
  if (pid_ > 0) {
    setpgid(pid_, pid_);  // the child's own call races this one; either makes the group
    register_worker_group(pid_);
  }
  if (log_fd >= 0) close(log_fd);
  close(to_child[0]);
  close(from_child[1]);
  to_worker_ = to_child[1];
  from_worker_ = from_child[0];
  channel_ = line_channel(from_worker_, to_worker_);
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

void kill_descendants(pid_t pid) {
  const std::filesystem::path tasks = fmt::format("/proc/{}/task", pid);
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream children(task.path() / "children");
    for (pid_t child = 0; children >> child;) {
      kill(child, SIGSTOP);  // before its own children are listed: it cannot start more
      kill_descendants(child);
      kill(child, SIGKILL);
    }
  }
}

void worker_process::forget_reaped() {
  // What the worker left behind goes with it: an executable pair's program exits on the judge's
  // "exit", and a chain it forked lived on as orphans (red team six, 2026-12-04). They stay in
  // the worker's process group unless they left it (Note [interrupted runs]).
  kill(-pid_, SIGKILL);
  unregister_worker_group(pid_);  // its number may be another's now
  pid_ = -1;
}

// The worker's own processes go with it: an --exec variant program left running as an orphan
// after its worker timed out (a user's walkthrough, 2026-12-04).
void worker_process::kill_and_reap() {
  if (pid_ <= 0) return;
  kill(pid_, SIGSTOP);
  kill_descendants(pid_);
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  forget_reaped();
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

// What a worker was doing when it died or hung, for the message: the protocol's op and what of
// the variant ran in it (a crash in run() at a validation size used to read as "during load").
std::string doing(const std::string& op) {
  if (op == "load") return "'load' (setup() and warmup calls of run())";
  if (op == "sample") return "'sample' (timed calls of run())";
  if (op == "outputs") return "'outputs' (a verified call of run())";
  if (op == "truth") return "'truth' (the baseline's untimed call on a timed sample's inputs)";
  return "'" + op + "'";
}

void worker_process::fail_dead(const std::string& while_doing) {
  int status = 0;
  std::string how = "exited";
  if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
    end_status_ = status;
    if (WIFSIGNALED(status) && sandbox::killed_by_sandbox(WTERMSIG(status))) {
      forget_reaped();
      throw worker_failure(worker_failure_kind::sandbox,
                           fmt::format("worker was killed by its sandbox (SIGSYS) during {}: a forbidden system call "
                                       "with SIGSYS blocked (process-spawning functions such as system() block every "
                                       "signal), or before main() (a static initializer of a pair file)",
                                       doing(while_doing)));
    }
    if (WIFSIGNALED(status)) how = fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status)) how = fmt::format("exited with code {}", WEXITSTATUS(status));
    forget_reaped();
  }
  const std::string tail = log_tail();
  throw worker_failure(worker_failure_kind::crash,
                       fmt::format("worker {} during {}{}", how, doing(while_doing),
                                   tail.empty() ? "" : ": " + tail));
}

nlohmann::json worker_process::request(const nlohmann::json& message, double timeout_s) {
  send(message);
  return receive(message.value("op", "?"), timeout_s, {});
}

void worker_process::send(const nlohmann::json& message) {
  const std::string op = message.value("op", "?");
  if (pid_ <= 0) throw worker_failure(worker_failure_kind::crash, "worker is not running");
  if (!channel_.write_all(message.dump() + "\n")) fail_dead(op);
}

nlohmann::json parse_worker_reply(const std::string& line, const std::string& op, nlohmann::json& sandbox_denials,
                                  std::vector<std::string>& audit_tampering) {
  auto reply = nlohmann::json::parse(line, nullptr, false);
  if (reply.is_discarded() || !reply.is_object()) {
    throw worker_failure(worker_failure_kind::exception, "worker sent a malformed answer to " + op);
  }
  if (reply.contains("sandbox_denials")) sandbox_denials = reply.at("sandbox_denials");
  for (const auto& call : reply.value("audit_tampering", std::vector<std::string>{})) {
    if (std::find(audit_tampering.begin(), audit_tampering.end(), call) == audit_tampering.end())
      audit_tampering.push_back(call);
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

bool is_partial_reply(const std::string& line) {
  if (line.find("\"partial\"") == std::string::npos) return false;  // most lines, unparsed
  const auto reply = nlohmann::json::parse(line, nullptr, false);
  return reply.is_object() && reply.contains("partial");
}

nlohmann::json receive_joining_partials(double timeout_s, const std::function<nlohmann::json(double left_s)>& one_reply) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::map<std::string, nlohmann::json> partials;
  for (;;) {
    const double left_s = std::max(1e-3, std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count());
    auto reply = one_reply(left_s);
    if (!reply.contains("partial")) {
      for (auto& [key, records] : partials) reply[key] = std::move(records);
      return reply;
    }
    auto& records = partials[reply.at("partial").get<std::string>()];
    if (!records.is_array()) records = nlohmann::json::array();
    records.push_back(std::move(reply["record"]));
  }
}

nlohmann::json worker_process::receive(const std::string& op, double timeout_s, const std::function<bool()>& give_up) {
  try {
    return receive_joining_partials(timeout_s, [&](double left_s) {
      return parse_worker_reply(receive_line(op, left_s, give_up), op, sandbox_denials_, audit_tampering_);
    });
  } catch (const worker_failure& failure) {
    // The variant's own error names it: "thrown from run()" alone did not say whose (a user's
    // walkthrough, 2026-12-04). A dead worker is named where it is reaped (record_worker_failure).
    const bool its_own = failure.kind() == worker_failure_kind::exception || failure.kind() == worker_failure_kind::contract ||
                         failure.kind() == worker_failure_kind::cuda;
    if (!its_own || variant_label_.empty() || std::string_view(failure.what()).starts_with("variant ")) throw;
    throw worker_failure(failure.kind(), "variant " + variant_label_ + ": " + failure.what());
  }
}

std::string worker_process::receive_line(const std::string& op, double timeout_s, const std::function<bool()>& give_up) {
  if (pid_ <= 0) throw worker_failure(worker_failure_kind::crash, "worker is not running");
  std::string line;
  switch (channel_.read_line(line, deadline_in(timeout_s), give_up, give_up ? 50 : 1000)) {
    case line_channel::outcome::line: return line;
    case line_channel::outcome::timed_out: {
      // Where it was stuck, read before the kill: a kernel that never ends leaves the main
      // thread running (a spinning synchronize) or waiting in the driver.
      const auto waits = thread_waits(pid_);
      kill_and_reap();
      throw worker_failure(worker_failure_kind::timeout,
                           fmt::format("worker gave no answer to {} within {:.1f} s and was killed{}", doing(op), timeout_s,
                                       waits.empty() ? "" : " (" + waits + ")"));
    }
    case line_channel::outcome::gave_up:
      kill_and_reap();
      throw worker_failure(worker_failure_kind::crash, fmt::format("worker was ended during '{}': a peer rank failed", op));
    case line_channel::outcome::interrupted:
      kill_and_reap();
      throw worker_failure(worker_failure_kind::interrupted, fmt::format("the run was interrupted during {}", doing(op)));
    case line_channel::outcome::closed: break;
  }
  fail_dead(op);
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
      forget_reaped();
      return;
    }
    usleep(20'000);
  }
  kill_and_reap();
}

}  // namespace aisp
