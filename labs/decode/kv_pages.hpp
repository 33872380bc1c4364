// labs/decode's KV-cache memory as a pool of pages (issue 21, paged_kv_cache): which pages of the
// cache each sequence slot holds, as a block table, and how much of what is reserved holds tokens.
// Two ways to give sequences memory from the same pool:
// - slabs (the baseline, contiguous per-sequence allocation): slot s owns a fixed run of
//   consecutive pages, enough for the longest sequence the server may see (prompt_max +
//   output_max), reserved whole when a request is admitted; the pool fits pool / slab slots;
// - pages on demand (the optimized, as vLLM's PagedAttention): a sequence takes a free page
//   wherever one is when its next position needs it, and gives its pages back when it ends.
// Host-only and allocation-free after construction (the scheduler runs inside timed calls: M1).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace aisp::decode {

enum class kv_allocation : unsigned char { slabs, pages_on_demand };

class kv_page_pool {
 public:
  // `pages` of `page_tokens` positions; `slots` sequences at once, each of at most `max_tokens`.
  kv_page_pool(int pages, int page_tokens, int slots, int max_tokens, kv_allocation how)
      : how_(how), page_tokens_(page_tokens), slots_(slots), pages_per_slot_((max_tokens + page_tokens - 1) / page_tokens), pages_(pages) {
    if (pages < 1 || page_tokens < 1 || slots < 1 || max_tokens < 1)
      throw std::invalid_argument("a KV page pool needs pages, a page length, slots and a longest sequence, each at least 1");
    if (how == kv_allocation::slabs && slots * pages_per_slot_ > pages)
      throw std::invalid_argument("the pool holds fewer slabs than the slots asked for");
    table_.assign(static_cast<std::size_t>(slots) * static_cast<std::size_t>(pages_per_slot_), -1);
    held_.assign(static_cast<std::size_t>(slots), 0);
    tokens_.assign(static_cast<std::size_t>(slots), 0);
    free_.reserve(static_cast<std::size_t>(pages));
    reset();
  }

  // How many sequences slabs of `max_tokens` fit in `pages` pages of `page_tokens`.
  [[nodiscard]] static int slabs_that_fit(int pages, int page_tokens, int max_tokens) {
    return pages / ((max_tokens + page_tokens - 1) / page_tokens);
  }

  // Every slot empty, every page free (page 0 handed out first).
  void reset() {
    std::fill(table_.begin(), table_.end(), -1);
    std::fill(held_.begin(), held_.end(), 0);
    std::fill(tokens_.begin(), tokens_.end(), 0);
    free_.clear();
    for (int p = pages_ - 1; p >= 0; --p) free_.push_back(p);
  }

  // Whether slot s could be given room for `tokens` positions now.
  [[nodiscard]] bool can_hold(int s, int tokens) const {
    if (tokens > pages_per_slot_ * page_tokens_) return false;
    if (how_ == kv_allocation::slabs) return true;  // a slot's slab is always there
    return pages_for(tokens) - held(s) <= static_cast<int>(free_.size());
  }

  // Slot s holds `tokens` positions from now on (a slab is reserved whole at the first call).
  // False, and nothing changed, where the pool lacks the pages.
  bool hold(int s, int tokens) {
    if (!can_hold(s, tokens)) return false;
    const int wanted = how_ == kv_allocation::slabs ? pages_per_slot_ : pages_for(tokens);
    for (int i = held(s); i < wanted; ++i) {
      int page = s * pages_per_slot_ + i;  // a slab: the slot's own run of pages
      if (how_ == kv_allocation::pages_on_demand) {
        page = free_.back();
        free_.pop_back();
      }
      table_[index(s, i)] = page;
    }
    held_[static_cast<std::size_t>(s)] = std::max(held(s), wanted);
    tokens_[static_cast<std::size_t>(s)] = tokens;
    return true;
  }

  // Slot s's sequence ended (or was preempted): its pages go back to the pool.
  void release(int s) {
    for (int i = 0; i < held(s); ++i) {
      if (how_ == kv_allocation::pages_on_demand) free_.push_back(table_[index(s, i)]);
      table_[index(s, i)] = -1;
    }
    held_[static_cast<std::size_t>(s)] = 0;
    tokens_[static_cast<std::size_t>(s)] = 0;
  }

  // The block table: page of slot s's i-th page_tokens positions at [s * pages_per_slot() + i], -1 where none.
  [[nodiscard]] const std::vector<int>& table() const { return table_; }
  [[nodiscard]] int pages_per_slot() const { return pages_per_slot_; }
  [[nodiscard]] int page_tokens() const { return page_tokens_; }
  [[nodiscard]] int pages() const { return pages_; }
  [[nodiscard]] int slots() const { return slots_; }
  // Positions reserved (pages held) and positions holding a token, over every slot.
  [[nodiscard]] long reserved_tokens() const {
    long total = 0;
    for (int h : held_) total += static_cast<long>(h) * page_tokens_;
    return total;
  }
  [[nodiscard]] long used_tokens() const {
    long total = 0;
    for (int t : tokens_) total += t;
    return total;
  }

 private:
  [[nodiscard]] int pages_for(int tokens) const { return (tokens + page_tokens_ - 1) / page_tokens_; }
  [[nodiscard]] int held(int s) const { return held_[static_cast<std::size_t>(s)]; }
  [[nodiscard]] std::size_t index(int s, int i) const {
    return static_cast<std::size_t>(s) * static_cast<std::size_t>(pages_per_slot_) + static_cast<std::size_t>(i);
  }

  kv_allocation how_;
  int page_tokens_, slots_, pages_per_slot_, pages_;
  std::vector<int> table_;
  std::vector<int> held_;    // pages each slot holds
  std::vector<int> tokens_;  // positions each slot holds tokens in
  std::vector<int> free_;    // pages on demand: the free pages, the next one last
};

}  // namespace aisp::decode
