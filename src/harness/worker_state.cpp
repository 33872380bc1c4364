#include "harness/worker_state.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/thread_placement.hpp"
#include "harness/worker_environment.hpp"

namespace {

std::map<std::string, const char* (*)()>& probes() {
  static std::map<std::string, const char* (*)()> registered;
  return registered;
}

// What glibc does with a block: serve it from a mapping of its own, and give the heap's top back
// to the system when it is freed. The harness fixes both thresholds for Python workers (Note
// [python allocator]: mmap 32 MiB, trim 1 GiB) and warms every host worker's heap (Note [warm
// heap]), so neither happens there; a variant that lowered them (mallopt M_MMAP_THRESHOLD and
// M_TRIM_THRESHOLD) made every large temporary fresh pages faulted in on every call (red team
// six's baseline: 1,026 faults a call, 3.4x for the same torch code). Read at 1 MiB and just
// under the harness's 32 MiB: a threshold set just above the smaller probe still sends every
// temporary between it and 32 MiB to fresh mappings (red team eight, 2026-12-04).
struct block_fate {
  bool mapped = false;
  bool trimmed = false;
};

block_fate fate_of_block(std::size_t bytes) {
  const auto before = mallinfo2();
  void* volatile block = std::malloc(bytes);  // volatile: the pair is not elided
  const auto during = mallinfo2();
  std::free(block);
  const auto after = mallinfo2();
  return {during.hblks > before.hblks, after.arena < during.arena};
}

// Whether glibc fills each block it hands out or takes back (mallopt M_PERTURB): a red team's
// baseline set it, and every allocation of its torch code became a memset (round eight,
// 2026-12-04). It cannot be read back, so: a block filled with our pattern, freed and handed out
// again (the same block), keeps the pattern past the free lists' bookkeeping; under M_PERTURB
// every byte reads the complement of the perturb byte instead. 64 KiB: glibc's per-thread cache
// (blocks up to about 1 KiB) skips the perturbing, so a small probe reads nothing; larger than
// that but under every mmap threshold. Two patterns, so that a perturb byte whose complement is
// one of them is still seen.
bool allocations_perturbed() {
  constexpr std::size_t bytes = std::size_t{64} << 10;
  constexpr std::size_t kept_from = 64;  // past what the free lists write into a freed block
  for (const unsigned char pattern : {static_cast<unsigned char>(0x5a), static_cast<unsigned char>(0x3c)}) {
    auto* volatile block = static_cast<unsigned char*>(std::malloc(bytes));
    if (block == nullptr) return false;
    std::memset(block, pattern, bytes);
    std::free(block);
    auto* volatile again = static_cast<unsigned char*>(std::malloc(bytes));
    bool uniform_other = again == block;  // another block (another thread took it) says nothing
    const volatile unsigned char* read = again;
    for (std::size_t i = kept_from; uniform_other && i < bytes; ++i)
      uniform_other = read[i] == read[kept_from] && read[i] != pattern;
    std::free(again);
    if (uniform_other) return true;
  }
  return false;
}

// Note [shared state]: the files this worker could write to and another process could read at
// the same time: shared writable mappings (/proc/self/maps, 's' and 'w') and descriptors open for
// writing to a regular file, each as "device#inode" with its path. Not the harness's own: memfds
// (its host buffers), device nodes but /dev/shm, and descriptors 0-2 (the channel, its stdout
// file, its log).
nlohmann::json shared_writable_files() {
  std::map<std::string, std::string> found;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, path;
    unsigned long long inode = 0;
    if (!(fields >> range >> perms >> offset >> device >> inode) || perms.size() < 4 || perms[1] != 'w' || perms[3] != 's' || inode == 0)
      continue;
    std::getline(fields >> std::ws, path);
    if (path.empty() || path.starts_with("/memfd:") || (path.starts_with("/dev/") && !path.starts_with("/dev/shm/"))) continue;
    const auto colon = device.find(':');
    if (colon == std::string::npos) continue;
    const auto part = [&](std::size_t from, std::size_t count) {
      return static_cast<unsigned>(std::strtoul(device.substr(from, count).c_str(), nullptr, 16));
    };
    const dev_t number = makedev(part(0, colon), part(colon + 1, std::string::npos));
    found[std::to_string(number) + "#" + std::to_string(inode)] = path;
  }
  if (DIR* fds = opendir("/proc/self/fd")) {
    while (const dirent* entry = readdir(fds)) {
      const int fd = std::atoi(entry->d_name);
      if (entry->d_name[0] == '.' || fd <= 2 || fd == dirfd(fds)) continue;
      struct stat st {};
      const int flags = fcntl(fd, F_GETFL);
      if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || flags < 0 || (flags & O_ACCMODE) == O_RDONLY) continue;
      char path[512] = {};
      const std::string link = std::string("/proc/self/fd/") + entry->d_name;
      const auto length = readlink(link.c_str(), path, sizeof path - 1);
      if (length <= 0 || std::string(path).starts_with("/memfd:")) continue;
      found[std::to_string(st.st_dev) + "#" + std::to_string(st.st_ino)] = path;
    }
    closedir(fds);
  }
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [id, path] : found) files.push_back({{"id", id}, {"path", path}});
  return files;
}

}  // namespace

