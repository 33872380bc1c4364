#include "harness/buffer_store.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "aisp/check.hpp"
#include "harness/buffer_digest.hpp"
#include "harness/plugin_loader.hpp"
#include "harness/shared_host_memory.hpp"
#include "support/element_codec.hpp"
#include "support/scattered_values.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {
namespace {

constexpr std::size_t host_alignment = 4096;

void* allocate(backend where, std::size_t bytes, bool shared = false) {
  const std::size_t padded = bytes == 0 ? host_alignment : bytes;
  if (where == backend::cuda) {
    void* pointer = nullptr;
    AISP_CUDA_CHECK(cudaMalloc(&pointer, padded));
    return pointer;
  }
  const std::size_t rounded = (padded + host_alignment - 1) / host_alignment * host_alignment;
  void* pointer = shared ? allocate_shared_host(rounded) : std::aligned_alloc(host_alignment, rounded);
  AISP_EXPECTS(pointer != nullptr, "host allocation of " + std::to_string(rounded) + " bytes failed");
  std::memset(pointer, 0xA5, rounded);  // pre-touch every page so no variant pays first-touch faults
  return pointer;
}

void release(backend where, void* pointer) {
  if (pointer == nullptr) return;
  if (where == backend::cuda) {
    cudaFree(pointer);  // destructor path: nothing to do with a failure here
  } else if (!release_shared_host(pointer)) {
    std::free(pointer);
  }
}

}  // namespace

buffer_store::buffer_store(const pair& declared, const workload& work, backend where, int rank)
    : where_(where), rank_(rank) {
  // Note [shared host buffers]: an executable pair's variant maps them from its own process.
  const bool shared = where == backend::host && is_exec_pair(declared.target());
  try {
    for (const auto& spec : declared.buffers()) {
      const std::int64_t count = spec.num_elements(work);
      AISP_EXPECTS(count > 0, declared.target() + ": buffer " + spec.name +
                                  " has a non-positive size for " + work.describe());
      owned_buffer owned{spec, static_cast<std::size_t>(count), nullptr};
      owned.data = allocate(where, owned.bytes(), shared);
      buffers_.push_back(std::move(owned));
    }
  } catch (...) {
    for (auto& b : buffers_) release(where_, b.data);
    throw;
  }
}

buffer_store::~buffer_store() {
  for (auto& b : buffers_) release(where_, b.data);
}

void buffer_store::write(const owned_buffer& buffer, const std::vector<unsigned char>& bytes) {
  if (where_ == backend::cuda) {
    AISP_CUDA_CHECK(cudaMemcpy(buffer.data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  } else {
    std::memcpy(buffer.data, bytes.data(), bytes.size());
  }
}

std::vector<unsigned char> buffer_store::read(const owned_buffer& buffer) const {
  std::vector<unsigned char> bytes(buffer.bytes());
  if (where_ == backend::cuda) {
    AISP_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer.data, bytes.size(), cudaMemcpyDeviceToHost));
  } else {
    std::memcpy(bytes.data(), buffer.data, bytes.size());
  }
  return bytes;
}

void buffer_store::fill_inputs(std::uint64_t seed, input_values values, const std::vector<input_values>& scattered) {
  for (const auto& b : buffers_) {
    if (b.spec.role == buffer_role::output || !b.spec.derived_from.empty()) continue;
    std::vector<unsigned char> bytes(b.bytes());
    const auto stream_id = buffer_stream_id(rank_seed(seed, b.spec.same_on_every_rank ? 0 : rank_), b.spec.name);
    fill_seeded(b.spec.type, effective_init(b.spec, values), stream_id, bytes.data(), b.num_elements);
    widen_draws(b.spec, values, bytes.data(), b.num_elements);
    static_cast<void>(scatter_levels(b.spec, scattered, stream_id, bytes.data(), b.num_elements));  // inputs only: scatters()
    write(b, bytes);
    for (const auto& derived : buffers_) {  // Note [derived inputs]: from the bytes just made
      if (derived.spec.derived_from != b.spec.name) continue;
      std::vector<unsigned char> rounded(derived.bytes());
      host_derive_input(b.spec.type, bytes.data(), derived.spec.type, rounded.data(), b.num_elements, derived.spec.derived_scale);
      write(derived, rounded);
    }
  }
}

