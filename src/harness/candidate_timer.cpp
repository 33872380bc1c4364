#include "aisp/candidate_timer.hpp"

#include <algorithm>
#include <limits>

#include "aisp/check.hpp"

namespace aisp {

candidate_timer::candidate_timer(int warm_calls, int timed_calls) : warm_calls_(warm_calls) {
  AISP_EXPECTS(timed_calls > 0, "a candidate needs at least one timed call");
  try {
    for (int i = 0; i <= timed_calls; ++i) {
      cudaEvent_t event = nullptr;
      AISP_CUDA_CHECK(cudaEventCreate(&event));
      marks_.push_back(event);
    }
  } catch (...) {
    for (auto event : marks_) static_cast<void>(cudaEventDestroy(event));
    throw;
  }
}

candidate_timer::~candidate_timer() {
  for (auto event : marks_) static_cast<void>(cudaEventDestroy(event));  // nobody is left to tell
}

std::optional<double> candidate_timer::fastest_s(const std::function<bool()>& call, cudaStream_t stream) {
  bool ran = true;
  for (int w = 0; ran && w < warm_calls_; ++w) ran = call();
  for (std::size_t t = 0; ran && t + 1 < marks_.size(); ++t) {
    AISP_CUDA_CHECK(cudaEventRecord(marks_[t], stream));
    ran = call();
  }
  if (ran) AISP_CUDA_CHECK(cudaEventRecord(marks_.back(), stream));
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  const bool launched = cudaGetLastError() == cudaSuccess;
  if (!ran || !launched) return std::nullopt;
  double fastest = std::numeric_limits<double>::infinity();
  for (std::size_t t = 0; t + 1 < marks_.size(); ++t) {
    float ms = 0;
    AISP_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[t], marks_[t + 1]));
    fastest = std::min(fastest, 1e-3 * static_cast<double>(ms));
  }
  return fastest;
}

}  // namespace aisp
