// One variant's process of an executable pair (Note [executable pairs] in exec_pairs.cpp): started
// with its command, the buffers' memfds on descriptors 10, 11, ..., requests on its stdin and one
// reply line a request on its stdout. run() neither allocates nor formats: it is inside the timed
// call, where the harness counts allocations (Note [allocation counter]).
#pragma once

#include <sys/types.h>

#include <array>
#include <string>
#include <vector>

namespace aisp::exec {

// The descriptor of the first buffer a variant's process finds open (the next ones follow).
inline constexpr int first_buffer_fd = 10;

class exec_process {
 public:
  // Starts `command` (argv; argv[0] found on PATH) in `directory` with `fds` on 10, 11, ...
  exec_process(const std::vector<std::string>& command, const std::string& directory, const std::vector<int>& fds);
  ~exec_process();
  exec_process(const exec_process&) = delete;
  exec_process& operator=(const exec_process&) = delete;

  // Sends one request line and returns the reply line; throws with the process's words when the
  // reply is not {"ok": true, ...} or the process ended.
  std::string request(const std::string& line);
  // {"op":"run"}, without allocating.
  void run();

 private:
  void send(const char* text, std::size_t length);
  // The next reply line into line_ (NUL-terminated, without the newline); its length.
  std::size_t read_reply();
  // Why the process stopped answering: its exit status or signal (it is reaped).
  std::string ended_how();
  // Why a request could not be written: how the process ended, if it did within a second.
  std::string stopped_reading();
  [[noreturn]] void fail(const std::string& what);

  std::string label_;
  pid_t pid_ = -1;
  int to_process_ = -1;
  int from_process_ = -1;
  std::array<char, 4096> line_{};
  std::array<char, 4096> pending_{};
  std::size_t pending_bytes_ = 0;
};

// Whether a reply line says "ok": true (whitespace as JSON allows).
[[nodiscard]] bool reply_is_ok(const char* line);

}  // namespace aisp::exec
