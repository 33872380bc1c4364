#include "support/json_file.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace aisp {

void write_json_file(const std::string& path, const nlohmann::json& document, int indent) {
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
