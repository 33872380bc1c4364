#include "support/paths.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace aisp {

std::string file_safe(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == ':' || c == '/'; }, '_');
  return text;
}

std::string find_program(std::string_view name, const std::vector<std::string>& also_in) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream parts(path);
    for (std::string dir; std::getline(parts, dir, ':');) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  dirs.insert(dirs.end(), also_in.begin(), also_in.end());
  for (const auto& dir : dirs) {
    const auto candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate.string();
  }
  return "";
}

std::string shipped_data_file(const std::string& relative) {
  std::error_code error;
  if (std::filesystem::exists(relative, error)) return relative;
  const auto bin = std::filesystem::read_symlink("/proc/self/exe", error).parent_path();
  const auto shipped = bin.parent_path() / "share" / "aisp" / relative;
  return !error && std::filesystem::exists(shipped, error) ? shipped.string() : relative;
}

std::string artifacts_root() {
  const char* root = std::getenv("AISP_ARTIFACTS");
  return root != nullptr && *root != '\0' ? root : "artifacts";
}

std::string default_history_db() {
  const char* db = std::getenv("AISP_DB");
  return db != nullptr && *db != '\0' ? db : artifacts_root() + "/aisp.db";
}

}  // namespace aisp
