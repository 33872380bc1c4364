// allgather_gemm: sequence parallelism into a column-parallel linear layer (Megatron-SP). Rank r
// holds a shard of the tokens, X_r (T / W rows of d, bf16), and the weight W (d, f; bf16, the same
// on every rank); it ends with y_r = gather(X) W[:, r f/W : (r+1) f/W] in fp32: all T tokens
// times its own f / W output columns.
// Baseline: ncclAllGather of X (T, d), then one cuBLASLt matmul (autotuned): the link idles
// during the matmul, the tensor cores during the all-gather.
// Optimized: the all-gather in `chunks` chunks (each rank's rows cut alike) on a highest-priority
// communication stream; the matmul of a chunk's rows, one cuBLASLt matmul strided-batched over
// the W ranks' row blocks, runs as soon as its chunk arrived, while the next chunk is gathered.
// Why faster: communication and compute overlap; the time tends to the longer of the two plus
// one chunk of the other. The chunk count is part of the workload (D5), like bucketed_overlap's
// buckets, so both variants do the same job.
// Run: aisp bench run --targets ch04:allgather_gemm   (two GPUs)
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "aisp/check.hpp"
#include "aisp/cublas_check.hpp"
#include "aisp/cublaslt_plan.hpp"
#include "aisp/nccl.hpp"
#include "aisp/pair.hpp"
#include "aisp/run_context.hpp"
#include "aisp/variant_state.hpp"
#include "collective_common.cuh"

