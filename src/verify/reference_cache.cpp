#include "verify/reference_cache.hpp"

#include <bit>
#include <thread>

#include <fmt/format.h>

namespace aisp::verify {

reference_cache::reference_cache(const pair& declared, unsigned max_concurrent)
    : declared_(declared), max_concurrent_(max_concurrent != 0 ? max_concurrent : std::max(1u, std::thread::hardware_concurrency())) {}

reference_cache::~reference_cache() {
  std::vector<std::future<void>> pending;
  {
    const std::lock_guard lock(mutex_);
    pending.swap(prefetches_);
  }
  for (auto& f : pending) f.wait();  // they hold `this`: none may outlive the cache
}

std::string reference_cache::key_of(const workload& work, const reference_inputs& inputs) {
  std::string key = fmt::format("{}|{}|{}", work.describe(), inputs.seed, static_cast<int>(inputs.values));
  for (const auto& o : inputs.overrides) key += fmt::format("|{}[{}]={:x}", o.buffer, o.index, std::bit_cast<std::uint64_t>(o.value));
  return key;
}

std::shared_ptr<const reference_outputs> reference_cache::compute(const workload& work, const reference_inputs& inputs) {
  {
    std::unique_lock lock(mutex_);
    slot_free_.wait(lock, [&] { return running_ < max_concurrent_; });
    ++running_;
  }
  struct release {
    reference_cache* cache;
    ~release() {
      {
        const std::lock_guard lock(cache->mutex_);
        --cache->running_;
      }
      cache->slot_free_.notify_one();
    }
  } on_exit{this};
  return std::make_shared<const reference_outputs>(compute_reference(declared_, work, inputs));
}

std::shared_ptr<const reference_outputs> reference_cache::get(const workload& work, const reference_inputs& inputs) {
  const auto key = key_of(work, inputs);
  std::promise<std::shared_ptr<const reference_outputs>> mine;
  entry found;
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(key); it != entries_.end()) {
      found = it->second;
    } else {
      entries_.emplace(key, mine.get_future().share());
    }
  }
  if (found.valid()) return found.get();  // rethrows the reference's own failure
  try {
    auto result = compute(work, inputs);
    mine.set_value(result);
    return result;
  } catch (...) {
    mine.set_exception(std::current_exception());
    throw;
  }
}

void reference_cache::prefetch(const workload& work, const reference_inputs& inputs) {
  if (max_concurrent_ <= 1) return;
  const std::lock_guard lock(mutex_);
  if (entries_.count(key_of(work, inputs)) > 0) return;
  prefetches_.push_back(std::async(std::launch::async, [this, work, inputs] {
    try {
      (void)get(work, inputs);
    } catch (...) {  // kept in the entry: the caller that needs it sees the failure
    }
  }));
}

std::size_t reference_cache::computed() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace aisp::verify
