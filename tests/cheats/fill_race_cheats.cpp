// Planted cheat of red team fifteen's class (2026-12-05): work done while the harness writes a
// sample's fresh inputs. The host fill writes the inputs front to back, one thread below 2^20
// elements, into pages a helper thread can watch; the helper computes each chunk as soon as it is
// written, so its CPU fell between the sampler's readings (Note [work during the fill],
// src/harness/host_sampler.cpp). Now the inputs appear in one quick copy inside the readings, and
// the helper's work from there to the window fails worker-cpu's work before the window.
// Run: aisp_cheats bench run --targets cheats:l5_pool_follows_the_input_fill,declared_pools:halves_each_call
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "fixture_kit.hpp"

namespace aisp::cheats {
namespace {

// Under the parallel fill's 2^20 elements: one thread drew x, in order, over ~1.5 ms.
constexpr std::int64_t fill_race_elements = std::int64_t{1} << 19;
constexpr std::size_t chunk = 4096;
// The share of a call the helper takes on before the call.
constexpr double followed_share = 0.85;

// y = sum_k x / (k + x^2), k = 1..6: a few nanoseconds an element, so a call is worth following.
constexpr elementwise_math rational_math{
    [](double x) {
      double sum = 0;
      for (int k = 1; k <= 6; ++k) sum += x / (k + x * x);
      return sum;
    },
    [](float x) {
      float sum = 0;
      for (int k = 1; k <= 6; ++k) sum += x / (static_cast<float>(k) + x * x);
      return sum;
    },
    "y = sum_k x / (k + x^2), k = 1..6"};

std::uint32_t bits_at(const float* at) { return std::bit_cast<std::uint32_t>(*static_cast<const volatile float*>(at)); }

// A declared pool of one helper that takes half of every call (Note [declared threads]), as both
// variants run. The cheat's helper also follows the fill: after each call it notes every followed
// chunk's last input; a chunk whose last element changed has been written, so it computes that
// chunk into its own memory with a copy of its inputs, on through the output fill and the flush
// (red team fifteen's stopped at the output fill, where the readings then began). run() takes
// the chunks whose copies still match.
class halving_pool {
 public:
  explicit halving_pool(bool follows_the_fill) : follows_(follows_the_fill) { std::thread([this] { serve(); }).detach(); }

  void run(const float* x, float* y, std::size_t n) {
    std::unique_lock hold(lock_);
    armed_ = false;
    std::size_t ready = 0;
    if (x == x_ && y == y_ && n == n_ && std::memcmp(copies_.data(), x, done_ * chunk * sizeof(float)) == 0) ready = done_ * chunk;
    std::memcpy(y, answers_.data(), ready * sizeof(float));
    const std::size_t half = ready + (n - ready) / 2;
    job_ = {x, y, half, n};
    posted_ = true;
    finished_ = false;
    wake_.notify_all();
    hold.unlock();
    apply(rational_math, x, y, ready, half);
    hold.lock();
    wake_.wait(hold, [this] { return finished_; });
    if (follows_) arm(x, y, n);
  }

 private:
  struct half_call {
    const float* x = nullptr;
    float* y = nullptr;
    std::size_t begin = 0;
    std::size_t end = 0;
  };

  void arm(const float* x, float* y, std::size_t n) {
    x_ = x;
    y_ = y;
    n_ = n;
    followed_ = n / chunk < 4 ? 0 : static_cast<std::size_t>(followed_share * static_cast<double>(n / chunk));
    answers_.resize(n);
    copies_.resize(n);
    last_seen_.resize(followed_);
    for (std::size_t c = 0; c < followed_; ++c) last_seen_[c] = bits_at(x + c * chunk + chunk - 1);
    done_ = 0;
    armed_ = followed_ > 0;
    wake_.notify_all();
  }

  void serve() {
    std::unique_lock hold(lock_);
    for (;;) {
      if (posted_) {
        posted_ = false;
        const half_call call = job_;
        hold.unlock();
        apply(rational_math, call.x, call.y, call.begin, call.end);
        hold.lock();
        finished_ = true;
        wake_.notify_all();
      } else if (armed_ && done_ < followed_) {
        follow_one_step(hold);
      } else {
        wake_.wait(hold);
      }
    }
  }

  void follow_one_step(std::unique_lock<std::mutex>& hold) {
    if (bits_at(x_ + done_ * chunk + chunk - 1) != last_seen_[done_]) {
      std::memcpy(copies_.data() + done_ * chunk, x_ + done_ * chunk, chunk * sizeof(float));
      apply(rational_math, x_ + done_ * chunk, answers_.data() + done_ * chunk, 0, chunk);
      ++done_;
    } else if (done_ > 0) {
      hold.unlock();  // mid-fill: the fill is a few microseconds a chunk ahead
      std::this_thread::yield();
      hold.lock();
    } else {
      wake_.wait_for(hold, std::chrono::microseconds(500));  // dozes until the fill starts
    }
  }

  const bool follows_;
  std::mutex lock_;
  std::condition_variable wake_;
  half_call job_;
  bool posted_ = false;
  bool finished_ = false;
  const float* x_ = nullptr;
  float* y_ = nullptr;
  std::size_t n_ = 0;
  std::size_t followed_ = 0;
  std::size_t done_ = 0;
  bool armed_ = false;
  std::vector<std::uint32_t> last_seen_;
  std::vector<float> answers_;
  std::vector<float> copies_;
};

halving_pool* pool = nullptr;

void start_the_pool(run_context&) {
  if (pool == nullptr) pool = new halving_pool(false);
}
void start_the_following_pool(run_context&) {
  if (pool == nullptr) pool = new halving_pool(true);
}
void on_the_pool(run_context& ctx) { pool->run(ctx.as<const float>("x"), ctx.as<float>("y"), elements_of(ctx, "x")); }

pair fill_race_pair(std::string target, bool follows) {
  pair declared = follows ? elementwise_declaration(std::move(target), "L5", rational_math, dtype::f32, fill_race_elements)
                          : honest_elementwise_declaration(std::move(target), rational_math, dtype::f32, fill_race_elements);
  declared.host_threads(2, "the caller and one helper started in setup(), each half of a call")
      .add_variant(variant{"baseline", "halves each call with its one helper", on_the_pool, start_the_pool, {}, {}, {}, {}, {}, {}})
      .add_variant(follows ? cheating_variant("its helper also computes each chunk of the inputs as the harness writes it, "
                                              "before the output fill",
                                              on_the_pool, start_the_following_pool)
                           : variant{"optimized", "the same halves", on_the_pool, start_the_pool, {}, {}, {}, {}, {}, {}});
  return declared;
}

}  // namespace
}  // namespace aisp::cheats

namespace cheats = aisp::cheats;

AISP_REGISTER(cheats::fill_race_pair("cheats:l5_pool_follows_the_input_fill", true).tag("check:worker-cpu"));
AISP_REGISTER(cheats::fill_race_pair("declared_pools:halves_each_call", false));
