// One end of a byte stream (a socket) read as JSON lines: the worker protocol's transport
// (docs/worker_protocol.md), shared by the local worker's socket pair, the rank host's relay and
// the judge's TCP links to other hosts (Note [launch]).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace aisp {

class line_channel {
 public:
  enum class outcome { line, timed_out, gave_up, closed, interrupted };
  using clock = std::chrono::steady_clock;

  line_channel() = default;
  // Reads from `read_fd`, writes to `write_fd` (the same descriptor for a socket); owns neither.
  line_channel(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}

  // The next line (without its newline) into `line`. Waits until `deadline`; `give_up` is asked
  // every `poll_ms` while waiting and ends the wait when it turns true, as an interrupted run
  // does (Note [interrupted runs]).
  outcome read_line(std::string& line, clock::time_point deadline, const std::function<bool()>& give_up = {}, int poll_ms = 1000);
  // Exactly `count` bytes into `bytes` (the payload that follows a line), or false when the
  // stream ends or the deadline passes first.
  bool read_exact(std::string& bytes, std::size_t count, clock::time_point deadline);
  // All of `bytes`, or false when the peer is gone (SIGPIPE is ignored for the process).
  bool write_all(const std::string& bytes);
  // True when the peer closed its end or the socket failed (a pending line does not count).
  [[nodiscard]] bool peer_gone() const;

  [[nodiscard]] int read_fd() const { return read_fd_; }

 private:
  // One read of what is there into pending_; outcome::line when something arrived.
  outcome fill(clock::time_point deadline, const std::function<bool()>& give_up, int poll_ms);

  int read_fd_ = -1;
  int write_fd_ = -1;
  std::string pending_;
};

// A deadline `seconds` from now.
[[nodiscard]] line_channel::clock::time_point deadline_in(double seconds);

}  // namespace aisp
