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
  const std::string text = document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const std::string written = replaceable ? path + ".tmp" : path;  // a whole file by rename; a device in place
  const auto fail = [&](const std::string& why) {
    std::error_code ignored;
    if (replaceable) std::filesystem::remove(written, ignored);
    throw std::runtime_error("cannot write " + requested + ": " + why);
  };
  {
    std::ofstream file(written, std::ios::binary | (replaceable ? std::ios::trunc : std::ios::out));
    if (!file) fail("cannot open " + written);
    file << text;
    file.flush();
    if (!file) fail("writing " + written + " failed");
  }
  if (!replaceable) return;
  std::error_code error;
  std::filesystem::rename(written, path, error);
  if (error) fail("rename failed: " + error.message());
}

}  // namespace aisp
