#include "harness/program_environment.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "audit/elf_image.hpp"

namespace aisp {

// Note [live program environment]
// A red team's executable baseline program set NPY_DISABLE_CPU_FEATURES itself, before importing
// numpy (os.environ in Python, setenv in C), and ran numpy's scalar paths: 17.7x "faster" for
// the same program, every check passing, since /proc/<pid>/environ holds only the environment
// the program started with (round eleven, 2026-12-05). The worker is the program's parent, so
// it may read the program's memory (/proc/<pid>/mem): the C library's `environ` array, found
// through the program's own symbol for it (a copy relocated into the executable, as Python's is)
// or else the C library's. A program that sets a variable and takes it back before the worker
// looks is not seen; a statically linked one without symbols is read as it started.
namespace {

struct mapped_file {
  std::string path;
  std::uintptr_t base = 0;  // where its first page (file offset 0) is mapped
};

// The program's executable and C library, from its memory map.
std::vector<mapped_file> executable_and_libc(long pid, const std::string& executable) {
  std::vector<mapped_file> found;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  mapped_file exe, libc;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, permissions, offset, device, inode, path;
    fields >> range >> permissions >> offset >> device >> inode >> path;
    if (path.empty() || std::stoull(offset, nullptr, 16) != 0) continue;
    const std::uintptr_t start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    const auto name = path.substr(path.rfind('/') + 1);
    if (path == executable && exe.path.empty()) exe = {path, start};
    if (name.starts_with("libc.so") && libc.path.empty()) libc = {path, start};
  }
  for (auto& file : {exe, libc})
    if (!file.path.empty()) found.push_back(file);
  return found;
}

// The address of `environ` in a mapped file: its defined dynamic symbol for it, relocated.
std::optional<std::uintptr_t> environ_address(const mapped_file& file) {
  const elf_image image(file.path);
  for (const auto& [name, symbol] : image.symbols_in(".dynsym"))
    if (symbol.st_shndx != SHN_UNDEF && ELF64_ST_TYPE(symbol.st_info) == STT_OBJECT && (name == "environ" || name == "__environ"))
      return image.is_position_independent() ? file.base + symbol.st_value : symbol.st_value;
  return std::nullopt;
}

template <class T>
bool read_at(int memory, std::uintptr_t address, T& value) {
  return pread(memory, &value, sizeof value, static_cast<off_t>(address)) == static_cast<ssize_t>(sizeof value);
}

std::optional<std::string> read_string(int memory, std::uintptr_t address) {
  std::string text;
  char chunk[256];
  while (text.size() < 65536) {
    const ssize_t got = pread(memory, chunk, sizeof chunk, static_cast<off_t>(address + text.size()));
    if (got <= 0) return text.empty() ? std::nullopt : std::optional(text);
    const auto* end = static_cast<const char*>(std::memchr(chunk, '\0', static_cast<std::size_t>(got)));
    text.append(chunk, end != nullptr ? static_cast<std::size_t>(end - chunk) : static_cast<std::size_t>(got));
    if (end != nullptr) return text;
  }
  return text;
}

}  // namespace

std::optional<std::vector<std::string>> live_environment(long pid) {
  char executable[4096];
  const auto link = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t length = readlink(link.c_str(), executable, sizeof executable - 1);
  if (length <= 0) return std::nullopt;
  executable[length] = '\0';
  // Read after every visit: the ELF files are parsed once a program (a Python executable is
  // megabytes), keyed by the process and its executable (a reused pid names another).
  static std::map<std::pair<long, std::string>, std::optional<std::uintptr_t>> found;
  const auto key = std::pair{pid, std::string(executable)};
  if (!found.contains(key)) {
    std::optional<std::uintptr_t> address;
    for (const auto& file : executable_and_libc(pid, executable))
      if (!address) address = environ_address(file);
    found[key] = address;
  }
  const auto address = found[key];
  if (!address) return std::nullopt;
  const int memory = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (memory < 0) return std::nullopt;
  std::optional<std::vector<std::string>> entries;
  std::uintptr_t array = 0;
  if (read_at(memory, *address, array) && array != 0) {
    entries.emplace();
    for (std::uintptr_t slot = array, entry = 0; entries->size() < 16384 && read_at(memory, slot, entry) && entry != 0; slot += sizeof entry)
      if (auto text = read_string(memory, entry)) entries->push_back(std::move(*text));
  }
  close(memory);
  return entries;
}

}  // namespace aisp
