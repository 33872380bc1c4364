// Note [DNS rebinding]: which Host headers a server bound to loopback answers (src/serve/host_guard.hpp).
#include <gtest/gtest.h>

#include "serve/host_guard.hpp"

namespace {

using aisp::serve::host_header_allowed;

TEST(host_guard, a_loopback_server_answers_loopback_names_with_or_without_a_port) {
  for (const auto* host : {"127.0.0.1", "127.0.0.1:8321", "localhost:8321", "LOCALHOST", "[::1]:8321", "127.1.2.3:80", ""})
    EXPECT_TRUE(host_header_allowed(host, "127.0.0.1")) << host;
}

TEST(host_guard, a_loopback_server_refuses_any_other_name_a_page_could_rebind) {
  for (const auto* host : {"evil.example", "evil.example:8321", "127.0.0.1.evil.example", "localhost.evil.example:8321",
                           "127.0.0.1:8321@evil.example", "10.0.0.5:8321"})
    EXPECT_FALSE(host_header_allowed(host, "127.0.0.1")) << host;
}

TEST(host_guard, a_server_bound_to_another_address_takes_any_host) {
  EXPECT_TRUE(host_header_allowed("dashboard.lab.example:8321", "0.0.0.0"));
  EXPECT_TRUE(host_header_allowed("evil.example", "192.168.1.20"));
}

TEST(host_guard, a_server_bound_to_a_loopback_name_answers_that_name) {
  EXPECT_TRUE(host_header_allowed("localhost:8321", "localhost"));
  EXPECT_TRUE(host_header_allowed("127.0.0.1:8321", "localhost"));
  EXPECT_FALSE(host_header_allowed("evil.example:8321", "localhost"));
}

}  // namespace
