#include "harness/worker_state.hpp"

#include <malloc.h>

#include <cstdlib>
#include <map>
#include <string>

namespace {

std::map<std::string, const char* (*)()>& probes() {
  static std::map<std::string, const char* (*)()> registered;
  return registered;
}

// Whether glibc serves a 1 MiB block from its own mapping: the harness fixes the threshold at
// 32 MiB for Python workers (Note [python allocator]) and warms every host worker's heap past it
// (Note [warm heap]), after which glibc's dynamic threshold only rises; a variant that lowered it
// (mallopt(M_MMAP_THRESHOLD, ...)) makes every large temporary a fresh mapping, its pages faulted
// in on every call (red team six's baseline: 1,026 faults a call, 3.4x for the same torch code).
bool megabyte_block_is_mapped() {
  const auto before = mallinfo2().hblks;
  void* block = std::malloc(std::size_t{1} << 20);
  const auto during = mallinfo2().hblks;
  std::free(block);
  return during > before;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void aisp_register_state_probe(const char* name, const char* (*probe)()) {
  if (name != nullptr && probe != nullptr) probes()[name] = probe;
}

namespace aisp {

nlohmann::json read_worker_state() {
  // Twice: another thread's mapping made between the two counts of one probe reads as ours.
  const bool mapped = megabyte_block_is_mapped() && megabyte_block_is_mapped();
  nlohmann::json state = {{"allocator", {{"megabyte_block_mapped", mapped}}}};
  for (const auto& [name, probe] : probes()) {
    const char* text = probe();
    auto read = nlohmann::json::parse(text != nullptr ? text : "null", nullptr, false);
    state[name] = read.is_object() ? read : nlohmann::json{{"unreadable", text != nullptr ? text : ""}};
  }
  return state;
}

}  // namespace aisp
