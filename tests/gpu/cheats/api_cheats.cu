// Planted cheats the audit's API callbacks catch: an allocation per call (M4), an access-policy
// window pinning the input in L2 (X4), a module loaded (K5) or PTX JIT-compiled (L7) inside the
// timed call, and a CUDA graph that replays a result computed in setup (L3); and a graph-mode
// variant that launches only the first call of each capture (X2, caught by batch-reuse).
#include <nvrtc.h>

#include <stdexcept>
#include <string>

#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

// y = 2x + 1 as CUDA C++ source, compiled at run time by NVRTC.
constexpr const char* affine_source = R"(
extern "C" __global__ void affine_jit(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
})";

void check_nvrtc(nvrtcResult result) {
  if (result != NVRTC_SUCCESS) throw std::runtime_error(std::string("nvrtc: ") + nvrtcGetErrorString(result));
}

// PTX (JIT-compiled by the driver on load) or a cubin for sm_90a (loaded as is).
std::string compile_affine(bool cubin) {
  nvrtcProgram program = nullptr;
  check_nvrtc(nvrtcCreateProgram(&program, affine_source, "affine_jit.cu", 0, nullptr, nullptr));
  const char* options[] = {cubin ? "--gpu-architecture=sm_90a" : "--gpu-architecture=compute_90a"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 1, options);
  std::string image;
  if (compiled == NVRTC_SUCCESS) {
    std::size_t size = 0;
    check_nvrtc(cubin ? nvrtcGetCUBINSize(program, &size) : nvrtcGetPTXSize(program, &size));
    image.resize(size);
    check_nvrtc(cubin ? nvrtcGetCUBIN(program, image.data()) : nvrtcGetPTX(program, image.data()));
  }
  nvrtcDestroyProgram(&program);
  check_nvrtc(compiled);
  return image;
}

struct compiled_module {
  std::string image;
};

// Loads the image inside run() every call (the runtime's library API: no link to the driver),
// launches its kernel, unloads it.
void run_loaded_module(run_context& ctx) {
  cudaLibrary_t library = nullptr;
  AISP_CUDA_CHECK(cudaLibraryLoadData(&library, state_of<compiled_module>(ctx).image.data(), nullptr, nullptr, 0, nullptr,
                                      nullptr, 0));
  cudaKernel_t kernel = nullptr;
  AISP_CUDA_CHECK(cudaLibraryGetKernel(&kernel, library, "affine_jit"));
  const float* x = ctx.as<const float>("x");
  float* y = ctx.as<float>("y");
  long long n = ctx.num_elements("x");
  void* arguments[] = {&x, &y, &n};
  AISP_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks_for(n)), dim3(block_threads), arguments, 0,
                                   ctx.stream()));
  AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  AISP_CUDA_CHECK(cudaLibraryUnload(library));
}

stage_fn compile_in_setup(bool cubin) {
  return [cubin](run_context& ctx) { ctx.user_state() = new compiled_module{compile_affine(cubin)}; };
}

struct precomputed_graph {
  float* result = nullptr;
  cudaStream_t capture = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

}  // namespace

AISP_REGISTER(gpu_fixture("m4_allocates_every_call", "M4", "takes a scratch buffer from the stream pool on every call",
                          plain([](run_context& ctx) {
                            float* scratch = nullptr;
                            const auto bytes = static_cast<std::size_t>(ctx.num_elements("x")) * sizeof(float);
                            AISP_CUDA_CHECK(cudaMallocAsync(&scratch, bytes, ctx.stream()));
                            launch_affine(ctx, ctx.stream());
                            AISP_CHECK_LAUNCH();
                            AISP_CUDA_CHECK(cudaFreeAsync(scratch, ctx.stream()));
                          })).tag("check:device-allocation"));

