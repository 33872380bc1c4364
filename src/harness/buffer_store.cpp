#include "harness/buffer_store.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include "aisp/check.hpp"
#include "support/element_codec.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {
namespace {

constexpr std::size_t host_alignment = 4096;

void* allocate(backend where, std::size_t bytes) {
  const std::size_t padded = bytes == 0 ? host_alignment : bytes;
  if (where == backend::cuda) {
    void* pointer = nullptr;
    AISP_CUDA_CHECK(cudaMalloc(&pointer, padded));
    return pointer;
  }
  const std::size_t rounded = (padded + host_alignment - 1) / host_alignment * host_alignment;
  void* pointer = std::aligned_alloc(host_alignment, rounded);
  AISP_EXPECTS(pointer != nullptr, "host allocation of " + std::to_string(rounded) + " bytes failed");
  std::memset(pointer, 0xA5, rounded);  // pre-touch every page so no variant pays first-touch faults
  return pointer;
}

void release(backend where, void* pointer) {
  if (pointer == nullptr) return;
  if (where == backend::cuda) {
    cudaFree(pointer);  // destructor path: nothing to do with a failure here
  } else {
    std::free(pointer);
  }
}

}  // namespace

std::vector<unsigned char> pattern_bytes(std::uint64_t seed, const owned_buffer& buffer) {
  std::vector<unsigned char> bytes(buffer.bytes());
  fill_random_bytes(buffer_stream_id(seed, buffer.spec.name), bytes.data(), bytes.size());
  return bytes;
}

buffer_store::buffer_store(const pair& declared, const workload& work, backend where)
    : where_(where) {
  try {
    for (const auto& spec : declared.buffers()) {
      const std::int64_t count = spec.num_elements(work);
      AISP_EXPECTS(count > 0, declared.target() + ": buffer " + spec.name +
                                  " has a non-positive size for " + work.describe());
      owned_buffer owned{spec, static_cast<std::size_t>(count), nullptr};
      owned.data = allocate(where, owned.bytes());
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

void buffer_store::fill_inputs(std::uint64_t seed, bool exact_integers) {
  for (const auto& b : buffers_) {
    if (b.spec.role == buffer_role::output) continue;
    std::vector<unsigned char> bytes(b.bytes());
    fill_seeded(b.spec.type, effective_init(b.spec, exact_integers), buffer_stream_id(seed, b.spec.name),
                bytes.data(), b.num_elements);
    write(b, bytes);
  }
}

void buffer_store::fill_outputs_with_pattern(std::uint64_t seed) {
  for (const auto& b : buffers_) {
    if (b.spec.role != buffer_role::output) continue;
    write(b, pattern_bytes(seed, b));
  }
}

void buffer_store::write_element(const owned_buffer& buffer, std::size_t index, double value) {
  AISP_EXPECTS(index < buffer.num_elements, "element index out of range");
  std::vector<unsigned char> element(dtype_size(buffer.spec.type));
  store_from_double(buffer.spec.type, element.data(), 0, value);
  auto* target = static_cast<unsigned char*>(buffer.data) + index * element.size();
  if (where_ == backend::cuda) {
    AISP_CUDA_CHECK(cudaMemcpy(target, element.data(), element.size(), cudaMemcpyHostToDevice));
  } else {
    std::memcpy(target, element.data(), element.size());
  }
}

void buffer_store::poison_outputs() {
  for (const auto& b : buffers_) {
    if (b.spec.role != buffer_role::output) continue;
    std::vector<unsigned char> bytes(b.bytes());
    fill_poison(b.spec.type, bytes.data(), b.num_elements);
    write(b, bytes);
  }
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
