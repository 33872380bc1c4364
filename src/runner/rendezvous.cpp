#include "runner/rendezvous.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace aisp {

void socket_fd::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void socket_fd::shut() const {
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
}

namespace {

void tune(int fd) {
  const int one = 1;  // a request is one small line, answered before the next: no Nagle delay
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A peer host that powers off sends no FIN: keepalive probes end the connection in about two
  // minutes, so neither side waits for it forever.
  const int idle_s = 60;
  const int interval_s = 10;
  const int probes = 6;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

}  // namespace

socket_fd listen_for_ranks(const rendezvous_address& at) {
  socket_fd listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) throw std::runtime_error(fmt::format("rendezvous {}: socket: {}", at.text(), std::strerror(errno)));
  const int one = 1;  // a port left in TIME_WAIT by the previous run is free; one that listens is not
  setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(at.port));
  if (bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    if (error == EADDRINUSE)
      throw std::runtime_error(fmt::format("the rendezvous port {} is in use on this host (launch rank 0): pick another with "
                                           "--rendezvous or MASTER_PORT",
                                           at.port));
    throw std::runtime_error(fmt::format("rendezvous {}: bind: {}", at.text(), std::strerror(error)));
  }
  if (listen(listener.get(), 64) != 0)
    throw std::runtime_error(fmt::format("rendezvous {}: listen: {}", at.text(), std::strerror(errno)));
  return listener;
}

socket_fd accept_until(const socket_fd& listener, line_channel::clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - line_channel::clock::now()).count();
    if (left <= 0) return {};
    pollfd wait_for{listener.get(), POLLIN, 0};
    const int ready = poll(&wait_for, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready <= 0) continue;
    socket_fd connection(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection.valid()) continue;
    tune(connection.get());
    return connection;
  }
}

socket_fd connect_until(const rendezvous_address& at, line_channel::clock::time_point deadline, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string port = std::to_string(at.port);
  while (true) {
    addrinfo* found = nullptr;
    if (const int error = getaddrinfo(at.host.c_str(), port.c_str(), &hints, &found); error != 0) {
      why = fmt::format("cannot resolve {}: {}", at.host, gai_strerror(error));
    } else {
      for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
        socket_fd connection(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (!connection.valid()) continue;
        if (connect(connection.get(), a->ai_addr, a->ai_addrlen) == 0) {
          freeaddrinfo(found);
          tune(connection.get());
          return connection;
        }
        why = std::strerror(errno);
      }
      freeaddrinfo(found);
    }
    if (line_channel::clock::now() >= deadline) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string this_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

}  // namespace aisp