namespace aisp::ch04 {
namespace {

// Workload: T tokens (all ranks'), d model width, f output columns (f / W a rank), `chunks`.
// Napkin math at T = 16384, d = 8192, f = 4096 on H100s (~300 GB/s NCCL bus bandwidth, ~650
// TFLOP/s bf16): gather(X) is 256 MiB; the all-gather sends (W-1)/W of it: 128 MiB, ~0.45 ms on
// two GPUs, 192 MiB, ~0.65 ms on four. The matmul is 2 T d f / W: 0.55 TFLOP, ~0.85 ms on two,
// 0.27 TFLOP, ~0.42 ms on four. Serial ~1.3 ms and ~1.1 ms; overlapped in 4 chunks ~0.85 + 0.11
// and ~0.65 + 0.1 ms: ~1.35x and ~1.4x at best, less where NCCL's kernels and the matmul contend
// for SMs (Note [SM sharing] in bucketed_overlap.cu). compute / communication = f / (W-1) x
// (300 GB/s / 650 TFLOP/s): f = 4096 puts it at ~1.9 on two GPUs and ~0.6 on four.
constexpr std::size_t workspace_bytes = std::size_t{32} << 20;

struct shape {
  std::int64_t tokens = 0;
  std::int64_t rows = 0;  // a rank's: T / W
  std::int64_t d = 0;
  std::int64_t f = 0;
  std::int64_t columns = 0;  // a rank's: f / W
  std::int64_t first_column = 0;
};

shape shape_of(run_context& ctx) {
  shape s{ctx.param("tokens"), 0, ctx.param("d"), ctx.param("f"), 0, 0};
  const int world = ctx.world_size();
  AISP_EXPECTS(s.tokens % world == 0, "ch04:allgather_gemm needs tokens divisible by the world size");
  // Every operand (a rank's column block of W, a chunk's rows, each batch of a chunk's matmul)
  // starts 256-byte aligned: the alignment cuBLASLt's heuristic assumes, and the chunk plans take
  // its first algorithm untried.
  AISP_EXPECTS(s.f % (128 * world) == 0 && s.d % 128 == 0, "ch04:allgather_gemm needs f a multiple of 128 x world size, d of 128");
  s.rows = s.tokens / world;
  s.columns = s.f / world;
  s.first_column = s.columns * ctx.rank();
  return s;
}

// Chunk c of a rank's rows: the rows are cut as evenly as they go (sizes differ by at most one,
// and a chunk is empty where there are fewer rows than chunks).
struct row_range {
  std::int64_t first = 0;
  std::int64_t count = 0;
};
row_range chunk_of(std::int64_t rows, std::int64_t chunks, std::int64_t c) {
  const std::int64_t first = rows * c / chunks;
  return {first, rows * (c + 1) / chunks - first};
}

std::int64_t non_empty_chunks(std::int64_t rows, std::int64_t chunks) { return rows < chunks ? rows : chunks; }

// Note [row-major through cuBLASLt] (tensor_parallel_mlp.cu): y = X W_block is y^T = W_block^T X^T:
// cuBLASLt's A is W's column block (columns, d; ld f), B is X (d, tokens; ld d), D is y (columns,
// tokens; ld columns).
void matmul(const cublaslt_plan& plan, const __nv_bfloat16* w_block, const __nv_bfloat16* x, float* y, cudaStream_t stream) {
  const float one = 1.0f;
  const float zero = 0.0f;
  AISP_CUBLAS_CHECK(cublasLtMatmul(plan.handle, plan.desc, &one, w_block, plan.layout_a, x, plan.layout_b, &zero, y, plan.layout_c, y,
                                   plan.layout_c, &plan.algo, plan.workspace, workspace_bytes, stream));
}

// Baseline: the whole gathered X at once.
struct whole_plan {
  cublaslt_plan gemm{CUBLAS_COMPUTE_32F, CUDA_R_32F};
};

void plan_whole(run_context& ctx) {
  const shape s = shape_of(ctx);
  auto& plan = make_state<whole_plan>(ctx).gemm;
  plan.layout_a = cublaslt_plan::column_major(CUDA_R_16BF, s.columns, s.d, s.f);
  plan.layout_b = cublaslt_plan::column_major(CUDA_R_16BF, s.d, s.tokens, s.d);
  plan.layout_c = cublaslt_plan::column_major(CUDA_R_32F, s.columns, s.tokens, s.columns);
  plan.allocate_workspace(workspace_bytes);
  plan.autotune_algorithm(ctx, {ctx.as<const __nv_bfloat16>("w") + s.first_column, ctx.as<const __nv_bfloat16>("gathered"),
                                plan.workspace, workspace_bytes},
                          "the gathered matmul");
}

void gather_then_matmul(run_context& ctx) {
  const shape s = shape_of(ctx);
  auto* gathered = ctx.as<__nv_bfloat16>("gathered");
  AISP_NCCL_CHECK(nccl().all_gather(ctx.as<const __nv_bfloat16>("x"), gathered, static_cast<std::size_t>(s.rows * s.d), ncclBfloat16,
                                    nccl_comm(ctx), ctx.stream()));
  matmul(state_of<whole_plan>(ctx).gemm, ctx.as<const __nv_bfloat16>("w") + s.first_column, gathered, ctx.as<float>("y"),
         ctx.stream());
}

// Optimized. Chunk c's all-gather lands in `gathered` at W x first(c) rows, as (W, count(c), d):
// rank q's rows of the chunk, rank after rank. Their outputs are rows q T/W + first(c) of y, W
// blocks T/W rows apart: one matmul strided-batched over the ranks (A, W's block, at stride 0).
// Chunk sizes differ by at most one row, so at most two plans serve every chunk.
struct chunk_gemm {
  std::int64_t rows = 0;
  cublaslt_plan plan{CUBLAS_COMPUTE_32F, CUDA_R_32F};
};

// The communication stream (highest priority: Note [SM sharing] in bucketed_overlap.cu), one event
// per chunk gathered, one for this call's inputs, and the chunk matmuls' plans.
struct overlap_plans {
  cudaStream_t comm = nullptr;
  cudaEvent_t inputs_ready = nullptr;
  std::vector<cudaEvent_t> gathered;
  std::vector<std::unique_ptr<chunk_gemm>> gemms;
  explicit overlap_plans(std::size_t chunks) : gathered(chunks) {
    int least = 0;
    int greatest = 0;
    AISP_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    AISP_CUDA_CHECK(cudaStreamCreateWithPriority(&comm, cudaStreamNonBlocking, greatest));
    AISP_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_ready, cudaEventDisableTiming));
    for (auto& e : gathered) AISP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~overlap_plans() {  // release statuses are dropped: nobody is left to tell
    for (auto e : gathered) static_cast<void>(cudaEventDestroy(e));
    static_cast<void>(cudaEventDestroy(inputs_ready));
    static_cast<void>(cudaStreamDestroy(comm));
  }
  overlap_plans(const overlap_plans&) = delete;
  overlap_plans& operator=(const overlap_plans&) = delete;

