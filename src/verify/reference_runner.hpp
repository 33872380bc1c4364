// Computes a pair's fp64 reference outputs in the judge (parent) process, from inputs it
// regenerates itself from the seed: the candidate never touches the truth (V1).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "aisp/pair.hpp"
#include "support/seeded_fill.hpp"

namespace aisp::verify {

using reference_outputs = std::map<std::string, std::vector<double>, std::less<>>;

struct element_override {
  std::string buffer;
  std::size_t index = 0;
  double value = 0;
};

// Which inputs the reference sees: those of `seed` (small integers in the exact challenge),
// with single elements overridden (the jitter challenge).
struct reference_inputs {
  std::uint64_t seed = 42;
  input_values values = input_values::declared;
  std::vector<element_override> overrides;
};

// A reference's view of fp64 buffers held in two maps: the judge's, and the pair host's
// (Note [untrusted pairs], runner/pair_host.cpp).
class held_reference_io final : public reference_io {
 public:
  held_reference_io(workload work, int world) : work_(std::move(work)), world_(world) {}
  [[nodiscard]] const workload& work() const override { return work_; }
  [[nodiscard]] int world_size() const override { return world_; }
  [[nodiscard]] std::span<const double> input(std::string_view name) const override;
  [[nodiscard]] std::span<double> output(std::string_view name) override;

  reference_outputs inputs;
  reference_outputs outputs;

 private:
  workload work_;
  int world_;
};

[[nodiscard]] reference_outputs compute_reference(const pair& declared, const workload& work,
                                                  const reference_inputs& inputs);
// The inputs exactly as the variants see them (quantized to their dtypes), widened to fp64.
[[nodiscard]] reference_outputs generate_inputs(const pair& declared, const workload& work,
                                                const reference_inputs& inputs);

}  // namespace aisp::verify
