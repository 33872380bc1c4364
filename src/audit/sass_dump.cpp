#include "audit/sass_dump.hpp"

#include <elf.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "support/paths.hpp"
#include "support/shell_quote.hpp"

namespace aisp {
namespace {

// A fresh private directory (mkdtemp: a new name, mode 0700), removed with its contents on every
// way out of the scope that holds it.
class scratch_directory {
 public:
  scratch_directory() {
    std::error_code error;
    std::string name = (std::filesystem::temp_directory_path(error) / "aisp-sass-XXXXXX").string();
    if (!error && mkdtemp(name.data()) != nullptr) path_ = name;
  }
  ~scratch_directory() {
    std::error_code error;
    if (!path_.empty()) std::filesystem::remove_all(path_, error);
  }
  scratch_directory(const scratch_directory&) = delete;
  scratch_directory& operator=(const scratch_directory&) = delete;

  // Empty when mkdtemp failed.
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

bool starts_with_elf_magic(const std::filesystem::path& file) {
  std::array<char, SELFMAG> head{};
  std::ifstream in(file, std::ios::binary);
  return in.read(head.data(), head.size()) && std::memcmp(head.data(), ELFMAG, SELFMAG) == 0;
}

// cuobjdump has no output directory option: it writes the ELFs to its working directory.
bool extract_device_elfs(const std::filesystem::path& tool, const std::filesystem::path& executable,
                         const std::filesystem::path& directory) {
  const auto extraction = run_command("cd " + shell_quoted(directory.string()) + " && " + shell_quoted(tool.string()) +
                                      " -xelf all " + shell_quoted(executable.string()) + " 2>/dev/null");
  return extraction && extraction->exited_zero;
}

// `tool -sass` of each file, at most one process per hardware thread at a time.
std::vector<std::optional<command_output>> dump_each(const std::filesystem::path& tool,
                                                     const std::vector<std::filesystem::path>& files) {
  std::vector<std::string> commands;  // built here, so that the workers cannot throw
  for (const auto& file : files) {
    commands.push_back(shell_quoted(tool.string()) + " -sass " + shell_quoted(file.string()) + " 2>/dev/null");
  }
  std::vector<std::optional<command_output>> outputs(commands.size());
  std::atomic<std::size_t> next{0};
  {
    const std::size_t worker_count = std::min<std::size_t>(commands.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::jthread> workers;  // joined at the end of this block, before `outputs` is read
    for (std::size_t w = 0; w < worker_count; ++w) {
      workers.emplace_back([&] {
        for (auto i = next++; i < commands.size(); i = next++) outputs[i] = run_command(commands[i]);
      });
    }
  }
  return outputs;
}

}  // namespace

std::optional<command_output> run_command(const std::string& command) noexcept {
  try {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (pipe == nullptr) return std::nullopt;
    command_output output;
    std::array<char, 1 << 16> chunk{};
    for (std::size_t got; (got = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) > 0;) output.text.append(chunk.data(), got);
    const int status = pclose(pipe.release());
    output.exited_zero = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return output;
  } catch (...) {  // bad_alloc: the same as not started
    return std::nullopt;
  }
}

std::string find_cuobjdump() { return find_program("cuobjdump", {"/usr/local/cuda/bin"}); }

std::vector<std::filesystem::path> device_elf_files(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (std::filesystem::directory_iterator entry(directory, error), end; !error && entry != end; entry.increment(error)) {
    const auto& file = entry->path();
    if (entry->is_regular_file(error) && (file.extension() == ".cubin" || starts_with_elf_magic(file))) files.push_back(file);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<std::vector<std::string>> sass_per_cubin(const std::string& tool, const std::string& executable) noexcept {
  try {
    // Absolute paths: the extraction runs in the scratch directory.
    std::error_code tool_error;
    std::error_code executable_error;
    const auto absolute_tool = std::filesystem::absolute(tool, tool_error);
    const auto absolute_executable = std::filesystem::absolute(executable, executable_error);
    const scratch_directory scratch;
    if (tool_error || executable_error || scratch.path().empty()) return std::nullopt;
    if (!extract_device_elfs(absolute_tool, absolute_executable, scratch.path())) return std::nullopt;
    const auto files = device_elf_files(scratch.path());
    if (files.empty()) return std::nullopt;
    std::vector<std::string> texts;
    for (auto& output : dump_each(absolute_tool, files)) {
      if (!output || !output->exited_zero) return std::nullopt;
      texts.push_back(std::move(output->text));
    }
    return texts;
  } catch (...) {  // std::jthread's system_error, bad_alloc: the caller's whole-binary dump still runs
    return std::nullopt;
  }
}

}  // namespace aisp
