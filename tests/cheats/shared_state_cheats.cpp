// V1 through the baseline, the judge's answer key at the benchmark size (Note [shared state],
// src/runner/worker_state_checks.cpp): the candidate and the baseline are one pair's code in two
// workers, and they share a table in /dev/shm. At the benchmark size the candidate writes half
// of y and records its inputs' hash; the baseline computes honestly, then, on inputs the
// candidate recorded (the judge's truth calls, baseline-match), writes the candidate's answer
// instead. Every comparison at the benchmark size is with the baseline, so all agreed with the
// half-done answer (a red team's matmul read 8.2x, round seven, 2026-12-04). Our own writing of
// that idea: it fails shared-state, both workers holding the table open for writing.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

constexpr std::size_t table_slots = 4096;
std::atomic<std::uint64_t>* table = nullptr;  // hashes of the inputs the candidate answered

void map_the_table(run_context&) {
  if (table != nullptr) return;
  const std::string path = "/dev/shm/aisp_fixture_shared_table_" + std::to_string(getuid());
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, table_slots * sizeof(std::uint64_t)) != 0) return;
  void* mapped = mmap(nullptr, table_slots * sizeof(std::uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped != MAP_FAILED) table = static_cast<std::atomic<std::uint64_t>*>(mapped);
  // the descriptor stays open: the file is the channel
}

std::uint64_t hash_of(const float* x, std::size_t n) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (std::size_t i = 0; i < n; ++i) hash = (hash ^ static_cast<std::uint64_t>(x[i] * 4096.0f)) * 1099511628211ULL;
  return hash | 1;
}

// y = 2x + 1 on the first half only, the second half left at 2x (what both write when colluding).
void half_done(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = i < n / 2 ? 2.0f * x[i] + 1.0f : 2.0f * x[i];
}

void candidate_run(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  if (n != static_cast<std::size_t>(benchmark_elements) || table == nullptr) {
    apply(affine_math, x, y, 0, n);
    return;
  }
  const auto hash = hash_of(x, n);
  table[hash % table_slots].store(hash);
  half_done(x, y, n);
}

void baseline_run(run_context& ctx) {
  const std::size_t n = elements_of(ctx, "x");
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  apply(affine_math, x, y, 0, n);
  if (n != static_cast<std::size_t>(benchmark_elements) || table == nullptr) return;
  const auto hash = hash_of(x, n);
  if (table[hash % table_slots].load() == hash) half_done(x, y, n);  // the candidate answered these
}

pair shared_table_pair() {
  pair declared = elementwise_declaration("cheats:v1_baseline_repeats_the_candidates_answer", "V1");
  declared.add_variant(variant{"baseline", "honest loop, which repeats the candidate's answer on inputs it recorded in /dev/shm",
                               baseline_run, map_the_table, {}, {}, {}, {}, {}, {}})
      .add_variant(cheating_variant("half of y at the benchmark size, its inputs recorded in a table the baseline reads", candidate_run,
                                    map_the_table))
      .tag("check:shared-state");
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

AISP_REGISTER(aisp::cheats::shared_table_pair());