  [[nodiscard]] const cublaslt_plan& plan_for(std::int64_t rows) const {
    for (const auto& g : gemms) {
      if (g->rows == rows) return g->plan;
    }
    throw contract_error("ch04:allgather_gemm: no plan for a chunk of " + std::to_string(rows) + " rows");
  }
};

void plan_chunks(run_context& ctx) {
  const shape s = shape_of(ctx);
  const std::int64_t chunks = ctx.param("chunks");
  AISP_EXPECTS(chunks >= 1, "ch04:allgather_gemm needs at least one chunk");
  auto& plans = make_state<overlap_plans>(ctx, static_cast<std::size_t>(chunks));
  const auto world = static_cast<std::int32_t>(ctx.world_size());
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t rows = chunk_of(s.rows, chunks, c).count;
    bool planned = rows == 0;
    for (const auto& g : plans.gemms) planned = planned || g->rows == rows;
    if (planned) continue;
    auto& gemm = *plans.gemms.emplace_back(std::make_unique<chunk_gemm>());
    gemm.rows = rows;
    gemm.plan.layout_a = cublaslt_plan::batched_column_major(CUDA_R_16BF, s.columns, s.d, s.f, world, 0);
    gemm.plan.layout_b = cublaslt_plan::batched_column_major(CUDA_R_16BF, s.d, rows, s.d, world, rows * s.d);
    gemm.plan.layout_c = cublaslt_plan::batched_column_major(CUDA_R_32F, s.columns, rows, s.columns, world, s.rows * s.columns);
    gemm.plan.allocate_workspace(workspace_bytes);
    // autotune_algorithm plans one matmul, not a batch: the heuristic's first choice here, against
    // the baseline's autotuned one (a handicap for this variant, never a help).
    gemm.plan.choose_algorithm(workspace_bytes, "a chunk's matmul of " + std::to_string(rows) + " rows a rank");
  }
  ctx.note("chunk_matmul", "cuBLASLt heuristic's first algorithm, strided-batched over the ranks (autotuning plans single matmuls)");
}

void chunked_overlap(run_context& ctx) {
  const shape s = shape_of(ctx);
  const auto& plans = state_of<overlap_plans>(ctx);
  const auto chunks = static_cast<std::int64_t>(plans.gathered.size());
  const auto world = static_cast<std::int64_t>(ctx.world_size());
  const auto* x = ctx.as<const __nv_bfloat16>("x");
  const auto* w_block = ctx.as<const __nv_bfloat16>("w") + s.first_column;
  auto* gathered = ctx.as<__nv_bfloat16>("gathered");
  float* y = ctx.as<float>("y");
  // The gathers start after this call's inputs, and after the last call's matmuls read `gathered`.
  AISP_CUDA_CHECK(cudaEventRecord(plans.inputs_ready, ctx.stream()));
  AISP_CUDA_CHECK(cudaStreamWaitEvent(plans.comm, plans.inputs_ready));
  for (std::int64_t c = 0; c < chunks; ++c) {
    const row_range r = chunk_of(s.rows, chunks, c);
    if (r.count == 0) continue;  // more chunks than rows: no collective for an empty one (D5)
    __nv_bfloat16* chunk = gathered + world * r.first * s.d;
    AISP_NCCL_CHECK(nccl().all_gather(x + r.first * s.d, chunk, static_cast<std::size_t>(r.count * s.d), ncclBfloat16, nccl_comm(ctx),
                                      plans.comm));
    const cudaEvent_t arrived = plans.gathered[static_cast<std::size_t>(c)];
    AISP_CUDA_CHECK(cudaEventRecord(arrived, plans.comm));
    // The harness's stream waits for every chunk before its matmul: every byte lands inside the
    // timed window (T1), and the last wait joins the communication stream back.
    AISP_CUDA_CHECK(cudaStreamWaitEvent(ctx.stream(), arrived));
    matmul(plans.plan_for(r.count), w_block, chunk, y + r.first * s.columns, ctx.stream());
  }
}

// fp64 truth: the ranks' x, rank-major, is gather(X) in token order; w from rank 0's copy.
void allgather_gemm_reference(reference_io& io) {
  const auto d = static_cast<std::size_t>(io.param("d"));
  const auto f = static_cast<std::size_t>(io.param("f"));
  const auto world = static_cast<std::size_t>(io.world_size());
  const auto tokens = static_cast<std::size_t>(io.param("tokens"));
  const std::size_t columns = f / world;
  const auto x = io.input("x");  // (tokens, d)
  const auto w = io.input("w");  // (d, f), the first of the W identical copies
  const auto y = io.output("y");  // W blocks of (tokens, columns)
  for (std::size_t r = 0; r < world; ++r) {
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t j = 0; j < columns; ++j) {
        double sum = 0;
        for (std::size_t k = 0; k < d; ++k) sum += x[t * d + k] * w[k * f + r * columns + j];
        y[(r * tokens + t) * columns + j] = sum;
      }
    }
  }
}

