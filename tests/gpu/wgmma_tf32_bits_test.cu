// A probe for labs/decode's next matvec (docs/proposals/decode-multirow-matvec.md, design 2): does
// wgmma's tf32 m64nNk8, with A from registers and B from shared memory, give each output the bits
// mma.sync's m16n8k8 gives it for the same operands and accumulator? The decode matvec's rows keep
// one row's bits at every batch (Note [batch-invariant rows]), so a wgmma path is possible only if
// it does. Both instructions are first checked against an fp64 product (the operand layouts are
// right), then compared bit for bit over chains of k8 steps like a matvec's: the test prints the
// count of outputs that differ, the finding. It fails only where a product is wrong.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "../../labs/decode/decode_matvec_wgmma.cuh"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/hopper_ptx.cuh"
#include "aisp/wgmma_shapes.cuh"
#include "gpu_guard.hpp"

namespace {

constexpr int wg_rows = 64;    // wgmma's m
constexpr int k_step = 8;      // tf32's k an instruction
constexpr int max_steps = 4;   // a chunk's four k pairs: the chain a matvec split adds
constexpr int trials = 512;    // blocks, each its own operands

// One warpgroup a trial: a (64 x 8 steps) and b (8 steps x N) tf32 bits, c (64 x N) the
// accumulator; d_mma and d_wgmma (64 x N) the two instructions' sums over the steps.
template <int N>
__global__ void wgmma_against_mma_sync(const std::uint32_t* a, const std::uint32_t* b, const float* c, float* d_mma, float* d_wgmma,
                                       int steps, int leading_bytes, int stride_bytes) {
  __shared__ __align__(256) std::uint32_t b_tiles[max_steps][N * k_step];
  const int trial = static_cast<int>(blockIdx.x);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int k_all = k_step * steps;
  const std::uint32_t* a_trial = a + static_cast<std::int64_t>(trial) * wg_rows * k_all;
  const std::uint32_t* b_trial = b + static_cast<std::int64_t>(trial) * k_all * N;
  const float* c_trial = c + static_cast<std::int64_t>(trial) * wg_rows * N;
  for (int i = static_cast<int>(threadIdx.x); i < steps * N * k_step; i += blockDim.x) {
    const int s = i / (N * k_step);
    const int n = i % (N * k_step) / k_step;
    const int k = i % k_step;
    b_tiles[s][aisp::decode::wgmma_b_word(0, n, k)] = b_trial[(s * k_step + k) * N + n];  // the matvec's layout of B
  }
  std::uint32_t frag[max_steps][4] = {};
  const int top = 16 * warp + g;
  for (int s = 0; s < steps; ++s) {
    frag[s][0] = a_trial[top * k_all + s * k_step + t];
    frag[s][1] = a_trial[(top + 8) * k_all + s * k_step + t];
    frag[s][2] = a_trial[top * k_all + s * k_step + t + 4];
    frag[s][3] = a_trial[(top + 8) * k_all + s * k_step + t + 4];
  }
  // Accumulator i of a column block j: row top + 8 ((i / 2) % 2), column 8 j + 2 t + i % 2.
  const auto at = [&](int j, int i) { return (top + 8 * ((i / 2) % 2)) * N + 8 * j + 2 * t + i % 2; };
  float* mma_out = d_mma + static_cast<std::int64_t>(trial) * wg_rows * N;
  for (int j = 0; j < N / 8; ++j) {
    float acc[4];
    for (int i = 0; i < 4; ++i) acc[i] = c_trial[at(j, i)];
    for (int s = 0; s < steps; ++s) {
      const std::uint32_t b_frag[2] = {b_trial[(s * k_step + t) * N + 8 * j + g], b_trial[(s * k_step + t + 4) * N + 8 * j + g]};
      aisp::decode::mma_tf32_1688(acc, frag[s], b_frag);  // the matvec's own instruction
    }
    for (int i = 0; i < 4; ++i) mma_out[at(j, i)] = acc[i];
  }
#if AISP_HOPPER_DEVICE
  aisp::hopper::fence_proxy_async_shared();
  __syncthreads();
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) d[i] = c_trial[at(i / 4, i % 4)];
  aisp::hopper::wgmma_fence();
  for (int s = 0; s < max_steps; ++s) {
    if (s >= steps) break;  // the same for the warpgroup
    aisp::hopper::wgmma_rs_tf32_m64k8<N>(d, frag[s], aisp::hopper::no_swizzle_kmajor_desc(aisp::hopper::smem_u32(b_tiles[s]), leading_bytes, stride_bytes));
  }
  aisp::hopper::wgmma_commit();
  aisp::hopper::wgmma_wait<0>();
  aisp::hopper::fence_accumulators(d);
  float* wgmma_out = d_wgmma + static_cast<std::int64_t>(trial) * wg_rows * N;
  for (int i = 0; i < N / 2; ++i) wgmma_out[at(i / 4, i % 4)] = d[i];
#else
  (void)d_wgmma;
  (void)leading_bytes;
  (void)stride_bytes;
#endif
}

// Operands like a decode matvec's: bf16 weights (exact in tf32) as A; x's hi and lo tf32 pieces
// as B (every other column a lo piece, 2^-11 or so of a hi one); a random accumulator.
struct operands {
  std::vector<std::uint32_t> a, b;
  std::vector<float> c;
};

std::uint32_t bits_of(float v) { return std::bit_cast<std::uint32_t>(v); }
float float_of(std::uint32_t u) { return std::bit_cast<float>(u); }

