// Planted cheats the device timeline catches: work that escapes the timed window (T1, T2, C4),
// a host function in the stream (C1), work done on the host (L1, also behind the launch gate),
// another device (C5).
// Run: aisp_cheats bench run --targets cheats_gpu --verify-phase detect (tests/gpu/gpu_cheats_test).
#include "gpu_fixture.cuh"

namespace aisp::cheats_gpu {
namespace {

// A non-blocking stream: it never waits for the timed stream, so the stop event does not wait for it.
struct side_stream {
  cudaStream_t stream = nullptr;
  float* staging = nullptr;
};

void make_side_stream(run_context& ctx) {
  auto* s = new side_stream;
  AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
  AISP_CUDA_CHECK(cudaMalloc(&s->staging, static_cast<std::size_t>(ctx.num_elements("y")) * sizeof(float)));
  ctx.user_state() = s;
}

void drop_side_stream(run_context& ctx) {
  auto& s = state_of<side_stream>(ctx);
  cudaStreamDestroy(s.stream);
  cudaFree(s.staging);
  release_state<side_stream>(ctx);
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

void host_noop(void*) {}

}  // namespace

AISP_REGISTER(gpu_fixture("t1_side_stream_escape", "T1", "the kernel runs on a non-blocking side stream, never joined",
                          with_setup(
                              [](run_context& ctx) {
                                launch_affine(ctx, state_of<side_stream>(ctx).stream);
                                AISP_CHECK_LAUNCH();
                              },
                              make_side_stream, drop_side_stream)).tag("check:escaped-kernel"));

AISP_REGISTER(gpu_fixture("t2_copy_left_in_flight", "T2",
                          "computes into staging, then copies it to y on a side stream the timer never waits for",
                          with_setup(
                              [](run_context& ctx) {
                                auto& s = state_of<side_stream>(ctx);
                                const std::int64_t n = ctx.num_elements("x");
                                affine_kernel<<<blocks_for(n), block_threads, 0, ctx.stream()>>>(ctx.as<const float>("x"), s.staging, n, 0);
                                AISP_CHECK_LAUNCH();
                                AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
                                AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), s.staging, static_cast<std::size_t>(n) * sizeof(float),
                                                                cudaMemcpyDeviceToDevice, s.stream));
                              },
                              make_side_stream, drop_side_stream)).tag("check:escaped-copy").tag("check:escaped-work"));

AISP_REGISTER(gpu_fixture("c1_host_function_in_stream", "C1", "enqueues a host function after the kernel",
                          plain([](run_context& ctx) {
                            launch_affine(ctx, ctx.stream());
                            AISP_CHECK_LAUNCH();
                            AISP_CUDA_CHECK(cudaLaunchHostFunc(ctx.stream(), host_noop, nullptr));
                          })).tag("check:host-callback"));

AISP_REGISTER(gpu_fixture("c4_kernel_left_spinning", "C4",
                          "does the work, then leaves a kernel spinning for ~5 ms on a side stream",
                          with_setup(
                              [](run_context& ctx) {
                                launch_affine(ctx, ctx.stream());
                                AISP_CHECK_LAUNCH();
                                spin_kernel<<<1, 32, 0, state_of<side_stream>(ctx).stream>>>(10'000'000);
                                AISP_CHECK_LAUNCH();
                              },
                              make_side_stream, drop_side_stream)).tag("check:escaped-kernel"));

// The work happens on the CPU: two copies keep the device busy for a sliver of the sample.
struct host_mirror {
  float* x = nullptr;
  float* y = nullptr;
};

AISP_REGISTER(gpu_fixture("l1_computes_on_host", "L1", "copies x to pinned host memory, computes there, copies y back",
                          with_setup(
                              [](run_context& ctx) {
                                auto& m = state_of<host_mirror>(ctx);
                                const auto n = static_cast<std::size_t>(ctx.num_elements("x"));
                                AISP_CUDA_CHECK(cudaMemcpyAsync(m.x, ctx.as<const float>("x"), n * sizeof(float), cudaMemcpyDeviceToHost, ctx.stream()));
                                AISP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
                                for (std::size_t i = 0; i < n; ++i) m.y[i] = 2.0f * m.x[i] + 1.0f;
                                AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), m.y, n * sizeof(float), cudaMemcpyHostToDevice, ctx.stream()));
                              },
                              [](run_context& ctx) {
                                auto* m = new host_mirror;
                                const auto bytes = static_cast<std::size_t>(ctx.num_elements("x")) * sizeof(float);
                                AISP_CUDA_CHECK(cudaMallocHost(&m->x, bytes));
                                AISP_CUDA_CHECK(cudaMallocHost(&m->y, bytes));
                                ctx.user_state() = m;
                              },
                              [](run_context& ctx) {
                                auto& m = state_of<host_mirror>(ctx);
                                cudaFreeHost(m.x);
                                cudaFreeHost(m.y);
                                release_state<host_mirror>(ctx);
                              })).tag("check:device-idle"));

// Note [launch gate]: the same host work, its input read on a stream of its own, which the gate
// does not hold: the read runs before the window opens and the host computes while the gate
// holds the window, so only the copy back would be timed. The host queues slower than the GPU
// runs, so the sampler drops the gate and the device idles in the window (and an audited gated
// sample sees the read escape before the start event).
struct host_mirror_aside {
  host_mirror mirror;
  cudaStream_t stream = nullptr;
};

