#include "harness/shared_host_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>

#include "aisp/check.hpp"

namespace aisp {
namespace {

struct shared_region {
  int fd;
  std::size_t bytes;
};

std::mutex& regions_mutex() {
  static std::mutex m;
  return m;
}
std::map<const void*, shared_region>& regions() {
  static std::map<const void*, shared_region> r;
  return r;
}

}  // namespace

void* allocate_shared_host(std::size_t bytes) {
  const int fd = memfd_create("aisp-buffer", MFD_CLOEXEC);
  AISP_EXPECTS(fd >= 0, "memfd_create failed for a shared host buffer");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    AISP_EXPECTS(false, "could not size a shared host buffer of " + std::to_string(bytes) + " bytes");
  }
  void* pointer = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (pointer == MAP_FAILED) {
    close(fd);
    AISP_EXPECTS(false, "could not map a shared host buffer of " + std::to_string(bytes) + " bytes");
  }
  const std::lock_guard lock(regions_mutex());
  regions()[pointer] = {fd, bytes};
  return pointer;
}

bool release_shared_host(void* pointer) {
  shared_region region{};
  {
    const std::lock_guard lock(regions_mutex());
    const auto found = regions().find(pointer);
    if (found == regions().end()) return false;
    region = found->second;
    regions().erase(found);
  }
  munmap(pointer, region.bytes);
  close(region.fd);
  return true;
}

int shared_host_fd(const void* pointer) {
  const std::lock_guard lock(regions_mutex());
  const auto found = regions().find(pointer);
  return found == regions().end() ? -1 : found->second.fd;
}

}  // namespace aisp

extern "C" __attribute__((visibility("default"))) int aisp_host_buffer_fd(const void* pointer) {
  return aisp::shared_host_fd(pointer);
}
