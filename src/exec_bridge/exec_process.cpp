#include "exec_bridge/exec_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "exec_bridge/program_confinement.hpp"
#include "runner/worker_sandbox.hpp"
#include "support/paths.hpp"

extern char** environ;

namespace aisp::exec {

bool reply_is_ok(const char* line) {
  const char* key = std::strstr(line, "\"ok\"");
  if (key == nullptr) return false;
  const char* at = key + 4;
  while (*at == ' ' || *at == '\t') ++at;
  if (*at++ != ':') return false;
  while (*at == ' ' || *at == '\t') ++at;
  return std::strncmp(at, "true", 4) == 0;
}

// `name` as execvp would find it: a path (taken from `directory` where relative) or the first
// executable of that name in $PATH; the name itself where none is (the start then says so).
static std::string resolved_program(const std::string& name, const std::string& directory) {
  if (name.find('/') != std::string::npos) return name.front() == '/' ? name : directory + "/" + name;
  const auto found = find_program(name);
  return found.empty() ? name : found;
}

exec_process::exec_process(const std::vector<std::string>& command, const std::string& directory, const std::vector<int>& fds) {
  if (command.empty()) throw std::runtime_error("a variant's command is empty");
  label_ = command.front();
  // Resolved before the fork: the child only makes system calls (Note [confined programs]).
  const std::string program = resolved_program(command.front(), directory);
  if (access(program.c_str(), X_OK) != 0) throw std::runtime_error("could not start " + label_ + ": " + std::strerror(errno));
  int in[2];
  int out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("could not make the pipes to " + label_);
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  const auto filter = make_program_filter();
  pid_ = fork();
  if (pid_ == 0) {
    if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0) _exit(126);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      const int target = first_buffer_fd + static_cast<int>(i);
      // dup2 onto itself keeps close-on-exec: cleared by hand, as posix_spawn's dup2 action did.
      if ((fds[i] == target ? fcntl(target, F_SETFD, 0) : dup2(fds[i], target)) < 0) _exit(126);
    }
    if (chdir(directory.c_str()) != 0) _exit(126);
    confine_program(filter);
    execve(program.c_str(), argv.data(), environ);
    _exit(127);
  }
  const int spawned = pid_ < 0 ? errno : 0;
  close(in[0]);
  close(out[1]);
  to_process_ = in[1];
  from_process_ = out[0];
  if (spawned != 0) {
    pid_ = -1;
    throw std::runtime_error("could not start " + label_ + ": " + std::strerror(spawned));
  }
}

exec_process::~exec_process() {
  if (to_process_ >= 0) {
    static constexpr char bye[] = "{\"op\":\"exit\"}\n";
    (void)!write(to_process_, bye, sizeof bye - 1);
    close(to_process_);  // and EOF: a process must end on either
  }
  if (from_process_ >= 0) close(from_process_);
  if (pid_ > 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void exec_process::send(const char* text, std::size_t length) {
  while (length > 0) {
    const ssize_t wrote = write(to_process_, text, length);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) fail(stopped_reading());
    text += wrote;
    length -= static_cast<std::size_t>(wrote);
  }
}

std::size_t exec_process::read_reply() {
  std::size_t length = 0;
  for (;;) {
    for (std::size_t i = 0; i < pending_bytes_; ++i) {
      if (pending_[i] != '\n') continue;
      if (length + i >= line_.size()) fail("its reply is longer than 4 KiB");
      std::memcpy(line_.data() + length, pending_.data(), i);
      length += i;
      line_[length] = '\0';
      pending_bytes_ -= i + 1;
      std::memmove(pending_.data(), pending_.data() + i + 1, pending_bytes_);
      return length;
    }
    if (length + pending_bytes_ >= line_.size()) fail("its reply is longer than 4 KiB");
    std::memcpy(line_.data() + length, pending_.data(), pending_bytes_);
    length += pending_bytes_;
    pending_bytes_ = 0;
    const ssize_t got = read(from_process_, pending_.data(), pending_.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail(ended_how());
    pending_bytes_ = static_cast<std::size_t>(got);
  }
}

std::string exec_process::request(const std::string& line) {
  send(line.data(), line.size());
  send("\n", 1);
  const std::size_t length = read_reply();
  std::string reply(line_.data(), length);
  if (!reply_is_ok(line_.data())) {
    const auto parsed = nlohmann::json::parse(reply, nullptr, false);
    fail(parsed.is_object() && parsed.contains("message") ? parsed["message"].get<std::string>() : "it replied: " + reply);
  }
  return reply;
}

void exec_process::run() {
  static constexpr char run_line[] = "{\"op\":\"run\"}\n";
  send(run_line, sizeof run_line - 1);
  read_reply();
  if (!reply_is_ok(line_.data())) fail(std::string("run failed: ") + line_.data());
}

namespace {

// "exit status N", or the signal that ended a process (SIGSYS: the worker sandbox's).
std::string how_it_ended(int status) {
  const int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return WIFEXITED(status)                    ? "exit status " + std::to_string(WEXITSTATUS(status))
         : sandbox::killed_by_sandbox(signal) ? "signal " + std::to_string(signal) + ", SIGSYS: the sandbox stopped a forbidden system call"
                                              : "signal " + std::to_string(signal) + ", " + strsignal(signal);
}

}  // namespace

std::string exec_process::ended_how() {
  int status = 0;
  if (pid_ <= 0 || waitpid(pid_, &status, 0) != pid_) return "it closed its output without a reply";
  pid_ = -1;
  return "it ended (" + how_it_ended(status) + ") without a reply; what it printed on stderr is in the worker's log";
}

// Its input closed: a process that does so has usually ended, and how (a signal, an exit status)
// is what its author needs; the write can fail before the exit is reported, so wait up to 1 s.
std::string exec_process::stopped_reading() {
  for (int tries = 0; tries < 100 && pid_ > 0; ++tries) {
    int status = 0;
    const pid_t got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
      pid_ = -1;
      return "it ended (" + how_it_ended(status) + ") before it read its requests; what it printed on stderr is in the worker's log";
    }
    if (got < 0) break;
    usleep(10'000);
  }
  return "it stopped reading its requests";
}

void exec_process::fail(const std::string& what) { throw std::runtime_error(label_ + ": " + what); }

}  // namespace aisp::exec
