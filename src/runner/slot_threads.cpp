#include "runner/slot_threads.hpp"

#include <exception>
#include <thread>

namespace aisp {

void for_each_slot_concurrently(std::vector<variant_slot*> chosen, std::vector<check_result>& checks, unsigned threads,
                                const slot_work& work) {
  std::vector<std::vector<check_result>> found(chosen.size());
  std::vector<std::exception_ptr> failures(chosen.size());
  const auto run_one = [&](std::size_t i) {
    try {
      work(*chosen[i], found[i]);
    } catch (...) {
      failures[i] = std::current_exception();
    }
  };
  if (threads == 1 || chosen.size() <= 1) {
    for (std::size_t i = 0; i < chosen.size() && (i == 0 || !failures[i - 1]); ++i) run_one(i);
  } else {
    std::vector<std::jthread> running;
    for (std::size_t i = 0; i < chosen.size(); ++i) running.emplace_back(run_one, i);
  }  // the jthreads join here
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    checks.insert(checks.end(), std::make_move_iterator(found[i].begin()), std::make_move_iterator(found[i].end()));
    if (failures[i]) std::rethrow_exception(failures[i]);
  }
}

void for_each_slot_concurrently(std::vector<variant_slot*> chosen, unsigned threads, const std::function<void(variant_slot&)>& work) {
  std::vector<check_result> none;
  for_each_slot_concurrently(std::move(chosen), none, threads, [&](variant_slot& slot, std::vector<check_result>&) { work(slot); });
}

std::vector<variant_slot*> verified_slots(std::vector<variant_slot>& slots) {
  std::vector<variant_slot*> chosen;
  for (auto& slot : slots) {
    if (slot.role != slot_role::noise_twin) chosen.push_back(&slot);
  }
  return chosen;
}

std::vector<variant_slot*> all_slots(std::vector<variant_slot>& slots) {
  std::vector<variant_slot*> chosen;
  for (auto& slot : slots) chosen.push_back(&slot);
  return chosen;
}

}  // namespace aisp
