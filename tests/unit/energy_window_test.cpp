// The energy window opens and closes on the counter's steps (Note [energy window edges]).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "runner/energy_window.hpp"

namespace aisp {
namespace {

// A simulated card: the counter steps every 100 ms to the energy spent so far at `watts`; a visit
// takes `visit_s` of simulated time and makes `calls_per_visit` calls.
struct simulated_card {
  double t = 0.037;  // not on a step
  double watts = 400;
  double visit_s = 0.02;
  int calls_per_visit = 10;
  bool frozen = false;
  int visits = 0;
  [[nodiscard]] double counter() const { return frozen ? 5.0 : watts * 0.1 * std::floor(t / 0.1); }
  [[nodiscard]] energy_window_probe probe() {
    return {.read_joules = [this]() -> std::optional<double> { return counter(); },
            .run_visit = [this] { t += visit_s; ++visits; return calls_per_visit; },
            .now_s = [this] { return t; },
            .pause = [this] { t += 0.001; }};
  }
};

TEST(energy_window, opens_and_closes_on_counter_steps_so_the_power_is_within_one_visit) {
  simulated_card card;
  const auto window = measure_aligned_energy(card.probe(), 0.5, 0.3);
  ASSERT_TRUE(window.has_value());
  EXPECT_GE(window->seconds, 0.5);
  EXPECT_LT(window->seconds, 0.5 + 0.1 + card.visit_s);
  const double joules_per_call = window->joules / window->calls;
  const double true_joules_per_call = card.watts * card.visit_s / card.calls_per_visit;
  // Energy counted to the closing step, calls to the end of the visit that saw it.
  EXPECT_NEAR(joules_per_call, true_joules_per_call, true_joules_per_call * card.visit_s / window->seconds + 1e-12);
  EXPECT_NEAR(window->joules / window->seconds, card.watts, card.watts * card.visit_s / window->seconds + 1e-9);
}

TEST(energy_window, a_counter_that_never_moves_gives_no_window_and_runs_nothing) {
  simulated_card card;
  card.frozen = true;
  EXPECT_FALSE(measure_aligned_energy(card.probe(), 0.5, 0.3).has_value());
  EXPECT_EQ(card.visits, 0);
}

TEST(energy_window, an_unreadable_counter_gives_no_window) {
  simulated_card card;
  auto probe = card.probe();
  probe.read_joules = []() -> std::optional<double> { return std::nullopt; };
  EXPECT_FALSE(measure_aligned_energy(probe, 0.5, 0.3).has_value());
}

TEST(energy_window, visits_longer_than_a_step_still_close_the_window) {
  simulated_card card;
  card.visit_s = 0.25;
  card.calls_per_visit = 1;
  const auto window = measure_aligned_energy(card.probe(), 0.5, 0.3);
  ASSERT_TRUE(window.has_value());
  EXPECT_GE(window->seconds, 0.5);
  EXPECT_EQ(window->calls, card.visits);
}

}  // namespace
}  // namespace aisp