AISP_REGISTER(gpu_fixture("l1_host_work_behind_the_gate", "L1",
                          "reads x on its own stream, computes on the host while the launch gate holds the window, copies y back",
                          with_setup(
                              [](run_context& ctx) {
                                auto& m = state_of<host_mirror_aside>(ctx);
                                const auto bytes = static_cast<std::size_t>(ctx.num_elements("x")) * sizeof(float);
                                AISP_CUDA_CHECK(cudaMemcpyAsync(m.mirror.x, ctx.as<const float>("x"), bytes, cudaMemcpyDeviceToHost, m.stream));
                                AISP_CUDA_CHECK(cudaStreamSynchronize(m.stream));
                                for (std::size_t i = 0; i < bytes / sizeof(float); ++i) m.mirror.y[i] = 2.0f * m.mirror.x[i] + 1.0f;
                                AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.as<float>("y"), m.mirror.y, bytes, cudaMemcpyHostToDevice, ctx.stream()));
                              },
                              [](run_context& ctx) {
                                auto* m = new host_mirror_aside;
                                const auto bytes = static_cast<std::size_t>(ctx.num_elements("x")) * sizeof(float);
                                AISP_CUDA_CHECK(cudaMallocHost(&m->mirror.x, bytes));
                                AISP_CUDA_CHECK(cudaMallocHost(&m->mirror.y, bytes));
                                AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
                                ctx.user_state() = m;
                              },
                              [](run_context& ctx) {
                                auto& m = state_of<host_mirror_aside>(ctx);
                                cudaFreeHost(m.mirror.x);
                                cudaFreeHost(m.mirror.y);
                                cudaStreamDestroy(m.stream);
                                release_state<host_mirror_aside>(ctx);
                              })).tag("check:device-idle"));

// On a one-GPU machine the switch to device 1 fails and the work stays here; the attempt is the cheat.
AISP_REGISTER(gpu_fixture("c5_work_on_another_device", "C5", "switches to device 1 inside run() for part of the work",
                          plain([](run_context& ctx) {
                            int devices = 0;
                            AISP_CUDA_CHECK(cudaGetDeviceCount(&devices));
                            if (devices > 1 && cudaSetDevice(1) == cudaSuccess) {
                              spin_kernel<<<1, 32>>>(100'000);
                              (void)cudaDeviceSynchronize();
                            } else {
                              (void)cudaSetDevice(1);
                            }
                            (void)cudaGetLastError();
                            AISP_CUDA_CHECK(cudaSetDevice(0));
                            launch_affine(ctx, ctx.stream());
                            AISP_CHECK_LAUNCH();
                          })).tag("check:undeclared-device"));

}  // namespace aisp::cheats_gpu

namespace aisp::cheats_gpu {
namespace {

__global__ void first_element_kernel(const float* x, float* y) { y[0] = 2.0f * x[0] + 1.0f; }

void first_element_only(run_context& ctx) {
  first_element_kernel<<<1, 1, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("y"));
  AISP_CHECK_LAUNCH();
}

// The honest baseline streams all of x, as the declaration says, through a scratch copy (so the
// loads are used), and writes y[0]: ~256 MiB of traffic at 2^25, ~90 us, within physics and
// above the timer-resolution floor (T4), with the device busy (L1).
__global__ void stream_then_first_kernel(const float* __restrict__ x, float* __restrict__ copy,
                                         std::int64_t n, float* y) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) copy[i] = x[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) y[0] = 2.0f * x[0] + 1.0f;
}

void stream_then_first(run_context& ctx) {
  stream_then_first_kernel<<<4 * 132, 512, 0, ctx.stream()>>>(ctx.as<const float>("x"), ctx.as<float>("copy"),
                                                              ctx.num_elements("x"), ctx.as<float>("y"));
  AISP_CHECK_LAUNCH();
}

// The physics gate (V3) on the device: declares streaming 128 MiB of x; the cheat reads x[0].
pair beyond_physics_pair() {
  const auto count = [](const workload& w) { return w.get("n"); };
  return pair("cheats_gpu:v3_beyond_physics")
      .summary("planted cheat V3: claims to stream 128 MiB of x; its kernel reads x[0]")
      .tag("cheat:V3")
      .benchmark_size({{"n", std::int64_t{1} << 25}})
      .validation_size({{"n", 1}})
      .validation_size({{"n", 1000}})
      .held_out_size({{"n", 1003}})
      .input("x", dtype::f32, count)
      .output("y", dtype::f32, [](const workload&) { return std::int64_t{1}; })
      .scratch("copy", dtype::f32, count)
      .work([](const workload& w) { return work_amount{4.0 * static_cast<double>(w.get("n")) + 4.0, 2.0}; })
      .reference([](reference_io& io) { io.output("y")[0] = 2.0 * io.input("x")[0] + 1.0; })
      .add_variant("baseline", "streams x into a scratch copy, then y = 2 x[0] + 1", stream_then_first)
      .add_variant("optimized", "the same; the declaration claims all of x", first_element_only);
}

}  // namespace

AISP_REGISTER(beyond_physics_pair());

}  // namespace aisp::cheats_gpu
