// The buffers of one loaded workload, owned by the harness: device memory for CUDA pairs,
// page-aligned pre-touched host memory for host pairs (M6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <functional>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

#include "aisp/buffer_spec.hpp"
#include "aisp/pair.hpp"
#include "harness/call_fill.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {

struct owned_buffer {
  buffer_spec spec;
  std::size_t num_elements = 0;
  void* data = nullptr;
  [[nodiscard]] std::size_t bytes() const { return num_elements * dtype_size(spec.type); }
};


class buffer_store {
 public:
  // `rank`: whose inputs the seeds draw (Note [ranks]); 0 for a single-GPU pair.
  buffer_store(const pair& declared, const workload& work, backend where, int rank = 0);
  ~buffer_store();
  buffer_store(const buffer_store&) = delete;
  buffer_store& operator=(const buffer_store&) = delete;

  // Inputs from (seed, buffer name); scratch gets seeded noise too, never zeros. With
  // `values` other than declared: a challenge's values; with `scattered` levels, a secret few
  // elements of each input carry them (Note [scattered challenge values]).
  void fill_inputs(std::uint64_t seed, input_values values = input_values::declared,
                   const std::vector<input_values>& scattered = {});
  // The same drawn where the buffers live: on the device for a CUDA pair (its generator, not the
  // host's bytes: for a challenge whose truth is the baseline's answer, where every worker draws
  // alike), as fill_inputs on the host. Synchronizes the stream.
  void fill_inputs_where_they_live(std::uint64_t seed, input_values values, const std::vector<input_values>& scattered,
                                   cudaStream_t stream);
  // Only the scratch buffers' seeded noise (inputs then come from refresh_inputs).
  void fill_scratch(std::uint64_t seed);
  // Every output filled with its dtype's poison (on the device for CUDA pairs); the stream is
  // synchronized, so work on any stream of run() sees it.
  void poison_outputs(cudaStream_t stream);
  // One element of an input (a challenge's perturbation); the inputs derived from it follow.
  void write_element(const owned_buffer& buffer, std::size_t index, double value);
  // Note [a copy's domain] (runner/copy_domain.cpp): a derived input drawn again from `seed`
  // alone, as a copy of another draw of its source (the source kept).
  void redraw_copy_alone(const owned_buffer& copy, std::uint64_t seed);
  // The same note: every element of a source moved within the rounding cell of its derived
  // copies (mirrored about the cell's centre, nine tenths of the way), so each copy is still
  // exactly the rounding of its source and nothing that reads only the copies can tell.
  void move_source_within_its_copies(const owned_buffer& source);
  // Note [fresh calls] (call_fill.hpp): every input regenerated from `seed` (on the device for
  // CUDA pairs), and every output filled from `fill`; both seeded per buffer name.
  void refresh_inputs(std::uint64_t seed, cudaStream_t stream);
  // Note [work during the fill] (host_sampler.cpp): a host pair's inputs for `seed` drawn into
  // private memory first, so the next refresh_inputs(seed) only copies them in: the variant's
  // pages change in one quick pass, not over the draws' milliseconds. No-op on the device.
  void stage_inputs(std::uint64_t seed);
  void fill_outputs(const output_fill& fill, cudaStream_t stream);
  // The elements of `buffer` that still hold what fill_outputs(fill) wrote.
  [[nodiscard]] fill_matches count_fill(const owned_buffer& buffer, const output_fill& fill, std::size_t listed,
                                        cudaStream_t stream) const;
  // The raw bytes at `positions` of `buffer`.
  [[nodiscard]] std::vector<unsigned char> gather(const owned_buffer& buffer, const std::vector<std::size_t>& positions,
                                                  cudaStream_t stream) const;
  // A copy of every output (same names, new memory), for reading after later calls.
  [[nodiscard]] std::unique_ptr<buffer_store> snapshot_outputs(cudaStream_t stream) const;
  // Copies every output into `snapshot` (made by snapshot_outputs of this store).
  void copy_outputs_to(buffer_store& snapshot, cudaStream_t stream) const;
  [[nodiscard]] std::vector<unsigned char> read(const owned_buffer& buffer) const;
  // Note [buffer digests] (buffer_digest.hpp): read where the buffer lives, never copied out.
  [[nodiscard]] std::uint64_t digest(const owned_buffer& buffer, cudaStream_t stream) const;
  [[nodiscard]] std::size_t count_subnormals(const owned_buffer& buffer, cudaStream_t stream) const;
  void write(const owned_buffer& buffer, const std::vector<unsigned char>& bytes);

  [[nodiscard]] const owned_buffer& find(std::string_view name) const;
  [[nodiscard]] const std::vector<owned_buffer>& all() const { return buffers_; }
  [[nodiscard]] std::size_t total_bytes() const;

 private:
  buffer_store(backend where, std::vector<owned_buffer> buffers) : where_(where), buffers_(std::move(buffers)) {}
  [[nodiscard]] static output_fill fill_of(const output_fill& fill, const owned_buffer& buffer);
  // Stores `value` rounded to the buffer's dtype at `index`; returns the stored value.
  double store_element(const owned_buffer& buffer, std::size_t index, double value);

  // Every derived input made again from its source, on the device (queued on `stream`).
  void derive_on_device(cudaStream_t stream);
  // Every input (derived ones too) of `seed` drawn at `into(buffer)`.
  void draw_inputs(std::uint64_t seed, const std::function<void*(const owned_buffer&)>& into);

  backend where_;
  std::vector<owned_buffer> buffers_;
  int rank_ = 0;
  std::optional<std::uint64_t> staged_seed_;
  std::vector<std::vector<unsigned char>> staged_;  // by buffer index; inputs only
};

}  // namespace aisp