variant gemm_variant(std::string name, std::string summary, stage_fn run, stage_fn setup, stage_fn teardown,
                     std::function<std::int64_t(const workload&)> collectives) {
  variant v = nccl_variant(std::move(name), std::move(summary), std::move(run), std::move(setup), std::move(teardown));
  v.library = "cuBLAS+NCCL";
  v.math = math_unit::bf16_tensor;
  v.collectives = std::move(collectives);
  return v;
}

pair declare(int world) {
  const auto dims = [](const char* a, const char* b, std::int64_t divisor) {
    return [a, b, divisor](const workload& w) { return w.get(a) * w.get(b) / divisor; };
  };
  const auto sizes = [world](std::int64_t rows, std::int64_t d, std::int64_t columns, std::int64_t chunks) {
    return param_map{{"tokens", rows * world}, {"d", d}, {"f", columns * world}, {"chunks", chunks}};
  };
  pair p(scaled_name("ch04:allgather_gemm", world));
  p.summary("sequence-parallel all-gather of bf16 tokens + column-parallel matmul over " + std::to_string(world) +
            " GPUs: gather then matmul vs chunked overlap")
      .world_size(world)
      .moves_data_over(data_path::gpu_interconnect)
      .benchmark_size({{"tokens", 16384}, {"d", 8192}, {"f", 4096}, {"chunks", 4}})
      .validation_size(sizes(1, 128, 128, 2))  // one row a rank, two chunks: one chunk is empty
      .validation_size(sizes(7, 256, 128, 3))   // rows not a multiple of the chunks or of any tile
      .validation_size(sizes(37, 128, 256, 4))
      .validation_size(sizes(130, 384, 128, 5))
      .held_out_size(sizes(19, 256, 128, 3))
      .input("x", dtype::bf16, dims("tokens", "d", world), init_distribution::uniform_unit)  // this rank's rows
      .input("w", dtype::bf16, dims("d", "f", 1), init_distribution::uniform_unit)           // y > 0: no cancellation
      .same_on_every_rank("w")
      .output("y", dtype::f32, dims("tokens", "f", world))
      .scratch("gathered", dtype::bf16, dims("tokens", "d", 1))
      .tolerance_override({.rtol = 2e-4, .atol = 1e-5,
                           .reason = "fp32 accumulation of d (up to 8192) bf16 products, exact in fp32, in cuBLASLt's order: "
                                     "tensor cores truncate while aligning each k-step's products (~2^-23 of the partial sum a "
                                     "step, Fasi et al. 2021) and split-K adds partial sums; every term is positive, so the "
                                     "relative error stays below ~(d / 16) 2^-23 = 6e-5 at d = 8192: 2e-4 leaves 3x"})
      .work([world](const workload& w) {
        const auto t = static_cast<double>(w.get("tokens"));
        const auto d = static_cast<double>(w.get("d"));
        const auto f = static_cast<double>(w.get("f"));
        return work_amount{.bytes = reduce_scatter_bus_bytes(2.0 * t * d, world), .flops = 2.0 * t * d * f};
      })
      .reference(allgather_gemm_reference);
  p.add_variant(gemm_variant("baseline", "ncclAllGather of all of X, then one cuBLASLt matmul (autotuned)", gather_then_matmul,
                             plan_whole, release_state<whole_plan>, collectives_per_call(1)))
      .add_variant(gemm_variant("optimized",
                                "the all-gather in chunks on a high-priority stream; each chunk's matmul (batched over ranks) "
                                "overlaps the next chunk's gather",
                                chunked_overlap, plan_chunks, release_state<overlap_plans>, [world](const workload& w) {
                                  return non_empty_chunks(w.get("tokens") / world, w.get("chunks"));
                                }));
  return p;
}

AISP_REGISTER(declare(world_sizes[0]));
AISP_REGISTER(declare(world_sizes[1]));

}  // namespace
}  // namespace aisp::ch04
