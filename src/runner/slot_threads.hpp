// Each slot's share of a judge phase on its own thread (issue 17). Every slot has its own worker
// process, so their verification calls, and the judge's work on what they return, overlap; only
// timing is never done this way. The checks land in slot order, as if the slots had run one after
// another, and the first failure in slot order is rethrown once every thread has ended.
#pragma once

#include <functional>
#include <vector>

#include "results/pair_result.hpp"
#include "runner/variant_slot.hpp"

namespace aisp {

using slot_work = std::function<void(variant_slot& slot, std::vector<check_result>& checks)>;

// `threads` 1 runs the slots one after another on this thread (--judge-threads 1).
void for_each_slot_concurrently(std::vector<variant_slot*> chosen, std::vector<check_result>& checks, unsigned threads,
                                const slot_work& work);

// The same for work that records no checks (starting and stopping workers).
void for_each_slot_concurrently(std::vector<variant_slot*> chosen, unsigned threads, const std::function<void(variant_slot&)>& work);

// The slots that are not the noise twin (which is timed, never verified).
[[nodiscard]] std::vector<variant_slot*> verified_slots(std::vector<variant_slot>& slots);
[[nodiscard]] std::vector<variant_slot*> all_slots(std::vector<variant_slot>& slots);

}  // namespace aisp
