// Errors a person can read (issue 17): a contract or CUDA error's text carries where it was
// raised ("src/runner/target_selector.cpp:62: ... [found]"), which helps whoever debugs aisp and
// nobody else. The CLI prints the message alone unless --verbose asks for the locations.
#pragma once

#include <string>
#include <string_view>

namespace aisp {

// `what` without "<file>.<ext>:<line>: " prefixes and the " [<failed expression>]" that
// follows each message they started.
[[nodiscard]] std::string without_source_locations(std::string_view what);

// A JSON library error's text without its "[json.exception.type_error.302] " tag: "type must be
// string, but is number".
[[nodiscard]] std::string without_json_prefix(std::string_view what);

}  // namespace aisp
