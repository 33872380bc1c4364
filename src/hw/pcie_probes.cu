// Host-device copies over PCIe: 256 MiB host to device and back, from pinned and from pageable
// host memory, events around each copy.
#include <cstring>
#include <memory>
#include <vector>

#include "hw/hw_probes.hpp"
#include "hw/probe_kit.cuh"

namespace aisp::hw_probes {
namespace {

constexpr std::size_t copy_bytes = std::size_t{256} << 20;

struct pinned_buffer {
  explicit pinned_buffer(std::size_t bytes) { AISP_CUDA_CHECK(cudaMallocHost(&data, bytes)); }
  ~pinned_buffer() { cudaFreeHost(data); }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  void* data = nullptr;
};

probe_result transfer(bool to_device, bool pinned) {
  device_buffer device(copy_bytes);
  std::unique_ptr<pinned_buffer> locked;
  std::vector<unsigned char> pageable;
  void* host = nullptr;
  if (pinned) {
    locked = std::make_unique<pinned_buffer>(copy_bytes);
    host = locked->data;
  } else {
    pageable.resize(copy_bytes);
    host = pageable.data();
  }
  std::memset(host, 0x5a, copy_bytes);  // touched: no first-touch faults inside the timing
  fill_random(device.as<float>(), copy_bytes / sizeof(float), 29);
  const std::string memory = pinned ? "pinned" : "pageable";
  auto r = described(std::string(to_device ? "h2d_" : "d2h_") + memory, "pcie",
                     std::string("cudaMemcpyAsync ") + (to_device ? "host to device" : "device to host") + ", " + memory +
                         " host memory",
                     "256 MiB", "B/s");
  const auto seconds = time_repeated(
      [&](cudaStream_t stream) {
        AISP_CUDA_CHECK(to_device ? cudaMemcpyAsync(device.as<void>(), host, copy_bytes, cudaMemcpyHostToDevice, stream)
                                  : cudaMemcpyAsync(host, device.as<void>(), copy_bytes, cudaMemcpyDeviceToHost, stream));
      },
      10, 2);
  summarize_into(r, rates(seconds, static_cast<double>(copy_bytes)));
  return r;
}

}  // namespace

std::vector<probe_result> pcie_probes() {
  return {transfer(true, true), transfer(false, true), transfer(true, false), transfer(false, false)};
}

}  // namespace aisp::hw_probes
