// Note [warm heap]: after warm_host_heap the touched bytes stay in the process's heap (glibc does
// not trim them) and a block of a PyTorch temporary's size comes from it, not from a fresh
// mapping. Runs in a forked child: the thresholds it fixes are process-wide.
#include <gtest/gtest.h>

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
  return mapped_during == mapped_before ? 0 : 5;  // from the heap, not an mmap of fresh pages
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
                                       "4: malloc failed; 5: a 2 MB block was mmapped";
#else
  EXPECT_EQ(aisp::warm_host_heap(1 << 20), 0u);
#endif
}

}  // namespace
