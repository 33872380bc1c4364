// How a library peer's setup() picks among the library's candidate configurations (cuBLASLt
// algorithms, cuDNN plans): each runs on the real operands, the fastest call stands for it, and a
// later candidate displaces the one held only by a margin. Host-only.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <vector>

namespace aisp {

// Note [autotune margin]: a later candidate takes the place of the one held only when it is
// faster by more than this fraction: within it, timing noise would decide, and two workers
// running the same code (a baseline and its noise twin) could settle on different choices.
inline constexpr double autotune_margin = 0.02;
[[nodiscard]] constexpr bool autotune_displaces(double challenger_s, double holder_s) {
  return challenger_s < holder_s * (1.0 - autotune_margin);
}

// Times candidates one after another with one set of CUDA events.
class candidate_timer {
 public:
  candidate_timer(int warm_calls, int timed_calls);
  candidate_timer(const candidate_timer&) = delete;
  candidate_timer& operator=(const candidate_timer&) = delete;
  ~candidate_timer();

  // The fastest of the timed calls of `call` on `stream`, after the untimed warm calls, in
  // seconds; nullopt when a call returned false (the library refused it) or a kernel failed to
  // launch. A failed launch leaves no sticky error, only the error slot, which this takes: call
  // it with no error pending (cudaPeekAtLastError first, so one of setup()'s own is not lost).
  [[nodiscard]] std::optional<double> fastest_s(const std::function<bool()>& call, cudaStream_t stream);

 private:
  int warm_calls_;
  std::vector<cudaEvent_t> marks_;  // one more than the timed calls
};

}  // namespace aisp
