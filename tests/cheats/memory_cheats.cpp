// Planted cheats of the memory rows (M1, M2, M6): the variant's memory is not the harness's
// memory: its own output buffer, an output written over an input, fresh pages faulted in on every
// call. Each must fail with its row's code. M3, M4 (device side) and M7 are in docs/validity.md.
// Run: aisp_cheats bench run --targets cheats
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <new>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// ---- M1: run() fills its own freshly allocated buffer and returns it by copying it out ----
void own_output_buffer(run_context& ctx) {
  std::vector<float> result(elements_of(ctx, "y"));
  affine(ctx.as<const float>("x"), result.data(), result.size());
  keep_alive(result.data());
  std::copy(result.begin(), result.end(), ctx.as<float>("y"));
}

// ---- M2: y = 1 - x is written over x, in place; y itself is never written ----
// 1 - x, not 2x + 1: repeated in place it flips between two values instead of running off to
// infinity, so every call changes x, the verified one included.
constexpr elementwise_math complement_math{[](double x) { return 1.0 - x; },
                                           [](float x) { return 1.0f - x; }, "y = 1 - x"};

void output_into_input(run_context& ctx) {
  float* x = ctx.as<float>("x");
  apply(complement_math, x, x, 0, elements_of(ctx, "x"));
}

// ---- M6: every call first-touches 4 MiB of fresh pages: ~1000 page faults per call ----
// mmap, not malloc: after the first free glibc raises its mmap threshold and keeps the pages,
// and the cheat would stop faulting after one call.
constexpr std::size_t fresh_bytes = std::size_t{4} << 20;
constexpr std::size_t page_bytes = 4096;

void fault_fresh_pages(run_context& ctx) {
  void* mapped = mmap(nullptr, fresh_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  auto* fresh = static_cast<unsigned char*>(mapped);
  for (std::size_t offset = 0; offset < fresh_bytes; offset += page_bytes) fresh[offset] = 1;
  keep_alive(fresh);
  munmap(mapped, fresh_bytes);
  affine(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x"));
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:m1_own_output_buffer", "M1",
                                             "allocates its result in run() and copies it out",
                                             aisp::cheats::own_output_buffer).tag("check:allocation-in-run"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:m2_output_into_input", "M2",
                                             "writes y over x and leaves y unwritten",
                                             aisp::cheats::output_into_input,
                                             aisp::cheats::complement_math).tag("check:input-mutation"));
AISP_REGISTER(aisp::cheats::elementwise_pair("cheats:m6_first_touch_per_call", "M6",
                                             "first-touches 4 MiB of fresh pages on every call",
                                             aisp::cheats::fault_fresh_pages).tag("check:page-faults"));
