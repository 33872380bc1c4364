#include "runner/line_channel.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "runner/run_interruption.hpp"

namespace aisp {

line_channel::clock::time_point deadline_in(double seconds) {
  return line_channel::clock::now() + std::chrono::duration_cast<line_channel::clock::duration>(std::chrono::duration<double>(seconds));
}

line_channel::outcome line_channel::fill(clock::time_point deadline, const std::function<bool()>& give_up, int poll_ms) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) return outcome::timed_out;
    if (give_up && give_up()) return outcome::gave_up;
    if (run_interruption() != 0) return outcome::interrupted;  // Note [interrupted runs]
    pollfd wait_for{read_fd_, POLLIN, 0};
    const int ready = poll(&wait_for, 1, static_cast<int>(std::min<long long>(left, poll_ms)));
    if (ready < 0 && errno != EINTR) return outcome::closed;
    if (ready <= 0) continue;
    char chunk[65536];
    const ssize_t n = read(read_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return outcome::closed;
    pending_.append(chunk, static_cast<std::size_t>(n));
    return outcome::line;
  }
}

line_channel::outcome line_channel::read_line(std::string& line, clock::time_point deadline,
                                              const std::function<bool()>& give_up, int poll_ms) {
  while (true) {
    const auto newline = pending_.find('\n');
    if (newline != std::string::npos) {
      line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return outcome::line;
    }
    if (const auto got = fill(deadline, give_up, poll_ms); got != outcome::line) return got;
  }
}

bool line_channel::read_exact(std::string& bytes, std::size_t count, clock::time_point deadline) {
  while (pending_.size() < count) {
    if (fill(deadline, {}, 1000) != outcome::line) return false;
  }
  bytes = pending_.substr(0, count);
  pending_.erase(0, count);
  return true;
}

bool line_channel::write_all(const std::string& bytes) {
  signal(SIGPIPE, SIG_IGN);  // a dead peer must surface as EPIPE, not kill this process
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(write_fd_, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

bool line_channel::peer_gone() const {
  pollfd probe{read_fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&probe, 1, 0) <= 0) return false;
  if ((probe.revents & (POLLERR | POLLHUP | POLLRDHUP | POLLNVAL)) != 0) return true;
  char byte = 0;
  return recv(read_fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace aisp
