#include "harness/fp_mode_sampler.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "support/clock_seconds.hpp"

namespace aisp {

// Note [sampled fp mode]
// The worker reads its serving thread's floating-point mode (MXCSR: flush-to-zero,
// denormals-are-zero, rounding) after setup() and after every visit (Note [floating-point
// environment]). A candidate that sets flush-to-zero as each call starts and puts the mode back
// before it returns is never seen there: red team fourteen's plugin read 1.28-2.85x on subnormal
// terms that change its outputs by 1e-38 (2026-12-05). So timed windows drawn at random (each
// with its length's share of 400 us, one in eight at least) get a signal at a random point
// inside: a one-shot timer on the monotonic clock,
// armed as the window opens to fire within the last window's length, sent to the serving
// thread. The handler reads the mode the signal interrupted (the saved MXCSR in its ucontext)
// and keeps each distinct one. The harness never changes the mode, so a mode found there that
// the worker did not start with was set by the variant, inside its calls, and the judge holds it
// like the others. A thread that took none of 8 or more such signals kept them out (a handler
// of its own, the signal ignored) and fails too. A CPU-time timer fires only on the scheduler's
// tick: in a short run's sub-millisecond windows it never did. The signal costs its sample a few
// microseconds (about 1% of a sample of 400 us or more, where every sample gets one; a shorter
// sample's chance falls with its length), every variant alike. Not seen: a
// variant that blocks every signal while its mode is changed (the signal waits, and is taken once
// the mode is back), threads other than the serving thread, an executable pair's program (the
// worker only waits there, and a signal would interrupt its waits), and GPU pairs.
namespace {

constexpr std::size_t max_modes = 8;
constexpr unsigned one_window_in = 8;
std::atomic<std::uint64_t> taken{0};
std::atomic<unsigned> modes[max_modes];
std::atomic<std::size_t> mode_count{0};
timer_t timer{};
long timer_id = -1;
bool started = false;
bool sampling = false;
std::uint64_t draws = 0x9e3779b97f4a7c15ULL;
std::uint64_t armed_windows = 0;
double last_window_s = 0;
double opened_at_s = 0;

int sampling_signal() { return SIGRTMAX - 5; }

double monotonic_s() { return clock_seconds(CLOCK_MONOTONIC); }

std::uint64_t next_draw() {  // xorshift: which windows, and where in them; nothing to keep secret
  draws ^= draws << 13;
  draws ^= draws >> 7;
  draws ^= draws << 17;
  return draws;
}

void on_sample(int, siginfo_t*, void* context) {
#if defined(__x86_64__)
  const auto* interrupted = static_cast<const ucontext_t*>(context);
  if (interrupted == nullptr || interrupted->uc_mcontext.fpregs == nullptr) return;
  const unsigned mode = interrupted->uc_mcontext.fpregs->mxcsr & ~0x3fu;  // as floating_point_mode()
  taken.fetch_add(1, std::memory_order_relaxed);
  const std::size_t known = mode_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < known; ++i)
    if (modes[i].load(std::memory_order_relaxed) == mode) return;
  if (known < max_modes) {  // one thread handles its own signal: no other writer
    modes[known].store(mode, std::memory_order_relaxed);
    mode_count.store(known + 1, std::memory_order_release);
  }
#else
  static_cast<void>(context);
#endif
}

// One signal after `after_s`; 0 disarms.
void fire_after(double after_s) {
  itimerspec when{};
  const auto whole = static_cast<time_t>(after_s);
  when.it_value = {whole, static_cast<long>(std::llround((after_s - static_cast<double>(whole)) * 1e9))};
  timer_settime(timer, 0, &when, nullptr);
}

}  // namespace

bool start_fp_mode_sampler() {
#if defined(__x86_64__) && defined(__linux__)
  if (started) return true;
  struct sigaction action {};
  action.sa_sigaction = on_sample;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(sampling_signal(), &action, nullptr) != 0) return false;
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = sampling_signal();
  event._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) return false;
  timer_id = static_cast<long>(reinterpret_cast<std::intptr_t>(timer));
  draws ^= static_cast<std::uint64_t>(monotonic_s() * 1e9);
  started = true;
  return true;
#else
  return false;
#endif
}

void begin_fp_mode_sampling() {
  if (!started) return;
  taken.store(0, std::memory_order_relaxed);
  mode_count.store(0, std::memory_order_release);
  armed_windows = 0;
  sampling = true;
}

void open_fp_mode_window() {
  if (!sampling) return;
  // Each window's chance: its share of 400 us, so a signal's few microseconds cost a sample at
  // most about 1% of its time; one window in eight at least.
  const double chance = std::clamp(last_window_s / 400e-6, 1.0 / one_window_in, 1.0);
  if (last_window_s > 0 && static_cast<double>(next_draw() % 1024) < chance * 1024.0) {
    const double where = 0.05 + 0.9 * static_cast<double>(next_draw() % 1024) / 1024.0;
    fire_after(std::max(1e-6, where * last_window_s));
    ++armed_windows;
  }
  opened_at_s = monotonic_s();
}

void close_fp_mode_window() {
  if (!sampling) return;
  last_window_s = monotonic_s() - opened_at_s;
  fire_after(0);
}

fp_mode_samples end_fp_mode_sampling() {
  fp_mode_samples found;
  if (!sampling) return found;
  sampling = false;
  found.armed_windows = armed_windows;
  found.taken = taken.load(std::memory_order_relaxed);
  const std::size_t known = mode_count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < known; ++i) found.modes.push_back(modes[i].load(std::memory_order_relaxed));
  return found;
}

long fp_mode_sampler_timer_id() { return timer_id; }

}  // namespace aisp
