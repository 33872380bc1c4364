// Launch costs: back-to-back empty kernels (throughput), one launch plus a sync on the host clock
// (latency), and one kernel of a captured 1000-kernel CUDA graph replayed (graph cost).
#include <chrono>

#include "hw/hw_probes.hpp"
#include "hw/probe_kit.cuh"

namespace aisp::hw_probes {
namespace {

__global__ void empty_kernel() {}

constexpr int batch = 1000;

probe_result back_to_back() {
  auto r = described("launch_throughput", "launch", "1000 empty kernels back to back on one stream, events around the batch",
                     "1000 launches", "s");
  const auto seconds = time_repeated(
      [](cudaStream_t stream) {
        for (int i = 0; i < batch; ++i) empty_kernel<<<1, 32, 0, stream>>>();
      },
      20);
  std::vector<double> per_launch;
  for (double s : seconds) per_launch.push_back(s / batch);
  summarize_into(r, per_launch);
  return r;
}

probe_result launch_and_sync() {
  auto r = described("launch_sync_latency", "launch", "host clock around one empty launch and cudaStreamSynchronize", "1 launch", "s");
  std::vector<double> seconds;
  for (int i = 0; i < 1000; ++i) {
    const auto start = std::chrono::steady_clock::now();
    empty_kernel<<<1, 32>>>();
    AISP_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  AISP_CHECK_LAUNCH();
  summarize_into(r, seconds);
  return r;
}

probe_result graph_kernel() {
  cudaStream_t stream = nullptr;
  AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  AISP_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < batch; ++i) empty_kernel<<<1, 32, 0, stream>>>();
  AISP_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  AISP_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  auto r = described("graph_kernel", "launch", "a captured graph of 1000 empty kernels replayed; time per kernel", "1000 nodes", "s");
  const auto seconds = time_repeated([&](cudaStream_t s) { AISP_CUDA_CHECK(cudaGraphLaunch(exec, s)); }, 20, 3, stream);
  std::vector<double> per_kernel;
  for (double s : seconds) per_kernel.push_back(s / batch);
  summarize_into(r, per_kernel);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return r;
}

}  // namespace

std::vector<probe_result> launch_probes() { return {back_to_back(), launch_and_sync(), graph_kernel()}; }

}  // namespace aisp::hw_probes
