// labs/decode's serving schedulers (issue 21): which rows each model launch runs while a trace of
// requests arrives. Host-only and clock-free: the caller says what time it is and when a launch
// finished, so the unit tests drive it with a fake clock and the GPU pair with the real one.
//
// Static batching (the baseline): when idle, take every arrived request up to `slots` as a
// batch, prefill it, and decode it until its last member is done; requests that arrive meanwhile
// wait for the whole batch. Continuous batching (iteration-level scheduling, as Orca and vLLM):
// before every step, admit arrived requests into free slots and prefill them; a finished request
// frees its slot at once. Either way a prefill launch stalls the decode of the others, unless
// the continuous scheduler is given a token budget (chunked prefill, as Sarathi-Serve and vLLM):
// then every launch carries each running request's decode row and fills the rest of the budget
// with prompt chunks, in order of admission, so a long prompt no longer stalls the decodes.
// Given a KV page pool (kv_pages.hpp; continuous batching, whole prompts), a request is admitted
// only where the pool holds its prefix, and each decode step first gives every running sequence
// room for its next position; where the pool has none left, the sequence admitted last is
// preempted (as vLLM does): its pages go back, and it is admitted again later to recompute its
// prompt and the tokens it made so far in one prefill, whose last row picks its next token.
// Nothing allocates after construction (a serving call is timed, and the harness counts a timed
// call's allocations: M1): reset() starts the trace again in the same storage.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kv_pages.hpp"

namespace aisp::decode {

enum class batching : unsigned char { static_batches, continuous };

struct request_shape {
  double arrival_s = 0;
  int prompt_tokens = 1;
  int output_tokens = 1;
};

// One model launch: its rows (request, cache slot, position), and the rows whose greedy token is
// that request's output number `pick_index`.
struct serving_launch {
  std::vector<int> row_request, row_slot, row_position;
  std::vector<int> pick_row, pick_request, pick_index;
  [[nodiscard]] int rows() const { return static_cast<int>(row_request.size()); }
  [[nodiscard]] int picks() const { return static_cast<int>(pick_row.size()); }
};

class serving_scheduler {
 public:
  // `chunk_tokens` > 0 (continuous only): the rows a launch may hold, decode rows included; a
  // launch always takes at least one prompt row while a prompt is unfinished, so prefill moves on.
  serving_scheduler(std::vector<request_shape> requests, int slots, batching policy, int chunk_tokens = 0)
      : requests_(std::move(requests)), state_(requests_.size()), policy_(policy), slots_(slots), chunk_tokens_(chunk_tokens) {
    if (slots < 1) throw std::invalid_argument("a scheduler needs at least one slot");
    if (chunk_tokens < 0 || (chunk_tokens > 0 && policy != batching::continuous))
      throw std::invalid_argument("a prefill chunk is a positive token budget of continuous batching");
    std::size_t most_rows = static_cast<std::size_t>(slots);
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      if (requests_[r].prompt_tokens < 1 || requests_[r].output_tokens < 1)
        throw std::invalid_argument("every request needs a prompt token and an output token");
      state_[r].token_done_s.reserve(static_cast<std::size_t>(requests_[r].output_tokens));
      most_rows += static_cast<std::size_t>(requests_[r].prompt_tokens);
    }
    for (auto* list : {&free_slots_, &active_, &members_, &unfinished_, &requeued_})
      list->reserve(requests_.size() + static_cast<std::size_t>(slots));
    for (auto* list : {&launch_.row_request, &launch_.row_slot, &launch_.row_position, &launch_.pick_row, &launch_.pick_request,
                       &launch_.pick_index})
      list->reserve(most_rows);
    reset();
  }

  // Continuous batching of whole prompts whose KV memory comes from `pool` (its slots are the
  // scheduler's).
  serving_scheduler(std::vector<request_shape> requests, kv_page_pool pool)
      : serving_scheduler(std::move(requests), pool.slots(), batching::continuous) {
    for (const auto& r : requests_) {
      if (r.prompt_tokens + r.output_tokens > pool.pages_per_slot() * pool.page_tokens())
        throw std::invalid_argument("a request is longer than the KV page pool's longest sequence");
    }
    if (pool.pages() < pool.pages_per_slot()) throw std::invalid_argument("the KV page pool cannot hold its longest sequence");
    pool_.emplace(std::move(pool));
    reset();
  }

  // Every request pending again, nothing run yet.
  void reset() {
    free_slots_.clear();
    for (int s = slots_ - 1; s >= 0; --s) free_slots_.push_back(s);  // slot 0 is taken first
    for (auto& s : state_) {
      s.slot = -1;
      s.prefilled = 0;
      s.prefix = requests_[static_cast<std::size_t>(&s - state_.data())].prompt_tokens;
      s.produced = 0;
      s.token_done_s.clear();
    }
    active_.clear();
    members_.clear();
    requeued_.clear();
    next_pending_ = 0;
    finished_ = 0;
    preemptions_ = 0;
    if (pool_) pool_->reset();
  }

