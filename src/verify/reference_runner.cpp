#include "verify/reference_runner.hpp"

#include "aisp/check.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"
#include "verify/compare.hpp"

namespace aisp::verify {
namespace {

class host_reference_io final : public reference_io {
 public:
  explicit host_reference_io(const workload& work) : work_(work) {}
  [[nodiscard]] const workload& work() const override { return work_; }
  [[nodiscard]] std::span<const double> input(std::string_view name) const override {
    const auto found = inputs_.find(name);
    AISP_EXPECTS(found != inputs_.end(), "reference asked for unknown input '" + std::string(name) + "'");
    return found->second;
  }
  [[nodiscard]] std::span<double> output(std::string_view name) override {
    const auto found = outputs_.find(name);
    AISP_EXPECTS(found != outputs_.end(), "reference asked for unknown output '" + std::string(name) + "'");
    return found->second;
  }

  workload work_;
  reference_outputs inputs_;
  reference_outputs outputs_;
};

}  // namespace

reference_outputs compute_reference(const pair& declared, const workload& work, std::uint64_t seed) {
  host_reference_io io(work);
  for (const auto& spec : declared.buffers()) {
    const auto count = static_cast<std::size_t>(spec.num_elements(work));
    if (spec.role == buffer_role::output) {
      io.outputs_[spec.name].assign(count, 0.0);
      continue;
    }
    if (spec.role != buffer_role::input) continue;
    // The reference sees the inputs exactly as the variants do: quantized to the buffer's dtype.
    std::vector<unsigned char> raw(count * dtype_size(spec.type));
    fill_seeded(spec.type, spec.init, buffer_stream_id(seed, spec.name), raw.data(), count);
    io.inputs_[spec.name] = widen(spec.type, raw);
  }
  declared.reference_of()(io);
  return std::move(io.outputs_);
}

}  // namespace aisp::verify
