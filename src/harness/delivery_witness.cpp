#include "harness/delivery_witness.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "aisp/check.hpp"

namespace aisp {

delivery_witness::delivery_witness(const delivery_spec& spec, const workload& work, const buffer_store& buffers, cudaStream_t stream)
    : spec_(spec), work_(work), buffers_(buffers), stream_(stream), element_bytes_(dtype_size(output().spec.type)) {
  AISP_EXPECTS(element_bytes_ <= sizeof(std::uint64_t), "delivers(): an output element of over 8 bytes");
  const int items = spec_.items(work_);
  AISP_EXPECTS(items >= 0, "delivers(): a negative item count");
  std::size_t total = 0;
  for (int item = 0; item < items; ++item) {
    outputs_.push_back(spec_.outputs(work_, item));
    AISP_EXPECTS(outputs_.back() >= 0, fmt::format("delivers(): item {} has a negative output count", item));
    total += static_cast<std::size_t>(outputs_.back());
    if (spec_.arrival_s) arrival_s_.push_back(spec_.arrival_s(work_, item));
  }
  delivered_.assign(outputs_.size(), 0);
  first_s_.assign(outputs_.size(), 0.0);
  last_s_.assign(outputs_.size(), 0.0);
  snapshots_.reserve(total);
  if (stream_ != nullptr) mirror_.resize(output().bytes());
}

void delivery_witness::begin_call() {
  std::fill(delivered_.begin(), delivered_.end(), 0);
  snapshots_.clear();
  call_start_ = std::chrono::steady_clock::now();
}

void delivery_witness::read_range(std::int64_t first, std::int64_t last) {
  if (stream_ == nullptr || last < first) return;
  const auto offset = static_cast<std::size_t>(first) * element_bytes_;
  const auto bytes = static_cast<std::size_t>(last - first + 1) * element_bytes_;
  AISP_CUDA_CHECK(cudaMemcpyAsync(mirror_.data() + offset, static_cast<const unsigned char*>(output().data) + offset, bytes,
                                  cudaMemcpyDeviceToHost, stream_));
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::uint64_t delivery_witness::bits_at(std::int64_t element) const {
  const unsigned char* base = stream_ != nullptr ? mirror_.data() : static_cast<const unsigned char*>(output().data);
  std::uint64_t bits = 0;
  std::memcpy(&bits, base + static_cast<std::size_t>(element) * element_bytes_, element_bytes_);
  return bits;
}

void delivery_witness::deliver(std::span<const int> items) {
  // The outputs are stamped once the stream's work is done: a kernel still making one cannot
  // have delivered it.
  if (stream_ != nullptr) AISP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start_).count();
  const auto elements = static_cast<std::int64_t>(output().num_elements);
  std::int64_t lowest = elements;
  std::int64_t highest = -1;
  const std::size_t first_new = snapshots_.size();
  for (const int item : items) {
    AISP_EXPECTS(item >= 0 && item < static_cast<int>(outputs_.size()),
                 fmt::format("deliver(): item {} is not one of the call's {} items", item, outputs_.size()));
    const auto at = static_cast<std::size_t>(item);
    AISP_EXPECTS(delivered_[at] < outputs_[at],
                 fmt::format("deliver(): item {} has {} outputs, and all were delivered already", item, outputs_[at]));
    AISP_EXPECTS(arrival_s_.empty() || now_s >= arrival_s_[at],
                 fmt::format("deliver(): item {} delivered at {:.3f} ms, before it arrived at {:.3f} ms", item, now_s * 1e3,
                             arrival_s_.empty() ? 0.0 : arrival_s_[at] * 1e3));
    const std::int64_t element = spec_.element(work_, item, delivered_[at]);
    AISP_EXPECTS(element >= 0 && element < elements,
                 fmt::format("delivers(): item {}'s output {} is at element {}, outside {}'s {}", item, delivered_[at], element,
                             spec_.output, elements));
    if (delivered_[at] == 0) first_s_[at] = now_s;
    last_s_[at] = now_s;
    snapshots_.push_back({element, 0, item, delivered_[at]++});
    lowest = std::min(lowest, element);
    highest = std::max(highest, element);
  }
  read_range(lowest, highest);
  for (std::size_t i = first_new; i < snapshots_.size(); ++i) snapshots_[i].bits = bits_at(snapshots_[i].element);
}

void delivery_witness::end_call(recorded_metrics& into) {
  for (std::size_t item = 0; item < outputs_.size(); ++item) {
    AISP_EXPECTS(delivered_[item] == outputs_[item],
                 fmt::format("deliver(): the call ended with {} of item {}'s {} outputs delivered: the rest went unseen",
                             delivered_[item], item, outputs_[item]));
  }
  if (!snapshots_.empty()) read_range(0, static_cast<std::int64_t>(output().num_elements) - 1);  // the call's last outputs
  for (const auto& s : snapshots_) {
    AISP_EXPECTS(bits_at(s.element) == s.bits,
                 fmt::format("deliver(): item {}'s output {} ({}[{}]) changed after it was delivered: it was handed over "
                             "before it was made",
                             s.item, s.index, spec_.output, s.element));
  }
  for (std::size_t item = 0; item < outputs_.size(); ++item) {
    if (outputs_[item] == 0) continue;
    if (!arrival_s_.empty()) into.add(witnessed_first_output, first_s_[item] - arrival_s_[item]);
    if (outputs_[item] > 1) into.add(witnessed_per_output, (last_s_[item] - first_s_[item]) / (outputs_[item] - 1));
  }
}

}  // namespace aisp
