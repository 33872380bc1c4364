// `bench run --gpus`: independent single-GPU pairs run side by side, one at a time on each GPU
// (a lane). Each pair still has its GPU to itself: its workers, its flushes and its samples are
// the only work there, so its numbers mean what a one-GPU run's do (Note [gpu lanes]).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace aisp {

// The GPUs `--gpus` names: "all", a count ("2": GPUs 0 and 1) or a list ("0,2"). Throws
// contract_error naming what is wrong (an index past `gpu_count`, a repeat, not a number).
[[nodiscard]] std::vector<int> parse_gpu_lanes(const std::string& text, int gpu_count);

// Runs `run_one(item, gpu)` for every item, one lane thread per GPU taking the next item as it
// frees up. Returns when every item ran; an exception from `run_one` ends its lane's thread
// only after the other lanes finished, and is rethrown.
void run_on_lanes(std::size_t items, const std::vector<int>& gpus, const std::function<void(std::size_t item, int gpu)>& run_one);

}  // namespace aisp