  [[nodiscard]] bool done() const { return finished_ == requests_.size(); }
  [[nodiscard]] bool has_pending() const { return next_pending_ < requests_.size(); }
  // The KV page pool (null without one), and how many times a sequence was preempted since reset().
  [[nodiscard]] const kv_page_pool* pool() const { return pool_ ? &*pool_ : nullptr; }
  [[nodiscard]] int preemptions() const { return preemptions_; }
  // Sequences holding a place in the cache (running, or admitted and prefilling).
  [[nodiscard]] int running() const { return static_cast<int>(active_.size()); }
  // The arrival a scheduler with nothing to run waits for (call only while has_pending()).
  [[nodiscard]] double next_arrival_s() const { return requests_[next_pending_].arrival_s; }

  // The launch to run at `now_s` (valid until the next call), or null: nothing until the next arrival.
  [[nodiscard]] const serving_launch* next(double now_s) {
    if (policy_ == batching::continuous || active_.empty()) admit(now_s);
    for (auto* list : {&launch_.row_request, &launch_.row_slot, &launch_.row_position, &launch_.pick_row, &launch_.pick_request,
                       &launch_.pick_index})
      list->clear();
    if (chunk_tokens_ > 0) {
      add_decodes_and_chunks();
    } else {
      for (int r : active_) {  // prefill first: new requests' prompts in one launch
        if (prefilling(r)) add_prompt_rows(launch_, r, state_[static_cast<std::size_t>(r)].prefix);
      }
      if (launch_.rows() == 0) {
        make_room();
        for (int r : active_) add_decode_row(launch_, r);
      }
    }
    return launch_.rows() == 0 ? nullptr : &launch_;
  }

  // `launch` finished at `now_s`: each pick is its request's next token, done then.
  void completed(const serving_launch& launch, double now_s) {
    for (int i = 0; i < launch.rows(); ++i) {  // the prompt positions now in the cache
      auto& s = state_[static_cast<std::size_t>(launch.row_request[static_cast<std::size_t>(i)])];
      s.prefilled = std::max(s.prefilled, std::min(launch.row_position[static_cast<std::size_t>(i)] + 1, s.prefix));
    }
    for (int i = 0; i < launch.picks(); ++i) {
      auto& s = state_[static_cast<std::size_t>(launch.pick_request[static_cast<std::size_t>(i)])];
      ++s.produced;
      s.token_done_s.push_back(now_s);
    }
    unfinished_.clear();
    for (int r : active_) {
      if (state_[static_cast<std::size_t>(r)].produced < requests_[static_cast<std::size_t>(r)].output_tokens) {
        unfinished_.push_back(r);
      } else if (policy_ == batching::continuous) {
        retire(r);  // its slot is free for the next step
      }
    }
    active_.swap(unfinished_);
    if (policy_ == batching::static_batches && active_.empty()) {  // the batch ends with its last member
      for (int r : members_) retire(r);
      members_.clear();
    }
  }

  // When each of request r's tokens was done.
  [[nodiscard]] const std::vector<double>& token_times(int r) const { return state_[static_cast<std::size_t>(r)].token_done_s; }
  [[nodiscard]] const request_shape& request(int r) const { return requests_[static_cast<std::size_t>(r)]; }
  [[nodiscard]] int requests() const { return static_cast<int>(requests_.size()); }

 private:
  struct request_state {
    int slot = -1;
    int prefix = 0;     // positions its prefill fills: the prompt, and after a preemption the tokens made too
    int prefilled = 0;  // prefix positions in the cache
    int produced = 0;
    std::vector<double> token_done_s;
  };

  // Preempted requests first, in arrival order, then new arrivals; each while a slot is free and
  // the pool (if any) holds its prefix and a page to spare (a watermark against thrashing).
  void admit(double now_s) {
    while (!free_slots_.empty()) {
      const bool again = !requeued_.empty();
      if (!again && !(has_pending() && requests_[next_pending_].arrival_s <= now_s)) return;
      const int r = again ? requeued_.front() : static_cast<int>(next_pending_);
      auto& s = state_[static_cast<std::size_t>(r)];
      s.prefix = prompt_of(r) + s.produced;
      if (pool_) {
        const int longest = pool_->pages_per_slot() * pool_->page_tokens();
        if (!pool_->can_hold(free_slots_.back(), std::min(s.prefix + pool_->page_tokens(), longest))) return;
        pool_->hold(free_slots_.back(), s.prefix);
      }
      if (again) {
        requeued_.erase(requeued_.begin());
      } else {
        ++next_pending_;
      }
      s.slot = free_slots_.back();
      free_slots_.pop_back();
      active_.push_back(r);
      if (policy_ == batching::static_batches) members_.push_back(r);
    }
  }

