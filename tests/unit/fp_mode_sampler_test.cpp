// Note [sampled fp mode] (src/harness/fp_mode_sampler.cpp): the serving thread's floating-point
// mode read from inside its timed windows, where a variant that restores it before returning
// hides it from every reading after the call.
#include <gtest/gtest.h>

#include <signal.h>
#include <time.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cstdint>

#include "harness/fp_mode_sampler.hpp"
#include "harness/process_probes.hpp"

namespace {

constexpr unsigned flush_to_zero_and_denormals_are_zero = 0x8040;

double thread_cpu_s() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// `windows` windows of 0.5 ms of spinning (every one sampled at that length), the mode switched
// to flush-to-zero inside each and put back before it closes.
aisp::fp_mode_samples windows_with_flush_to_zero_inside(int windows) {
  aisp::begin_fp_mode_sampling();
  volatile std::uint64_t sink = 0;
  for (int window = 0; window < windows; ++window) {
    aisp::open_fp_mode_window();
    const unsigned before = _mm_getcsr();
    _mm_setcsr(before | flush_to_zero_and_denormals_are_zero);
    for (const double until = thread_cpu_s() + 0.5e-3; thread_cpu_s() < until;) sink = sink + 1;
    _mm_setcsr(before);
    aisp::close_fp_mode_window();
  }
  return aisp::end_fp_mode_sampling();
}

TEST(fp_mode_sampler, finds_a_mode_set_and_restored_inside_the_windows) {
  ASSERT_TRUE(aisp::start_fp_mode_sampler());
  const unsigned own = aisp::floating_point_mode();
  const auto found = windows_with_flush_to_zero_inside(40);
  EXPECT_GE(found.armed_windows, 30u);  // the first window has no length to aim at; the rest are all chosen
  EXPECT_GE(found.taken, found.armed_windows * 3 / 4) << "signals set inside the windows must land there";
  EXPECT_NE(std::find(found.modes.begin(), found.modes.end(), own | flush_to_zero_and_denormals_are_zero), found.modes.end());
  EXPECT_EQ(aisp::floating_point_mode(), own);
}

TEST(fp_mode_sampler, a_signal_kept_out_arrives_nowhere_and_outside_sampling_nothing_is_armed) {
  ASSERT_TRUE(aisp::start_fp_mode_sampler());
  struct sigaction ignored {};
  ignored.sa_handler = SIG_IGN;
  struct sigaction kept {};
  ASSERT_EQ(sigaction(SIGRTMAX - 5, &ignored, &kept), 0);
  const auto found = windows_with_flush_to_zero_inside(20);
  ASSERT_EQ(sigaction(SIGRTMAX - 5, &kept, nullptr), 0);
  EXPECT_GE(found.armed_windows, aisp::fp_mode_unsampled_windows);
  EXPECT_EQ(found.taken, 0u);
  aisp::open_fp_mode_window();  // not sampling: no window is armed, nothing is counted
  aisp::close_fp_mode_window();
  EXPECT_EQ(aisp::end_fp_mode_sampling().armed_windows, 0u);
}

}  // namespace
