// Small host-side pieces that several pair files declare alike: the fp64 reference and the
// declared work of a matmul, a variant that owns setup/teardown state, and the memcpy peer of a
// copy. Header-only and host-only (no device code), so a pair file includes it like the other
// aisp/ headers and a unit test compiles it without a GPU.
//
// A pair's reference may come from here: it is fp64 host code shared between pairs, never with
// the variants it checks, which keep their own kernels and their own order of summation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "aisp/check.hpp"
#include "aisp/pair.hpp"

namespace aisp::kit {

// The fp64 reference of C (m, n) = A (m, k) B (k, n), all row-major, for a pair whose workload
// has the parameters "m", "n" and "k", whose inputs are "a" (m, k) and "b" (k, n) and whose
// output is "c" (m, n). c[i][j] is the sum of a[i][p] b[p][j] over p = 0, 1, ..., k - 1, in that
// order, starting from 0. The loops run i-p-j, so the inner loop streams rows of b and c.
// Usage: `.reference(aisp::kit::matmul_reference)`.
inline void matmul_reference(reference_io& io) {
  const auto m = static_cast<std::size_t>(io.param("m"));
  const auto n = static_cast<std::size_t>(io.param("n"));
  const auto k = static_cast<std::size_t>(io.param("k"));
  const std::span<const double> a = io.input("a");  // (m, k)
  const std::span<const double> b = io.input("b");  // (k, n)
  const std::span<double> c = io.output("c");       // (m, n)
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      c[i * n + j] = 0.0;
    }
    for (std::size_t p = 0; p < k; ++p) {
      const double a_ip = a[i * k + p];
      for (std::size_t j = 0; j < n; ++j) {
        c[i * n + j] += a_ip * b[p * n + j];
      }
    }
  }
}

// The declared work of that matmul (parameters "m", "n", "k"): A, B and C each moved through
// memory once at `element_bytes` per element, and 2 m n k FLOPs (a multiply and an add per term).
// Usage: `.work(aisp::kit::matmul_work(sizeof(float)))`.
[[nodiscard]] inline work_fn matmul_work(std::size_t element_bytes) {
  return [bytes_per_element = static_cast<double>(element_bytes)](const workload& w) {
    const auto m = static_cast<double>(w.get("m"));
    const auto n = static_cast<double>(w.get("n"));
    const auto k = static_cast<double>(w.get("k"));
    return work_amount{.bytes = bytes_per_element * (m * k + k * n + m * n),
                       .flops = 2.0 * m * n * k};
  };
}

// Multi-GPU pairs (Note [ranks]): the reference sees every rank's buffer, rank-major.
// out (rank-major, `ranks` blocks of n) = the elementwise sum of every rank's block of in.
inline void all_reduce_reference(reference_io& io, const char* in, const char* out) {
  const auto x = io.input(in);
  const auto y = io.output(out);
  const std::size_t world = static_cast<std::size_t>(io.world_size());
  const std::size_t n = x.size() / world;
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::size_t q = 0; q < world; ++q) sum += x[q * n + i];
    for (std::size_t r = 0; r < world; ++r) y[r * n + i] = sum;
  }
}

// out block r (n / world elements) = the sum over ranks of their slice r of in.
inline void reduce_scatter_reference(reference_io& io, const char* in, const char* out) {
  const auto x = io.input(in);
  const auto y = io.output(out);
  const std::size_t world = static_cast<std::size_t>(io.world_size());
  const std::size_t n = x.size() / world;
  const std::size_t shard = n / world;
  for (std::size_t r = 0; r < world; ++r) {
    for (std::size_t i = 0; i < shard; ++i) {
      double sum = 0;
      for (std::size_t q = 0; q < world; ++q) sum += x[q * n + r * shard + i];
      y[r * shard + i] = sum;
    }
  }
}

// A variant whose run() uses state that setup() makes and teardown() frees (streams, events,
// pinned or managed buffers, a changed device limit); every other field keeps its default.
// Usage: `.add_variant(aisp::kit::with_state("optimized", "what changed", run, setup, teardown))`.
[[nodiscard]] inline variant with_state(std::string name, std::string summary, stage_fn run,
                                        stage_fn setup, stage_fn teardown) {
  variant v;
  v.name = std::move(name);
  v.summary = std::move(summary);
  v.run = std::move(run);
  v.setup = std::move(setup);
  v.teardown = std::move(teardown);
  return v;
}

// The library peer of a pair whose job is exactly a device-to-device copy of `input` into
// `output` (same dtype, element count and layout): one cudaMemcpyAsync on the harness's stream,
// the CUDA driver's own copy. Its bytes are in the W3 counters like a kernel's: on H100 a timed
// call that was one 64 MiB DtoD cudaMemcpyAsync counted 100% of its 128 MiB read + written
// (cheats_gpu:t5_device_first_call_replayed, docs/results/raw/issue16-h100-gpu-cheats-3.json.gz).
// Usage: `.add_variant(aisp::kit::memcpy_peer("input", "output"))`.
[[nodiscard]] inline variant memcpy_peer(std::string input, std::string output) {
  variant peer;
  peer.name = "peer_memcpy";
  peer.summary = "cudaMemcpyAsync device to device on the harness stream: the CUDA driver's copy";
  peer.run = [input = std::move(input), output = std::move(output)](run_context& ctx) {
    const std::int64_t elements = ctx.num_elements(input);
    const dtype type = ctx.buffer_type(input);
    AISP_EXPECTS(ctx.num_elements(output) == elements && ctx.buffer_type(output) == type,
                 "memcpy_peer: " + input + " and " + output +
                     " must have the same dtype and element count");
    const auto bytes = static_cast<std::size_t>(elements) * dtype_size(type);
    AISP_CUDA_CHECK(cudaMemcpyAsync(ctx.buffer(output), ctx.buffer(input), bytes,
                                    cudaMemcpyDeviceToDevice, ctx.stream()));
  };
  peer.library = "CUDA runtime";
  return peer;
}

}  // namespace aisp::kit
