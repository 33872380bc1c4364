// One `aisp serve` process on a free port of 127.0.0.1 and raw HTTP/1.1 exchanges with it, for
// the tests of the API (serve_test.cpp) and of the dashboard's assets and event stream
// (dashboard_serve_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "host_history.hpp"

namespace aisp::testing {

struct http_answer {
  int status = 0;
  nlohmann::json body;  // discarded when the body is not JSON
  std::string headers;  // the status line and headers, as sent
  std::string raw_body;  // as sent (chunked bodies keep their chunk sizes)
  [[nodiscard]] std::string header(const std::string& name) const {
    const auto at = headers.find("\r\n" + name + ": ");
    if (at == std::string::npos) return "";
    const auto start = at + 4 + name.size();
    return headers.substr(start, headers.find("\r\n", start) - start);
  }
};

// One `aisp serve` process on a free port; stopped when the test ends.
class served {
 public:
  served(const std::string& db, const std::string& token, const std::string& more_arguments = "") {
    dir_ = db + "_serve_" + std::to_string(counter_++);
    std::filesystem::create_directories(dir_);
    const std::string log = dir_ + "/stderr";
    const std::string command = aisp_binary() + " serve --port 0 --db " + db + " --jobs-dir " + dir_ +
                                (token.empty() ? "" : " --token " + token) + " " + more_arguments + " > /dev/null 2> " +
                                log + " & echo $!";
    pid_ = std::stoi(run_command(command, false).output);
    for (int waited = 0; waited < 200 && port_ == 0; ++waited) {  // up to 20 s for the "listening on" line
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const auto text = read_file(log);
      if (const auto at = text.find("127.0.0.1:"); at != std::string::npos) port_ = std::stoi(text.substr(at + 10));
    }
    EXPECT_GT(port_, 0) << read_file(log);
  }
  ~served() { kill(pid_, SIGTERM); }
  served(const served&) = delete;
  served& operator=(const served&) = delete;

  [[nodiscard]] int port() const { return port_; }

  // A raw HTTP/1.1 exchange: the path goes out as written (no client-side normalization).
  // `more_headers`: whole header lines, each ending in \r\n.
  http_answer ask(const std::string& method, const std::string& path, const std::string& body = "",
                  const std::string& authorization = "", const std::string& host = "127.0.0.1",
                  const std::string& more_headers = "") const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port_));
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    http_answer answer;
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      close(fd);
      return answer;
    }
    std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n";
    if (!authorization.empty()) request += "Authorization: " + authorization + "\r\n";
    request += more_headers + "\r\n" + body;
    for (std::size_t sent = 0; sent < request.size();) {
      const auto wrote = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (wrote <= 0) break;
      sent += static_cast<std::size_t>(wrote);
    }
    std::string reply;
    char chunk[65536];
    for (ssize_t got; (got = recv(fd, chunk, sizeof chunk, 0)) > 0;) reply.append(chunk, static_cast<std::size_t>(got));
    close(fd);
    if (reply.size() > 12) answer.status = std::stoi(reply.substr(9, 3));
    if (const auto start = reply.find("\r\n\r\n"); start != std::string::npos) {
      answer.headers = reply.substr(0, start);
      answer.raw_body = reply.substr(start + 4);
      answer.body = nlohmann::json::parse(answer.raw_body, nullptr, false);
    }
    return answer;
  }

 private:
  static inline int counter_ = 0;
  std::string dir_;
  int pid_ = -1;
  int port_ = 0;
};

// An error answer: this status, a JSON {"error": one line} that says this.
inline void expect_error(const http_answer& answer, int status, const std::string& says) {
  EXPECT_EQ(answer.status, status) << answer.body.dump();
  ASSERT_TRUE(answer.body.is_object()) << "status " << answer.status;
  const auto text = answer.body.value("error", "");
  EXPECT_NE(text.find(says), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

}  // namespace aisp::testing
