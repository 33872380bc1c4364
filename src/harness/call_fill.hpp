// What the harness writes into a variant's buffers before each call, and reads back after a
// verified one (Note [fresh calls]): inputs regenerated from a new seed, outputs filled with a
// random pattern or the poison, the count of elements still holding that fill, and values at
// chosen positions. Device versions run on the worker's stream, so the bulk stays on the GPU;
// host versions serve host pairs. Both are pure functions of their seeds.
//
// Note [fresh calls]: at the benchmark size, every timed sample and warmup call gets inputs from
// a seed no variant can predict, and its outputs a fill drawn from another. A result cached,
// precomputed in setup(), stashed during warmup or read from disk is therefore stale at the next
// call, and a variant cannot learn from the outputs' contents whether this call will be read.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "aisp/buffer_spec.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {

// The fill an output gets before a call: a seeded random pattern, or the dtype's poison.
struct output_fill {
  std::uint64_t seed = 0;
  bool poison = false;
};

// The first listed matches of a fill, and how many elements matched in all.
struct fill_matches {
  std::size_t count = 0;
  std::vector<std::size_t> first;  // up to `listed` of them (which ones is unspecified), ascending
};

// ---- Device ----

// Regenerates `count` elements of `type` at `base` from `seed` (index permutations as a seeded
// Feistel bijection). Same distribution as the host fill; not bitwise the host's values.
void device_fill_input(dtype type, init_distribution init, std::uint64_t seed, void* base, std::size_t count,
                       cudaStream_t stream);
void device_fill_output(dtype type, const output_fill& fill, void* base, std::size_t count, cudaStream_t stream);
// Elements that still hold `fill`. Synchronizes the stream.
[[nodiscard]] fill_matches device_count_fill(dtype type, const output_fill& fill, const void* base, std::size_t count,
                                             std::size_t listed, cudaStream_t stream);
// The raw bytes of the elements at `positions`. Synchronizes the stream.
[[nodiscard]] std::vector<unsigned char> device_gather(const void* base, std::size_t element_size,
                                                       const std::vector<std::size_t>& positions, cudaStream_t stream);

// Note [derived inputs] (aisp/buffer_spec.hpp): `count` elements of `from_type` at `source`,
// each times `scale` rounded into `to_type` at `target` as a store of its value would round it.
void device_derive_input(dtype from_type, const void* source, dtype to_type, void* target, std::size_t count,
                         double scale, cudaStream_t stream);
// widen_draws (support/seeded_fill.hpp) on the device, in place: each element moved as `reshape`
// moves a draw (draw_reshape: scaled and shifted, or onto the grid of Note [repeated values]).
void device_widen_draws(dtype type, const draw_reshape& reshape, void* base, std::size_t count, cudaStream_t stream);

// ---- Host ----

void host_fill_input(dtype type, init_distribution init, std::uint64_t seed, void* base, std::size_t count);
void host_fill_output(dtype type, const output_fill& fill, void* base, std::size_t count);
void host_derive_input(dtype from_type, const void* source, dtype to_type, void* target, std::size_t count,
                       double scale = 1.0);
[[nodiscard]] fill_matches host_count_fill(dtype type, const output_fill& fill, const void* base, std::size_t count,
                                           std::size_t listed);

// Seed of call `index` of a batch whose base seed is `base`: every call of a visit differs.
[[nodiscard]] std::uint64_t call_seed(std::uint64_t base, std::uint64_t index);

}  // namespace aisp
