// Note [launch]: the TCP sockets of a launch. Launch rank 0 (the judge) listens on the
// rendezvous port; every rank host connects once for its control line, and once more for each
// worker it starts there.
#pragma once

#include <string>

#include "runner/launch_env.hpp"
#include "runner/line_channel.hpp"

namespace aisp {

// A socket descriptor, closed when it goes.
class socket_fd {
 public:
  socket_fd() = default;
  explicit socket_fd(int fd) : fd_(fd) {}
  ~socket_fd() { reset(); }
  socket_fd(socket_fd&& other) noexcept : fd_(other.release()) {}
  socket_fd& operator=(socket_fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  socket_fd(const socket_fd&) = delete;
  socket_fd& operator=(const socket_fd&) = delete;

  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();
  // Ends both directions now, so a peer blocked in read sees the end (close alone may not, while
  // another thread still holds the descriptor in poll).
  void shut() const;

 private:
  int fd_ = -1;
};

// Listens on the rendezvous port, on every interface (the address may name this host by a name
// that resolves elsewhere for others). Throws one line when the port is taken.
[[nodiscard]] socket_fd listen_for_ranks(const rendezvous_address& at);
// One connection from the listener; an invalid socket_fd when the deadline passes first.
[[nodiscard]] socket_fd accept_until(const socket_fd& listener, line_channel::clock::time_point deadline);
// Connects to the judge, retrying while it does not listen yet; an invalid socket_fd (and the
// last error in `why`) when the deadline passes first.
[[nodiscard]] socket_fd connect_until(const rendezvous_address& at, line_channel::clock::time_point deadline, std::string& why);

// This host's name, for manifests and messages.
[[nodiscard]] std::string this_host_name();

}  // namespace aisp
