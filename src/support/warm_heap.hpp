// Note [warm heap]: a host pair's calls share the worker's heap with the harness. Between two
// timed calls the harness allocates (fresh inputs, sample records, a new sampler's flush
// buffer), so the heap's top moves up, and a call whose temporaries land above the old top
// touches pages the process never had: a minor fault a 4 KB page (~20 us each on a VM). A
// PyTorch call with two 2 MB temporaries then takes 7-14 ms instead of 0.9 ms on some samples,
// and S2 (outliers) failed an honest pair in about half the runs. glibc also serves blocks over
// its mmap threshold (dynamic, from 128 KB) with fresh mappings and trims the freed top back to
// the kernel. So before a host pair's code runs, the worker fixes both thresholds (no trim, no
// mmap below 32 MiB) and touches `bytes` of heap once (one madvise(MADV_POPULATE_WRITE) a
// block, 15x faster than a store a page), then frees it: later allocations reuse touched pages,
// as a long-running program's allocator does. Measured here (2 cores, no GPU,
// 2026-11-29), `bench run` of examples/python/host_pairs.py at --max-time 0.5: 8 runs of 8 pass
// S2 with it; with the thresholds fixed but nothing touched, 7 of 8 failed (5-7 samples over 5x
// the median); as before (neither), about half.
#pragma once

#include <cstddef>

namespace aisp {

inline constexpr std::size_t warm_heap_default_bytes = std::size_t{128} << 20;

// Glibc only; elsewhere a no-op. Returns the bytes touched (0 where it did nothing).
std::size_t warm_host_heap(std::size_t bytes = warm_heap_default_bytes);

}  // namespace aisp
