// Per-variant state a variant builds in setup() and reads in run(): a library handle, a
// pinned staging buffer, a captured graph. One owner per variant, released in teardown().
#pragma once

#include <utility>

#include "aisp/run_context.hpp"

namespace aisp {

// setup(): make the state; it lives in ctx.user_state() until teardown().
template <class State, class... Args>
State& make_state(run_context& ctx, Args&&... args) {
  auto* state = new State{std::forward<Args>(args)...};
  ctx.user_state() = state;
  return *state;
}

// run(): the state that setup() made.
template <class State>
[[nodiscard]] State& state_of(run_context& ctx) {
  return *static_cast<State*>(ctx.user_state());
}

// teardown(): destroy it (State's destructor frees its CUDA resources).
template <class State>
void release_state(run_context& ctx) {
  delete static_cast<State*>(ctx.user_state());
  ctx.user_state() = nullptr;
}

}  // namespace aisp