// Note [challenge refills on the device]: a benchmark-size challenge drawn on the host and copied
// in took seconds a worker for ch16's 235M-element weights (H100, 2026-12-05); its truth is the
// baseline's answer, so the device's own generator serves (the few scattered elements are
// written one by one).
void buffer_store::fill_inputs_where_they_live(std::uint64_t seed, input_values values, const std::vector<input_values>& scattered,
                                               cudaStream_t stream) {
  if (where_ != backend::cuda) {
    fill_inputs(seed, values, scattered);
    return;
  }
  for (const auto& b : buffers_) {
    if (b.spec.role == buffer_role::output || !b.spec.derived_from.empty()) continue;
    const auto stream_id = buffer_stream_id(rank_seed(seed, b.spec.same_on_every_rank ? 0 : rank_), b.spec.name);
    device_fill_input(b.spec.type, effective_init(b.spec, values), stream_id, b.data, b.num_elements, stream);
    if (widens(b.spec, values))
      device_widen_draws(b.spec.type, reshape_of(values, b.spec.type), b.data, b.num_elements, stream);
    const auto plan = scatter_plan(b.spec, scattered, stream_id, b.num_elements);  // inputs only: scatters()
    if (!plan.empty()) AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (const auto& e : plan) {
      std::vector<unsigned char> from(dtype_size(b.spec.type));
      AISP_CUDA_CHECK(cudaMemcpy(from.data(), static_cast<const unsigned char*>(b.data) + e.from * from.size(), from.size(),
                                 cudaMemcpyDeviceToHost));
      static_cast<void>(store_element(b, e.index, e.scale * load_as_double(b.spec.type, from.data(), 0) + e.add));
    }
  }
  derive_on_device(stream);
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void buffer_store::fill_scratch(std::uint64_t seed) {
  for (const auto& b : buffers_) {
    if (b.spec.role != buffer_role::scratch) continue;
    std::vector<unsigned char> bytes(b.bytes());
    fill_seeded(b.spec.type, b.spec.init, buffer_stream_id(rank_seed(seed, b.spec.same_on_every_rank ? 0 : rank_), b.spec.name), bytes.data(), b.num_elements);
    write(b, bytes);
  }
}

void buffer_store::write_element(const owned_buffer& buffer, std::size_t index, double value) {
  AISP_EXPECTS(index < buffer.num_elements, "element index out of range");
  AISP_EXPECTS(buffer.spec.derived_from.empty(), "input " + buffer.spec.name + " is derived from " + buffer.spec.derived_from +
                                                     ": write the source, and it follows");
  const double stored = store_element(buffer, index, value);  // the source's rounding first
  for (const auto& derived : buffers_) {
    if (derived.spec.derived_from == buffer.spec.name) {
      static_cast<void>(store_element(derived, index, derived_value(derived.spec.type, stored, derived.spec.derived_scale)));
    }
  }
}

void buffer_store::redraw_copy_alone(const owned_buffer& copy, std::uint64_t seed) {
  AISP_EXPECTS(!copy.spec.derived_from.empty(), "only a derived input is drawn again alone: " + copy.spec.name);
  const auto& source = find(copy.spec.derived_from);
  const auto stream_id = buffer_stream_id(rank_seed(seed, copy.spec.same_on_every_rank ? 0 : rank_), copy.spec.name);
  std::vector<unsigned char> drawn(source.bytes());
  fill_seeded(source.spec.type, effective_init(source.spec, input_values::declared), stream_id, drawn.data(), source.num_elements);
  std::vector<unsigned char> rounded(copy.bytes());
  host_derive_input(source.spec.type, drawn.data(), copy.spec.type, rounded.data(), copy.num_elements, copy.spec.derived_scale);
  write(copy, rounded);
}

void buffer_store::move_source_within_its_copies(const owned_buffer& source) {
  AISP_EXPECTS(source.spec.derived_from.empty(), "only a source moves within its copies: " + source.spec.name);
  std::vector<const owned_buffer*> copies;
  for (const auto& b : buffers_)
    if (b.spec.derived_from == source.spec.name) copies.push_back(&b);
  AISP_EXPECTS(!copies.empty(), "input " + source.spec.name + " has no derived copy to move within");
  auto bytes = read(source);
  for (std::size_t i = 0; i < source.num_elements; ++i) {
    const double x = load_as_double(source.spec.type, bytes.data(), i);
    const auto& first = copies.front()->spec;
    const double centre = derived_value(first.type, x, first.derived_scale) / first.derived_scale;
    const double moved = centre + 0.9 * (centre - x);
    store_from_double(source.spec.type, bytes.data(), i, moved);
    const double stored = load_as_double(source.spec.type, bytes.data(), i);
    const bool same_codes = std::all_of(copies.begin(), copies.end(), [&](const owned_buffer* copy) {
      return derived_value(copy->spec.type, stored, copy->spec.derived_scale) == derived_value(copy->spec.type, x, copy->spec.derived_scale);
    });
    if (!same_codes) store_from_double(source.spec.type, bytes.data(), i, x);  // a cell the source's type cannot mirror in
  }
  write(source, bytes);
}

double buffer_store::store_element(const owned_buffer& buffer, std::size_t index, double value) {
  std::vector<unsigned char> element(dtype_size(buffer.spec.type));
  store_from_double(buffer.spec.type, element.data(), 0, value);
  auto* target = static_cast<unsigned char*>(buffer.data) + index * element.size();
  if (where_ == backend::cuda) {
    AISP_CUDA_CHECK(cudaMemcpy(target, element.data(), element.size(), cudaMemcpyHostToDevice));
  } else {
    std::memcpy(target, element.data(), element.size());
  }
  return load_as_double(buffer.spec.type, element.data(), 0);
}

void buffer_store::poison_outputs(cudaStream_t stream) {
  fill_outputs({0, true}, stream);
  if (where_ == backend::cuda) AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::uint64_t buffer_store::digest(const owned_buffer& buffer, cudaStream_t stream) const {
  if (where_ == backend::cuda) return device_digest(buffer.data, buffer.bytes(), stream);
  return host_digest(buffer.data, buffer.bytes());
}

std::size_t buffer_store::count_subnormals(const owned_buffer& buffer, cudaStream_t stream) const {
  if (where_ == backend::cuda) return device_count_subnormals(buffer.spec.type, buffer.data, buffer.num_elements, stream);
  return host_count_subnormals(buffer.spec.type, buffer.data, buffer.num_elements);
}

output_fill buffer_store::fill_of(const output_fill& fill, const owned_buffer& buffer) {
  return {buffer_stream_id(fill.seed, buffer.spec.name), fill.poison};
}

void buffer_store::refresh_inputs(std::uint64_t seed, cudaStream_t stream) {
  if (where_ == backend::host) {
    if (staged_seed_ == seed) {
      for (std::size_t i = 0; i < buffers_.size(); ++i)
        if (buffers_[i].spec.role == buffer_role::input) std::memcpy(buffers_[i].data, staged_[i].data(), buffers_[i].bytes());
    } else {
      draw_inputs(seed, [](const owned_buffer& b) { return b.data; });
    }
    staged_seed_.reset();
    return;
  }
  for (const auto& b : buffers_) {
    if (b.spec.role != buffer_role::input || !b.spec.derived_from.empty()) continue;
    const auto stream_id = buffer_stream_id(rank_seed(seed, b.spec.same_on_every_rank ? 0 : rank_), b.spec.name);
    device_fill_input(b.spec.type, b.spec.init, stream_id, b.data, b.num_elements, stream);
  }
  derive_on_device(stream);
}

void buffer_store::derive_on_device(cudaStream_t stream) {
  for (const auto& derived : buffers_) {  // Note [derived inputs]: after every source is filled
    if (derived.spec.derived_from.empty()) continue;
    const auto& source = find(derived.spec.derived_from);
    device_derive_input(source.spec.type, source.data, derived.spec.type, derived.data, derived.num_elements,
                        derived.spec.derived_scale, stream);
  }
}

void buffer_store::stage_inputs(std::uint64_t seed) {
  if (where_ != backend::host) return;
  staged_.resize(buffers_.size());
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].spec.role == buffer_role::input) staged_[i].resize(buffers_[i].bytes());
  draw_inputs(seed, [this](const owned_buffer& b) { return static_cast<void*>(staged_[static_cast<std::size_t>(&b - buffers_.data())].data()); });
  staged_seed_ = seed;
}

