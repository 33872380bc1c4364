#include "support/json_file.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace aisp {

namespace {

// Where the bytes go: a symlink's target (a rename over the link replaced it: `--json /dev/stdout`
// turned the system's /dev/stdout into a regular file, 2026-12-04), and whether that is a regular
// file (or none yet), which a rename may replace; a device or a pipe is written in place.
std::pair<std::string, bool> destination_of(const std::string& path) {
  std::error_code error;
  std::string target = path;
  if (std::filesystem::is_symlink(path, error)) {
    const auto resolved = std::filesystem::weakly_canonical(path, error);
    if (!error) target = resolved.string();
  }
  const auto status = std::filesystem::status(target, error);
  const bool replaceable = error || !std::filesystem::exists(status) || std::filesystem::is_regular_file(status);
  return {target, replaceable};
}

}  // namespace

void write_json_file(const std::string& requested, const nlohmann::json& document, int indent) {
  const auto [path, replaceable] = destination_of(requested);
  if (!replaceable) {
    std::ofstream stream(path, std::ios::binary);
    stream << document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    stream.flush();
    if (!stream) throw std::runtime_error("cannot write " + requested);
    return;
  }
  const std::string temporary = path + ".tmp";
  const auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw std::runtime_error("cannot write " + path + ": " + why);
  };
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) fail("cannot open " + temporary);
    file << document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    file.flush();
    if (!file) fail("writing " + temporary + " failed");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) fail("rename failed: " + error.message());
}

}  // namespace aisp
