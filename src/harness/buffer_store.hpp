// The buffers of one loaded workload, owned by the harness: device memory for CUDA pairs,
// page-aligned pre-touched host memory for host pairs (M6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "aisp/pair.hpp"

namespace aisp {

struct owned_buffer {
  buffer_spec spec;
  std::size_t num_elements = 0;
  void* data = nullptr;
  [[nodiscard]] std::size_t bytes() const { return num_elements * dtype_size(spec.type); }
};

// The bytes fill_outputs_with_pattern(seed) writes into `buffer`.
[[nodiscard]] std::vector<unsigned char> pattern_bytes(std::uint64_t seed, const owned_buffer& buffer);

class buffer_store {
 public:
  buffer_store(const pair& declared, const workload& work, backend where);
  ~buffer_store();
  buffer_store(const buffer_store&) = delete;
  buffer_store& operator=(const buffer_store&) = delete;

  // Inputs from (seed, buffer name); scratch gets seeded noise too, never zeros. With
  // `exact_integers`, float inputs get small integers instead (the X5 challenge).
  void fill_inputs(std::uint64_t seed, bool exact_integers = false);
  void poison_outputs();
  // Random bytes from `seed` in every output: a pattern no variant can predict (X7).
  void fill_outputs_with_pattern(std::uint64_t seed);
  void write_element(const owned_buffer& buffer, std::size_t index, double value);
  [[nodiscard]] std::vector<unsigned char> read(const owned_buffer& buffer) const;
  void write(const owned_buffer& buffer, const std::vector<unsigned char>& bytes);

  [[nodiscard]] const owned_buffer& find(std::string_view name) const;
  [[nodiscard]] const std::vector<owned_buffer>& all() const { return buffers_; }
  [[nodiscard]] std::size_t total_bytes() const;

 private:
  backend where_;
  std::vector<owned_buffer> buffers_;
};

}  // namespace aisp
