#include "runner/gpu_lanes.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "aisp/check.hpp"

namespace aisp {

std::vector<int> parse_gpu_lanes(const std::string& text, int gpu_count) {
  AISP_EXPECTS(gpu_count > 0, "--gpus " + text + ": this machine has no usable GPU");
  std::vector<int> gpus;
  if (text == "all") {
    for (int g = 0; g < gpu_count; ++g) gpus.push_back(g);
    return gpus;
  }
  const bool is_list = text.find(',') != std::string::npos;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    AISP_EXPECTS(!item.empty() && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }) && item.size() < 4,
                 "--gpus wants all, a count or a list of GPU indices (0,1), not '" + text + "'");
    const int value = std::stoi(item);
    if (!is_list) {
      AISP_EXPECTS(value >= 1 && value <= gpu_count, fmt::format("--gpus {}: this machine has {} GPUs", value, gpu_count));
      for (int g = 0; g < value; ++g) gpus.push_back(g);
      return gpus;
    }
    AISP_EXPECTS(value < gpu_count, fmt::format("--gpus {}: GPU {} does not exist ({} GPUs)", text, value, gpu_count));
    AISP_EXPECTS(std::find(gpus.begin(), gpus.end(), value) == gpus.end(), fmt::format("--gpus {}: GPU {} is listed twice", text, value));
    gpus.push_back(value);
  }
  return gpus;
}

void run_on_lanes(std::size_t items, const std::vector<int>& gpus, const std::function<void(std::size_t item, int gpu)>& run_one) {
  AISP_EXPECTS(!gpus.empty(), "no GPU lanes");
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_lock;
  {
    std::vector<std::jthread> lanes;
    for (const int gpu : gpus) {
      lanes.emplace_back([&, gpu] {
        for (std::size_t item = next++; item < items; item = next++) {
          try {
            run_one(item, gpu);
          } catch (...) {
            const std::lock_guard lock(failure_lock);
            if (!failure) failure = std::current_exception();
            return;
          }
        }
      });
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace aisp
