// JSON documents on disk, written atomically: a temporary file, then a rename, so a crash or a
// full disk never leaves half a file where a whole one was.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aisp {

// `indent` as nlohmann::json::dump (-1: one line). Invalid UTF-8 (a mangled kernel name) is
// replaced, not thrown half-way. std::runtime_error with one line ("cannot write PATH: why")
// when it fails; the temporary is removed.
void write_json_file(const std::string& path, const nlohmann::json& document, int indent = 1);

}  // namespace aisp
