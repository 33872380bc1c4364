// Note [write barrier]: a host pair's outputs are made read-only the moment run() returns, so a
// helper thread that writes one afterwards faults, however soon or late the scheduler lets it
// run. The fault is recorded and the page made writable again, so the helper goes on; the
// verified call's report names the output. Reading the outputs (hashes, files) is untouched.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace aisp {

struct guarded_range {
  std::string name;
  void* data = nullptr;   // page-aligned (host buffers are allocated on page boundaries)
  std::size_t bytes = 0;  // rounded up to whole pages by the barrier
};

class late_write_barrier {
 public:
  // Everything that allocates or installs happens here, before run(): arm() is only the
  // mprotect calls, so the barrier goes up within microseconds of run()'s return.
  explicit late_write_barrier(std::vector<guarded_range> ranges);
  ~late_write_barrier();  // makes every range writable again
  late_write_barrier(const late_write_barrier&) = delete;
  late_write_barrier& operator=(const late_write_barrier&) = delete;

  // Makes every range read-only. One armed barrier at a time (the verified call is serial).
  void arm();
  // The ranges written since arm() (each once), and lowers the barrier.
  [[nodiscard]] std::vector<std::string> release();

 private:
  std::vector<guarded_range> ranges_;
  bool armed_ = false;
};

}  // namespace aisp
