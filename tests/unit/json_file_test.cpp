// write_json_file: whole files by rename, but through a symlink to its target and in place into a
// device: `--json /dev/stdout` once replaced the system's /dev/stdout symlink with a regular file
// (a user's walkthrough, 2026-12-04).
#include "support/json_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(write_json_file, writes_through_a_symlink_and_keeps_it) {
  const auto dir = std::filesystem::temp_directory_path() / ("aisp_json_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "target.json") << "{}";
  std::filesystem::create_symlink("target.json", dir / "link.json");
  aisp::write_json_file((dir / "link.json").string(), nlohmann::json{{"speedup", 2.5}}, 1);
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.json"));
  EXPECT_EQ(nlohmann::json::parse(read_all(dir / "target.json")).at("speedup"), 2.5);
  aisp::write_json_file((dir / "plain.json").string(), nlohmann::json{{"a", 1}}, 1);  // a new file, by rename
  EXPECT_EQ(nlohmann::json::parse(read_all(dir / "plain.json")).at("a"), 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "plain.json.tmp"));
  std::filesystem::remove_all(dir);
}

TEST(write_json_file, writes_into_a_device_in_place) {
  aisp::write_json_file("/dev/null", nlohmann::json{{"a", 1}}, 1);
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}

}  // namespace