operands draw_operands(int n, int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const int k_all = k_step * steps;
  operands o;
  o.a.resize(static_cast<std::size_t>(trials) * wg_rows * k_all);
  o.b.resize(static_cast<std::size_t>(trials) * k_all * n);
  o.c.resize(static_cast<std::size_t>(trials) * wg_rows * n);
  for (auto& w : o.a) w = bits_of(0.05f * unit(rng)) & 0xffff0000u;  // a bf16 weight
  for (std::size_t i = 0; i < o.b.size(); ++i) {
    const float x = unit(rng) * 4.0f;
    const std::uint32_t hi = bits_of(x) & 0xffffe000u;
    const std::uint32_t lo = bits_of(x - float_of(hi)) & 0xffffe000u;
    o.b[i] = i % 2 == 0 ? hi : lo;
  }
  for (auto& v : o.c) v = unit(rng);
  return o;
}

struct probe_result {
  std::vector<float> mma, wgmma;
};

template <int N>
probe_result run_probe(const operands& o, int steps, int leading_bytes, int stride_bytes) {
  aisp::device_scratch a(o.a.size() * 4), b(o.b.size() * 4), c(o.c.size() * 4), d_mma(o.c.size() * 4), d_wgmma(o.c.size() * 4);
  AISP_CUDA_CHECK(cudaMemcpy(a.data(), o.a.data(), o.a.size() * 4, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(b.data(), o.b.data(), o.b.size() * 4, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemcpy(c.data(), o.c.data(), o.c.size() * 4, cudaMemcpyHostToDevice));
  AISP_CUDA_CHECK(cudaMemset(d_wgmma.data(), 0xff, o.c.size() * 4));
  wgmma_against_mma_sync<N><<<trials, 128>>>(static_cast<const std::uint32_t*>(a.data()), static_cast<const std::uint32_t*>(b.data()),
                                             static_cast<const float*>(c.data()), static_cast<float*>(d_mma.data()),
                                             static_cast<float*>(d_wgmma.data()), steps, leading_bytes, stride_bytes);
  AISP_CHECK_LAUNCH();
  AISP_CUDA_CHECK(cudaDeviceSynchronize());
  probe_result r{std::vector<float>(o.c.size()), std::vector<float>(o.c.size())};
  AISP_CUDA_CHECK(cudaMemcpy(r.mma.data(), d_mma.data(), o.c.size() * 4, cudaMemcpyDeviceToHost));
  AISP_CUDA_CHECK(cudaMemcpy(r.wgmma.data(), d_wgmma.data(), o.c.size() * 4, cudaMemcpyDeviceToHost));
  return r;
}

// How many outputs are off the fp64 product by more than tf32 products summed in fp32 allow.
std::size_t wrong_sums(const operands& o, int n, int steps, const std::vector<float>& d) {
  const int k_all = k_step * steps;
  std::size_t wrong = 0;
  for (int trial = 0; trial < trials; ++trial) {
    for (int r = 0; r < wg_rows; ++r) {
      for (int col = 0; col < n; ++col) {
        double sum = o.c[(static_cast<std::size_t>(trial) * wg_rows + r) * n + col];
        double magnitude = std::fabs(sum);
        for (int k = 0; k < k_all; ++k) {
          const double term = static_cast<double>(float_of(o.a[(static_cast<std::size_t>(trial) * wg_rows + r) * k_all + k])) *
                              float_of(o.b[(static_cast<std::size_t>(trial) * k_all + k) * n + col]);
          sum += term;
          magnitude += std::fabs(term);
        }
        const double got = d[(static_cast<std::size_t>(trial) * wg_rows + r) * n + col];
        if (!(std::fabs(got - sum) <= 1e-5 * magnitude + 1e-30)) ++wrong;
      }
    }
  }
  return wrong;
}

std::size_t differing_bits(const std::vector<float>& x, const std::vector<float>& y) {
  std::size_t differ = 0;
  for (std::size_t i = 0; i < x.size(); ++i) differ += bits_of(x[i]) != bits_of(y[i]) ? 1 : 0;
  return differ;
}

template <int N>
void probe(int steps) {
  const operands o = draw_operands(N, steps, 1234 + static_cast<std::uint64_t>(N * 10 + steps));
  // Which of the two offsets is K's is read from the result: each order is tried, and the one
  // whose sums are right is compared.
  for (const auto& [leading, stride] : {std::pair{128, 256}, std::pair{256, 128}}) {
    const probe_result r = run_probe<N>(o, steps, leading, stride);
    ASSERT_EQ(wrong_sums(o, N, steps, r.mma), 0u) << "mma.sync's layout is wrong: N " << N << ", " << steps << " steps";
    if (wrong_sums(o, N, steps, r.wgmma) != 0) continue;
    const std::size_t differ = differing_bits(r.mma, r.wgmma);
    std::cout << "wgmma tf32 m64n" << N << "k8 against mma.sync m16n8k8, " << steps << " k8 steps, " << r.mma.size()
              << " outputs: " << differ << " differ in their bits (descriptor offsets: leading " << leading << ", stride " << stride
              << " bytes)\n";
    std::ostringstream key;
    key << "n" << N << "_steps" << steps << "_differing";
    ::testing::Test::RecordProperty(key.str(), static_cast<int>(differ));
    return;
  }
  ADD_FAILURE() << "no descriptor gave wgmma's right sums: N " << N << ", " << steps << " steps";
}

TEST(wgmma_tf32_bits, both_instructions_sum_right_and_the_bits_are_compared) {
  AISP_REQUIRE_GPU();
  int major = 0;
  AISP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major != 9) GTEST_SKIP() << "wgmma is sm_90a's; this GPU is sm_" << major << "x";
  for (int steps : {1, 4}) {
    probe<8>(steps);
    probe<16>(steps);
    probe<32>(steps);  // labs/decode's wgmma matvec: 16 rows' hi pieces, then their lo pieces
  }
}

}  // namespace