// The first registration of a name holds: pair code calling this later (a Python pair through
// ctypes) cannot put its own reading in place of the bridge's.
extern "C" __attribute__((visibility("default"))) void aisp_register_state_probe(const char* name, const char* (*probe)()) {
  if (name != nullptr && probe != nullptr) probes().try_emplace(name, probe);
}

namespace {

// Note [protected inputs]: whether any page of the host inputs is mapped without write access.
// A red team's candidate made its input read-only in setup() with a SIGSEGV handler of its own:
// the harness's fill of fresh inputs before each call then faulted page by page into the
// handler, which computed the answer from each finished page, untimed; run() only copied it and
// locked the input again. 112.8x for the same loop (round eight, 2026-12-04). The input is left
// locked between calls, so after setup() and after every visit it reads here.
bool inputs_write_protected(const std::vector<std::pair<const void*, std::size_t>>& inputs) {
  if (inputs.empty()) return false;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long long start = 0;
    unsigned long long end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %4s", &start, &end, perms) != 3 || perms[1] == 'w') continue;
    for (const auto& [data, bytes] : inputs) {
      const auto first = reinterpret_cast<std::uintptr_t>(data);
      if (bytes > 0 && first < end && first + bytes > start) return true;
    }
  }
  return false;
}

// Note [library state]
// A red team's Python baseline called oneDNN's own C API through ctypes in setup(),
// dnnl_set_max_cpu_isa(sse41) on the libdnnl.so.2 Debian's torch links, and every later
// convolution was compiled for SSE4.1 instead of AVX-512: 2.33x "faster" for the same F.conv2d,
// the ONEDNN_MAX_CPU_ISA variable's effect without the variable (red team twelve, 2026-12-05).
// Where the worker has oneDNN loaded as a library of its own, the instruction set it will use is
// read with the rest of the worker's state; the first reading, before any variant's setup(),
// also fixes it (oneDNN takes the cap only before its first use), so a later cap fails to apply.
nlohmann::json library_state() {
  nlohmann::json libraries = nlohmann::json::object();
  for (const char* name : {"libdnnl.so.3", "libdnnl.so.2"}) {
    void* handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    using isa_reader = int (*)();
    if (const auto read = reinterpret_cast<isa_reader>(dlsym(handle, "dnnl_get_effective_cpu_isa")); read != nullptr)
      libraries["onednn_cpu_isa"] = read();
    dlclose(handle);
    break;
  }
  return libraries;
}

}  // namespace

namespace aisp {

nlohmann::json read_worker_state(bool shared_files, const std::vector<std::pair<const void*, std::size_t>>& inputs) {
  // Twice: another thread's allocation between the readings of one probe reads as ours.
  constexpr std::size_t megabyte = std::size_t{1} << 20;
  constexpr std::size_t under_harness_threshold = std::size_t{24} << 20;
  const auto small = std::pair{fate_of_block(megabyte), fate_of_block(megabyte)};
  const auto large = std::pair{fate_of_block(under_harness_threshold), fate_of_block(under_harness_threshold)};
  nlohmann::json state = {{"allocator",
                           {{"megabyte_block_mapped", small.first.mapped && small.second.mapped},
                            {"large_block_mapped", large.first.mapped && large.second.mapped},
                            {"heap_trimmed_on_free", large.first.trimmed && large.second.trimmed},
                            {"allocations_perturbed", allocations_perturbed() && allocations_perturbed()}}},
                          {"shared_files", shared_files ? shared_writable_files() : nlohmann::json::array()},
                          {"buffers", {{"inputs_write_protected", inputs_write_protected(inputs)}}},
                          {"environment", environment_changes()},  // Note [worker environment]
                          {"placement", threads_placed_apart()},   // Note [thread placement]
                          {"libraries", library_state()}};         // Note [library state]
  for (const auto& [name, probe] : probes()) {
    const char* text = probe();
    auto read = nlohmann::json::parse(text != nullptr ? text : "null", nullptr, false);
    state[name] = read.is_object() ? read : nlohmann::json{{"unreadable", text != nullptr ? text : ""}};
  }
  return state;
}

}  // namespace aisp
