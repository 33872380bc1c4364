// With two or more GPUs: the peer-to-peer bandwidth and latency matrix (cudaMemcpyPeerAsync,
// peer access enabled where the pair supports it), and NCCL all-reduce bus bandwidth. NCCL is
// loaded with dlopen, never linked: a machine without it reports why.
#include <dlfcn.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "hw/hw_probes.hpp"
#include "hw/probe_kit.cuh"

namespace aisp::hw_probes {
namespace {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

probe_result peer_copy(int from, int to, std::size_t bytes, bool latency) {
  auto r = described(std::string("p2p_") + (latency ? "latency_" : "bandwidth_") + std::to_string(from) + "_" + std::to_string(to), "p2p",
                     latency ? "one 4-byte cudaMemcpyPeerAsync, events around it" : "cudaMemcpyPeerAsync of 256 MiB",
                     latency ? "4 B" : "256 MiB", latency ? "s" : "B/s");
  int can_access = 0;
  AISP_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, to, from));
  AISP_CUDA_CHECK(cudaSetDevice(from));
  device_buffer source(bytes);
  AISP_CUDA_CHECK(cudaSetDevice(to));
  device_buffer target(bytes);
  if (can_access != 0) {
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(from, 0);
    if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled) AISP_CUDA_CHECK(enabled);
    (void)cudaGetLastError();
  }
  const auto seconds = time_repeated(
      [&](cudaStream_t stream) {
        AISP_CUDA_CHECK(cudaMemcpyPeerAsync(target.as<void>(), to, source.as<void>(), from, bytes, stream));
      },
      latency ? 100 : 10);
  summarize_into(r, latency ? seconds : rates(seconds, static_cast<double>(bytes)));
  r.method += can_access != 0 ? " (peer access on)" : " (no peer access: staged)";
  AISP_CUDA_CHECK(cudaSetDevice(0));
  return r;
}

// The few NCCL entry points used, declared by hand (no nccl.h on the build machine needed).
using nccl_comm = void*;
using comm_init_all_fn = int (*)(nccl_comm*, int, const int*);
using all_reduce_fn = int (*)(const void*, void*, std::size_t, int, int, nccl_comm, cudaStream_t);
using group_fn = int (*)();
using comm_destroy_fn = int (*)(nccl_comm);
constexpr int nccl_float32 = 7;
constexpr int nccl_sum = 0;

probe_result all_reduce(int gpus) {
  auto r = described("nccl_allreduce_busbw", "nccl",
                     "ncclAllReduce sum fp32 over " + std::to_string(gpus) + " GPUs in one process; bus bandwidth = bytes/t x 2(n-1)/n",
                     "256 MiB per GPU", "B/s");
  void* library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    r.error = std::string("NCCL unavailable: ") + (why != nullptr ? why : "libnccl.so.2");
    return r;
  }
  const auto init_all = reinterpret_cast<comm_init_all_fn>(dlsym(library, "ncclCommInitAll"));
  const auto reduce = reinterpret_cast<all_reduce_fn>(dlsym(library, "ncclAllReduce"));
  const auto group_start = reinterpret_cast<group_fn>(dlsym(library, "ncclGroupStart"));
  const auto group_end = reinterpret_cast<group_fn>(dlsym(library, "ncclGroupEnd"));
  const auto destroy = reinterpret_cast<comm_destroy_fn>(dlsym(library, "ncclCommDestroy"));
  if (init_all == nullptr || reduce == nullptr || group_start == nullptr || group_end == nullptr || destroy == nullptr) {
    r.error = "NCCL unavailable: an entry point is missing";
    dlclose(library);
    return r;
  }
  constexpr std::size_t bytes = std::size_t{256} << 20;
  std::vector<nccl_comm> comms(static_cast<std::size_t>(gpus));
  std::vector<int> devices(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) devices[static_cast<std::size_t>(g)] = g;
  if (init_all(comms.data(), gpus, devices.data()) != 0) {
    r.error = "ncclCommInitAll failed";
    dlclose(library);
    return r;
  }
  std::vector<std::unique_ptr<device_buffer>> buffers;
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    AISP_CUDA_CHECK(cudaSetDevice(g));
    buffers.push_back(std::make_unique<device_buffer>(bytes));
    fill_random(buffers.back()->as<float>(), bytes / sizeof(float), static_cast<unsigned>(31 + g));
    AISP_CUDA_CHECK(cudaStreamCreate(&streams[static_cast<std::size_t>(g)]));
  }
  const auto once = [&] {
    group_start();
    for (int g = 0; g < gpus; ++g) {
      const auto i = static_cast<std::size_t>(g);
      reduce(buffers[i]->as<void>(), buffers[i]->as<void>(), bytes / sizeof(float), nccl_float32, nccl_sum, comms[i], streams[i]);
    }
    group_end();
    for (int g = 0; g < gpus; ++g) {
      AISP_CUDA_CHECK(cudaSetDevice(g));
      AISP_CUDA_CHECK(cudaStreamSynchronize(streams[static_cast<std::size_t>(g)]));
    }
  };
  for (int i = 0; i < 3; ++i) once();
  std::vector<double> busbw;
  for (int i = 0; i < 10; ++i) {
    const auto start = std::chrono::steady_clock::now();
    once();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    busbw.push_back(static_cast<double>(bytes) / seconds * 2.0 * (gpus - 1) / gpus);
  }
  summarize_into(r, busbw);
  for (int g = 0; g < gpus; ++g) {
    AISP_CUDA_CHECK(cudaSetDevice(g));
    cudaStreamDestroy(streams[static_cast<std::size_t>(g)]);
    destroy(comms[static_cast<std::size_t>(g)]);
  }
  buffers.clear();
  AISP_CUDA_CHECK(cudaSetDevice(0));
  dlclose(library);
  return r;
}

probe_result needs_two(const char* name, const char* group) {
  auto r = described(name, group, "needs two or more GPUs", "-", "-");
  r.error = "this machine has " + std::to_string(device_count()) + " GPU";
  return r;
}

}  // namespace

std::vector<probe_result> p2p_probes() {
  const int gpus = device_count();
  if (gpus < 2) return {needs_two("p2p", "p2p")};
  std::vector<probe_result> results;
  for (int from = 0; from < gpus; ++from) {
    for (int to = 0; to < gpus; ++to) {
      if (from == to) continue;
      results.push_back(peer_copy(from, to, std::size_t{256} << 20, false));
      results.push_back(peer_copy(from, to, 4, true));
    }
  }
  return results;
}

std::vector<probe_result> nccl_probes() {
  const int gpus = device_count();
  if (gpus < 2) return {needs_two("nccl_allreduce_busbw", "nccl")};
  return {all_reduce(gpus)};
}

}  // namespace aisp::hw_probes
