// A buffer that a pair declares and the harness owns: allocates, fills, poisons and compares.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "aisp/dtype.hpp"
#include "aisp/workload.hpp"

namespace aisp {

enum class buffer_role : std::uint8_t { input, output, scratch };

// How the harness fills an input. Never zeros or constants: they hide unwritten outputs.
enum class init_distribution : std::uint8_t {
  uniform_signed,    // uniform in [-1, 1)
  uniform_unit,      // uniform in [0, 1)
  small_integers,    // integers in [-8, 8]: exact in every float type, for bitwise checks
  index_permutation  // a random permutation of 0..n-1 (integer buffers: gathers, scatters)
};

using element_count_fn = std::function<std::int64_t(const workload&)>;

// What an input means, for the checks that perturb it: a mask (W9) or a KV cache (W10).
enum class buffer_meaning : std::uint8_t { data, mask, kv_cache };

struct buffer_spec {
  std::string name;
  dtype type = dtype::f32;
  buffer_role role = buffer_role::input;
  element_count_fn num_elements;
  init_distribution init = init_distribution::uniform_signed;
  // Optional: the workload parameters whose product is the element count, outermost first
  // (e.g. {"batch", "seq", "hidden"}). Lets verification say *where* an output went wrong:
  // a skipped batch tail (W5), a truncated sequence (W6), a strided subsample (W7).
  std::vector<std::string> dims;
  buffer_meaning meaning = buffer_meaning::data;
  // Note [derived inputs]: an input whose values are always those of the input named here,
  // stored in this buffer's dtype (an fp8 copy of a bf16 KV cache). The harness re-derives it
  // wherever it writes the source: every fill, fresh inputs before each call, and the
  // challenges' element writes; the references see the same rounded values.
  std::string derived_from;
  double derived_scale = 1.0;  // the source's values times this, then rounded (an int8 copy: 127)
  // Note [ranks]: an input every rank of a multi-GPU pair holds the same values of (weights that
  // data or tensor parallelism replicates); other inputs are each rank's own draw.
  bool same_on_every_rank = false;
};

}  // namespace aisp