void buffer_store::draw_inputs(std::uint64_t seed, const std::function<void*(const owned_buffer&)>& into) {
  for (const auto& b : buffers_) {
    if (b.spec.role != buffer_role::input || !b.spec.derived_from.empty()) continue;
    const auto stream_id = buffer_stream_id(rank_seed(seed, b.spec.same_on_every_rank ? 0 : rank_), b.spec.name);
    host_fill_input(b.spec.type, b.spec.init, stream_id, into(b), b.num_elements);
  }
  for (const auto& derived : buffers_) {  // Note [derived inputs]: after every source is filled
    if (derived.spec.derived_from.empty()) continue;
    const auto& source = find(derived.spec.derived_from);
    host_derive_input(source.spec.type, into(source), derived.spec.type, into(derived), derived.num_elements, derived.spec.derived_scale);
  }
}

void buffer_store::fill_outputs(const output_fill& fill, cudaStream_t stream) {
  for (const auto& b : buffers_) {
    if (b.spec.role != buffer_role::output) continue;
    if (where_ == backend::cuda) {
      device_fill_output(b.spec.type, fill_of(fill, b), b.data, b.num_elements, stream);
    } else {
      host_fill_output(b.spec.type, fill_of(fill, b), b.data, b.num_elements);
    }
  }
}