AISP_REGISTER(gpu_fixture("x4_access_policy_window", "X4", "pins x in persisting L2 through a stream access-policy window",
                          plain([](run_context& ctx) {
                            cudaStreamAttrValue value{};
                            value.accessPolicyWindow.base_ptr = ctx.buffer("x");
                            value.accessPolicyWindow.num_bytes = 4u << 20;
                            value.accessPolicyWindow.hitRatio = 1.0f;
                            value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
                            value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
                            AISP_CUDA_CHECK(cudaStreamSetAttribute(ctx.stream(), cudaStreamAttributeAccessPolicyWindow, &value));
                            launch_affine(ctx, ctx.stream());
                            AISP_CHECK_LAUNCH();
                          })).tag("check:access-policy"));

AISP_REGISTER(gpu_fixture("k5_module_load_every_call", "K5", "loads its kernel's module (an NVRTC cubin) inside every call",
                          with_setup(run_loaded_module, compile_in_setup(true), release_state<compiled_module>)).tag("check:module-load"));

AISP_REGISTER(gpu_fixture("l7_jit_every_call", "L7", "JIT-compiles its kernel from PTX inside every call",
                          with_setup(run_loaded_module, compile_in_setup(false), release_state<compiled_module>)).tag("check:module-load"));

AISP_REGISTER(gpu_fixture("l3_graph_replays_setup_result", "L3",
                          "computes y in setup, captures a copy of it into a graph, and replays the graph",
                          with_setup(
                              [](run_context& ctx) {
                                AISP_CUDA_CHECK(cudaGraphLaunch(state_of<precomputed_graph>(ctx).exec, ctx.stream()));
                              },
                              [](run_context& ctx) {
                                auto* g = new precomputed_graph;
                                ctx.user_state() = g;
                                const std::int64_t n = ctx.num_elements("x");
                                const auto bytes = static_cast<std::size_t>(n) * sizeof(float);
                                AISP_CUDA_CHECK(cudaMalloc(&g->result, bytes));
                                affine_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), g->result, n, 0);
                                AISP_CHECK_LAUNCH();
                                AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&g->capture, cudaStreamNonBlocking));
                                AISP_CUDA_CHECK(cudaStreamBeginCapture(g->capture, cudaStreamCaptureModeThreadLocal));
                                AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), g->result, bytes, cudaMemcpyDeviceToDevice, g->capture));
                                AISP_CUDA_CHECK(cudaStreamEndCapture(g->capture, &g->graph));
                                AISP_CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, 0));
                              },
                              [](run_context& ctx) {
                                auto& g = state_of<precomputed_graph>(ctx);
                                cudaGraphExecDestroy(g.exec);
                                cudaGraphDestroy(g.graph);
                                cudaStreamDestroy(g.capture);
                                cudaFree(g.result);
                                release_state<precomputed_graph>(ctx);
                              })));

namespace {

// ---- X2 in a graph: a pair that declares short calls is timed in graph mode, its batch of calls
// captured once; while the stream is capturing, only a capture's first call launches (its id
// tells them apart), so a replay runs one call's kernel for the whole batch. Outside a capture
// (warmup, verified calls, one call a sample) every call launches ----
void first_call_of_each_capture(run_context& ctx) {
  static unsigned long long launched_in = 0;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long capture = 0;
  AISP_CUDA_CHECK(cudaStreamGetCaptureInfo(ctx.stream(), &status, &capture));
  if (status == cudaStreamCaptureStatusActive) {
    if (capture == launched_in) return;
    launched_in = capture;
  }
  honest(ctx);
}

pair captured_once_pair() {
  variant cheat = plain(first_call_of_each_capture);
  cheat.name = "optimized";
  cheat.summary = "planted cheat X2: launches only the first call of each graph capture";
  // 2^22 elements (~15 us a call on an H200): at 2^16 the honest baseline's graph samples lasted
  // 40 us, under timer-resolution's 50 (the batch is sized from a call's launch-bound warmup time).
  return affine_declaration("cheats_gpu:x2_graph_captures_one_call", cheat.summary, std::int64_t{1} << 22)
      .short_calls("a 16 MiB affine map runs in microseconds")
      .tag("cheat:X2")
      .tag("check:batch-reuse")
      .add_variant(std::move(cheat));
}

}  // namespace

AISP_REGISTER(captured_once_pair());

}  // namespace aisp::cheats_gpu
