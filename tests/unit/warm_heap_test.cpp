// Note [warm heap]: after warm_host_heap the touched bytes stay in the process's heap (glibc does
// not trim them) and a block of a PyTorch temporary's size comes from it, not from a fresh
// mapping. Runs in a forked child: the thresholds it fixes are process-wide.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "support/warm_heap.hpp"

namespace {

#if defined(__GLIBC__)
// The child's verdict as its exit status: 0 when every expectation held, else the first failed.
int warm_then_check() {
  const std::size_t asked = std::size_t{64} << 20;
  if (aisp::warm_host_heap(asked) < asked) return 1;
  const struct mallinfo2 after = mallinfo2();
  if (after.arena < asked) return 2;     // the heap kept its pages: nothing was trimmed
  if (after.fordblks < asked) return 3;  // ... and they are free for the next allocations
  const std::size_t mapped_before = after.hblkhd;
  void* temporary = std::malloc(std::size_t{2} << 20);  // a 2 MB tensor, as the tutorial pair's
  if (temporary == nullptr) return 4;
  const std::size_t mapped_during = mallinfo2().hblkhd;
  std::free(temporary);
  if (mapped_during != mapped_before) return 5;  // from the heap, not an mmap of fresh pages
  // The pages are resident: writing every page of a 16 MiB block of the warmed heap faults
  // (almost) none in; unwarmed, it would fault 4,096.
  const std::size_t block_bytes = std::size_t{16} << 20;
  auto* block = static_cast<volatile unsigned char*>(std::malloc(block_bytes));
  if (block == nullptr) return 4;
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  for (std::size_t at = 0; at < block_bytes; at += 4096) block[at] = 2;
  rusage after_writes{};
  getrusage(RUSAGE_SELF, &after_writes);
  std::free(const_cast<unsigned char*>(block));
  return after_writes.ru_minflt - before.ru_minflt < 64 ? 0 : 6;
}
#endif

TEST(warm_heap, touched_pages_stay_in_the_heap_and_serve_the_next_large_allocations) {
#if defined(__GLIBC__)
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(warm_then_check());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: fewer bytes touched than asked; 2: heap trimmed; 3: not free; "
                                       "4: malloc failed; 5: a 2 MB block was mmapped; 6: the warmed pages were not resident";
#else
  EXPECT_EQ(aisp::warm_host_heap(1 << 20), 0u);
#endif
}

}  // namespace
