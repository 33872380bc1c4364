// The fp64 references of one pair run, each computed once and shared (issue 17). Every variant
// meets the same challenge inputs (the same seeds, the same jittered elements), so the judge
// asked for the same reference once per variant; a reference of the big validation size costs
// seconds. References may also be computed ahead on other host cores (the jitter challenge
// knows its next inputs before it needs their reference).
//
// A pair's reference must therefore be reentrant: a pure function of its reference_io, with no
// shared mutable state. `max_concurrent` 1 keeps every reference on its own, one at a time.
#pragma once

#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "verify/reference_runner.hpp"

namespace aisp::verify {

class reference_cache {
 public:
  // `max_concurrent`: references computed at once (0: one per host core).
  reference_cache(const pair& declared, unsigned max_concurrent);
  reference_cache(const pair&&, unsigned) = delete;  // it keeps the reference: the pair must outlive it
  ~reference_cache();
  reference_cache(const reference_cache&) = delete;
  reference_cache& operator=(const reference_cache&) = delete;

  // The reference of `inputs` on `work`; computed by the first caller, waited for by the others.
  [[nodiscard]] std::shared_ptr<const reference_outputs> get(const workload& work, const reference_inputs& inputs);
  // Starts computing it on another thread, when a core is free for it; get() then waits for it.
  void prefetch(const workload& work, const reference_inputs& inputs);

  [[nodiscard]] std::size_t computed() const;

 private:
  using entry = std::shared_future<std::shared_ptr<const reference_outputs>>;
  [[nodiscard]] static std::string key_of(const workload& work, const reference_inputs& inputs);
  std::shared_ptr<const reference_outputs> compute(const workload& work, const reference_inputs& inputs);

  const pair& declared_;
  unsigned max_concurrent_;
  mutable std::mutex mutex_;
  std::condition_variable slot_free_;
  unsigned running_ = 0;
  std::map<std::string, entry> entries_;
  std::vector<std::future<void>> prefetches_;
};

}  // namespace aisp::verify