fill_matches buffer_store::count_fill(const owned_buffer& buffer, const output_fill& fill, std::size_t listed,
                                      cudaStream_t stream) const {
  if (where_ == backend::cuda) return device_count_fill(buffer.spec.type, fill_of(fill, buffer), buffer.data, buffer.num_elements, listed, stream);
  return host_count_fill(buffer.spec.type, fill_of(fill, buffer), buffer.data, buffer.num_elements, listed);
}

std::vector<unsigned char> buffer_store::gather(const owned_buffer& buffer, const std::vector<std::size_t>& positions,
                                                cudaStream_t stream) const {
  const std::size_t width = dtype_size(buffer.spec.type);
  if (where_ == backend::cuda) return device_gather(buffer.data, width, positions, stream);
  std::vector<unsigned char> values(positions.size() * width);
  for (std::size_t j = 0; j < positions.size(); ++j) {
    AISP_EXPECTS(positions[j] < buffer.num_elements, "gather position out of range");
    std::memcpy(values.data() + j * width, static_cast<const unsigned char*>(buffer.data) + positions[j] * width, width);
  }
  return values;
}

std::unique_ptr<buffer_store> buffer_store::snapshot_outputs(cudaStream_t stream) const {
  std::vector<owned_buffer> copies;
  try {
    for (const auto& b : buffers_) {
      if (b.spec.role != buffer_role::output) continue;
      owned_buffer copy{b.spec, b.num_elements, allocate(where_, b.bytes())};
      copies.push_back(copy);
      if (where_ == backend::cuda) {
        AISP_CUDA_CHECK(cudaMemcpyAsync(copy.data, b.data, b.bytes(), cudaMemcpyDeviceToDevice, stream));
      } else {
        std::memcpy(copy.data, b.data, b.bytes());
      }
    }
    if (where_ == backend::cuda) AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (...) {
    for (auto& b : copies) release(where_, b.data);
    throw;
  }
  return std::unique_ptr<buffer_store>(new buffer_store(where_, std::move(copies)));
}

void buffer_store::copy_outputs_to(buffer_store& snapshot, cudaStream_t stream) const {
  for (const auto& b : buffers_) {
    if (b.spec.role != buffer_role::output) continue;
    const auto& into = snapshot.find(b.spec.name);
    AISP_EXPECTS(into.bytes() == b.bytes(), "snapshot of another workload");
    if (where_ == backend::cuda) {
      AISP_CUDA_CHECK(cudaMemcpyAsync(into.data, b.data, b.bytes(), cudaMemcpyDeviceToDevice, stream));
    } else {
      std::memcpy(into.data, b.data, b.bytes());
    }
  }
  if (where_ == backend::cuda) AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
}

const owned_buffer& buffer_store::find(std::string_view name) const {
  for (const auto& b : buffers_) {
    if (b.spec.name == name) return b;
  }
  AISP_EXPECTS(false, "no buffer named '" + std::string(name) + "'");
  return buffers_.front();
}

std::size_t buffer_store::total_bytes() const {
  std::size_t total = 0;
  for (const auto& b : buffers_) total += b.bytes();
  return total;
}

}  // namespace aisp
