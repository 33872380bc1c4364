#include "support/warm_heap.hpp"

#include <cstdlib>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace aisp {

std::size_t warm_host_heap(std::size_t bytes) {
#if defined(__GLIBC__)
  constexpr std::size_t chunk = std::size_t{16} << 20;  // under the mmap threshold set below
  constexpr int mmap_threshold = 32 << 20;               // glibc's largest (64-bit)
  constexpr int trim_threshold = 1 << 30;
  constexpr std::size_t page = 4096;  // a smaller stride costs nothing: a larger page is touched anyway
  if (mallopt(M_MMAP_THRESHOLD, mmap_threshold) != 1 || mallopt(M_TRIM_THRESHOLD, trim_threshold) != 1) return 0;
  std::vector<void*> blocks;
  blocks.reserve(bytes / chunk + 1);
  std::size_t touched = 0;
  for (; touched < bytes; touched += chunk) {
    void* block = std::malloc(chunk);
    if (block == nullptr) break;  // less memory than asked: warm what there is
    // Volatile stores, one a page: a memset before free() is dead code the compiler may drop,
    // and with it the malloc.
    auto* bytes_of = static_cast<volatile unsigned char*>(block);
    for (std::size_t at = 0; at < chunk; at += page) bytes_of[at] = 1;
    blocks.push_back(block);
  }
  for (void* block : blocks) std::free(block);
  return touched;
#else
  (void)bytes;
  return 0;
#endif
}

}  // namespace aisp
