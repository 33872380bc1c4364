// Note [DNS rebinding]: a server on 127.0.0.1 is still reachable from a web page the user opens,
// through a name the page's owner points at 127.0.0.1 after it loaded: the browser then treats
// the dashboard as that page's own origin and lets its script read every answer. The request's
// Host header still names the page's domain, so a server bound to a loopback address answers
// only requests whose Host is a loopback name. One bound elsewhere (--host) was opened to the
// network on purpose, and takes any Host.
#pragma once

#include <string_view>

namespace aisp::serve {

// Whether `bound_host` (what --host named) is a loopback address or name.
[[nodiscard]] bool is_loopback_host(std::string_view bound_host);

// Whether a request with this Host header ("" when absent) may be answered by a server bound to
// `bound_host`: always for a non-loopback bind and for an absent header; otherwise only for
// 127.0.0.1, localhost, [::1] or the bound name itself, with or without a port.
[[nodiscard]] bool host_header_allowed(std::string_view host_header, std::string_view bound_host);

}  // namespace aisp::serve