  void retire(int r) {
    release_slot(r);
    ++finished_;
  }

  void release_slot(int r) {
    auto& s = state_[static_cast<std::size_t>(r)];
    if (pool_) pool_->release(s.slot);
    free_slots_.push_back(s.slot);
    s.slot = -1;
  }

  // Before a decode step: every running sequence gets room for the position it writes; where the
  // pool has no page left, the sequence admitted last gives its pages back and waits to recompute.
  void make_room() {
    if (!pool_) return;
    for (std::size_t i = 0; i < active_.size(); ++i) {
      const int r = active_[i];
      const int tokens = prompt_of(r) + state_[static_cast<std::size_t>(r)].produced;  // through its decode row's position
      while (!pool_->hold(state_[static_cast<std::size_t>(r)].slot, tokens)) {
        const int victim = active_.back();
        preempt(victim);
        if (victim == r) break;
      }
    }
  }

  void preempt(int r) {
    release_slot(r);
    auto& s = state_[static_cast<std::size_t>(r)];
    s.prefilled = 0;
    active_.pop_back();
    requeued_.insert(std::upper_bound(requeued_.begin(), requeued_.end(), r), r);  // ids are in arrival order
    ++preemptions_;
  }

  [[nodiscard]] int prompt_of(int r) const { return requests_[static_cast<std::size_t>(r)].prompt_tokens; }
  [[nodiscard]] bool prefilling(int r) const {
    return state_[static_cast<std::size_t>(r)].prefilled < state_[static_cast<std::size_t>(r)].prefix;
  }

  // Request r's next prefix positions up to `end`; the prefix's last one picks its next token.
  void add_prompt_rows(serving_launch& launch, int r, int end) {
    const auto& s = state_[static_cast<std::size_t>(r)];
    for (int p = s.prefilled; p < end; ++p) add_row(launch, r, s.slot, p);
    if (end == s.prefix) add_pick(launch, launch.rows() - 1, r, s.produced);
  }

  // Chunked prefill: every decode row, then prompt chunks in admission order up to the budget.
  void add_decodes_and_chunks() {
    for (int r : active_) {
      if (!prefilling(r)) add_decode_row(launch_, r);
    }
    int budget = std::max(chunk_tokens_ - launch_.rows(), 1);
    for (int r : active_) {
      if (budget == 0) break;
      if (!prefilling(r)) continue;
      const int end = std::min(state_[static_cast<std::size_t>(r)].prefix, state_[static_cast<std::size_t>(r)].prefilled + budget);
      budget -= end - state_[static_cast<std::size_t>(r)].prefilled;
      add_prompt_rows(launch_, r, end);
    }
  }

  void add_decode_row(serving_launch& launch, int r) {
    const auto& s = state_[static_cast<std::size_t>(r)];
    const int position = requests_[static_cast<std::size_t>(r)].prompt_tokens + s.produced - 1;  // feeds its last token
    add_row(launch, r, s.slot, position);
    add_pick(launch, launch.rows() - 1, r, s.produced);
  }

  static void add_row(serving_launch& launch, int r, int slot, int position) {
    launch.row_request.push_back(r);
    launch.row_slot.push_back(slot);
    launch.row_position.push_back(position);
  }
  static void add_pick(serving_launch& launch, int row, int r, int index) {
    launch.pick_row.push_back(row);
    launch.pick_request.push_back(r);
    launch.pick_index.push_back(index);
  }

  std::vector<request_shape> requests_;
  std::vector<request_state> state_;
  batching policy_;
  int slots_;
  int chunk_tokens_;  // 0: whole prompts, stalling the decodes
  std::vector<int> free_slots_;
  std::size_t next_pending_ = 0;  // requests arrive in order: those before this one are admitted
  std::vector<int> active_;       // requests in the running set with tokens still to make
  std::vector<int> members_;      // static batching: the batch, finished members included, until it ends
  std::vector<int> unfinished_;   // completed()'s scratch
  std::vector<int> requeued_;     // preempted requests waiting to be admitted again, in arrival order
  serving_launch launch_;
  std::size_t finished_ = 0;
  std::optional<kv_page_pool> pool_;
  int preemptions_ = 0;
};

// The whole trace on a modeled clock, from the start: `run(launch)` does a launch's work and
// returns what it cost; the launch is done that long after it began. (The GPU pair plans on a
// modeled clock but takes each launch's end from the real one: Note [planned schedule].)
template <class Run>
void run_to_end(serving_scheduler& scheduler, Run run) {
  scheduler.reset();
  double now_s = 0;
  while (!scheduler.done()) {
    const serving_launch* launch = scheduler.next(now_s);
    if (launch == nullptr) {
      now_s = scheduler.next_arrival_s();
      continue;
    }
    now_s += run(*launch);
    scheduler.completed(*launch, now_s);
  }
}

}  // namespace aisp::decode
