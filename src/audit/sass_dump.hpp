// The SASS listings of an executable's device code, read with `cuobjdump`: the embedded device
// ELFs are extracted into a private scratch directory and dumped one per process, in parallel
// (Note [sass cache]).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace aisp {

struct command_output {
  std::string text;  // what it wrote to stdout
  bool exited_zero = false;
};

// cuobjdump's path: the first on PATH, else /usr/local/cuda/bin's; empty when there is none.
[[nodiscard]] std::string find_cuobjdump();

// Runs `command` with /bin/sh; nullopt when it could not be started.
[[nodiscard]] std::optional<command_output> run_command(const std::string& command) noexcept;

// The device ELFs in `directory`, sorted: every *.cubin, and any other file that starts with the
// ELF magic (the names `cuobjdump -xelf` gives are not documented).
[[nodiscard]] std::vector<std::filesystem::path> device_elf_files(const std::filesystem::path& directory);

// `tool -sass` of every device ELF that `tool -xelf all` extracts from `executable`, one text per
// ELF; nullopt when none was extracted or any dump failed, so that no kernel is silently missing.
// Never throws (the caller runs in std::async); the scratch directory is removed on every path.
[[nodiscard]] std::optional<std::vector<std::string>> sass_per_cubin(const std::string& tool,
                                                                      const std::string& executable) noexcept;

}  // namespace aisp
