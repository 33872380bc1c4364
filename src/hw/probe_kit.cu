#include "hw/probe_kit.cuh"

namespace aisp::hw_probes {
namespace {

__global__ void fill_random_kernel(float* data, std::size_t count, unsigned seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;  // a hash per element, not a constant
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    data[i] = static_cast<float>(x) * (2.0f / 4294967296.0f) - 1.0f;
  }
}

class event_pair {
 public:
  event_pair() {
    AISP_CUDA_CHECK(cudaEventCreate(&start));
    AISP_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~event_pair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

}  // namespace

std::vector<double> time_repeated(const std::function<void(cudaStream_t)>& launch, int repetitions, int warmup,
                                  cudaStream_t stream) {
  for (int i = 0; i < warmup; ++i) launch(stream);
  AISP_CUDA_CHECK(cudaGetLastError());
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
  event_pair events;
  std::vector<double> seconds;
  for (int i = 0; i < repetitions; ++i) {
    AISP_CUDA_CHECK(cudaEventRecord(events.start, stream));
    launch(stream);
    AISP_CUDA_CHECK(cudaEventRecord(events.stop, stream));
    AISP_CUDA_CHECK(cudaEventSynchronize(events.stop));
    AISP_CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    AISP_CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
    seconds.push_back(static_cast<double>(ms) * 1e-3);
  }
  return seconds;
}

std::vector<double> rates(const std::vector<double>& seconds, double amount) {
  std::vector<double> out;
  for (double s : seconds) out.push_back(s > 0 ? amount / s : 0);
  return out;
}

int sm_count() {
  int device = 0;
  AISP_CUDA_CHECK(cudaGetDevice(&device));
  int count = 0;
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

void fill_random(float* data, std::size_t count, unsigned seed) {
  fill_random_kernel<<<sm_count() * 8, 256>>>(data, count, seed);
  AISP_CHECK_LAUNCH();
  AISP_CUDA_CHECK(cudaDeviceSynchronize());
}

probe_result described(std::string name, std::string group, std::string method, std::string size, std::string unit) {
  probe_result r;
  r.name = std::move(name);
  r.group = std::move(group);
  r.method = std::move(method);
  r.size = std::move(size);
  r.unit = std::move(unit);
  return r;
}

}  // namespace aisp::hw_probes
