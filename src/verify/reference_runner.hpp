// Computes a pair's fp64 reference outputs in the judge (parent) process, from inputs it
// regenerates itself from the seed: the candidate never touches the truth (V1).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "aisp/pair.hpp"

namespace aisp::verify {

using reference_outputs = std::map<std::string, std::vector<double>, std::less<>>;

[[nodiscard]] reference_outputs compute_reference(const pair& declared, const workload& work,
                                                  std::uint64_t seed);

}  // namespace aisp::verify
