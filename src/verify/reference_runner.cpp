#include "verify/reference_runner.hpp"

#include "aisp/check.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"
#include "verify/compare.hpp"

namespace aisp::verify {
std::span<const double> held_reference_io::input(std::string_view name) const {
  const auto found = inputs.find(name);
  AISP_EXPECTS(found != inputs.end(), "reference asked for unknown input '" + std::string(name) + "'");
  return found->second;
}

std::span<double> held_reference_io::output(std::string_view name) {
  const auto found = outputs.find(name);
  AISP_EXPECTS(found != outputs.end(), "reference asked for unknown output '" + std::string(name) + "'");
  return found->second;
}

reference_outputs generate_inputs(const pair& declared, const workload& work, const reference_inputs& inputs) {
  reference_outputs values;
  for (const auto& spec : declared.buffers()) {
    if (spec.role != buffer_role::input || !spec.derived_from.empty()) continue;
    // Note [ranks]: every rank's inputs, rank-major, each drawn as that rank's worker draws it.
    const auto per_rank = static_cast<std::size_t>(spec.num_elements(work));
    const auto count = per_rank * static_cast<std::size_t>(declared.gpus());
    std::vector<unsigned char> raw(count * dtype_size(spec.type));
    for (int r = 0; r < declared.gpus(); ++r) {
      fill_seeded(spec.type, effective_init(spec, inputs.values),
                  buffer_stream_id(rank_seed(inputs.seed, spec.same_on_every_rank ? 0 : r), spec.name),
                  raw.data() + static_cast<std::size_t>(r) * per_rank * dtype_size(spec.type), per_rank);
    }
    widen_draws(spec, inputs.values, raw.data(), count);
    for (const auto& o : inputs.overrides) {
      // Quantize the override exactly as the worker's store into the buffer does.
      if (o.buffer != spec.name || o.index >= count) continue;
      if (!spec.same_on_every_rank) {
        store_from_double(spec.type, raw.data(), o.index, o.value);
        continue;
      }
      // A replicated input's element changes on every rank (the rank group writes them all).
      for (int r = 0; r < declared.gpus(); ++r)
        store_from_double(spec.type, raw.data(), o.index % per_rank + static_cast<std::size_t>(r) * per_rank, o.value);
    }
    values[spec.name] = widen(spec.type, raw);
  }
  // Note [derived inputs]: each from its source's values, as the worker's store rounds them.
  for (const auto& spec : declared.buffers()) {
    if (spec.role != buffer_role::input || spec.derived_from.empty()) continue;
    const auto& source = values.at(spec.derived_from);
    std::vector<unsigned char> raw(source.size() * dtype_size(spec.type));
    for (std::size_t i = 0; i < source.size(); ++i) store_from_double(spec.type, raw.data(), i, derived_value(spec.type, source[i], spec.derived_scale));
    values[spec.name] = widen(spec.type, raw);
  }
  return values;
}

reference_outputs compute_reference(const pair& declared, const workload& work, const reference_inputs& inputs) {
  held_reference_io io(work, declared.gpus());
  io.inputs = generate_inputs(declared, work, inputs);
  for (const auto& spec : declared.buffers()) {
    if (spec.role == buffer_role::output)
      io.outputs[spec.name].assign(static_cast<std::size_t>(spec.num_elements(work)) * static_cast<std::size_t>(declared.gpus()), 0.0);
  }
  declared.reference_of()(io);
  return std::move(io.outputs);
}

}  // namespace aisp::verify
