#include "hw/tensor_probe.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "aisp/check.hpp"
#include "support/seeded_fill.hpp"

namespace aisp {

std::string_view tensor_probe_name(tensor_precision precision) {
  switch (precision) {
    case tensor_precision::bf16: return "bf16_tensor";
    case tensor_precision::fp16: return "fp16_tensor";
    case tensor_precision::tf32: return "tf32_tensor";
    case tensor_precision::fp8_e4m3: return "fp8_tensor";
  }
  return "unknown_tensor";
}

double gemm_flops(int m, int n, int k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

std::string gemm_size_label(int m, int n, int k) {
  if (m == n && n == k) return fmt::format("{}^3", m);
  return fmt::format("{} x {} x {}", m, n, k);
}

std::size_t tensor_input_element_bytes(tensor_precision precision) {
  switch (precision) {
    case tensor_precision::bf16:
    case tensor_precision::fp16: return 2;
    case tensor_precision::tf32: return 4;
    case tensor_precision::fp8_e4m3: return 1;
  }
  return 0;
}

std::size_t tensor_output_element_bytes(tensor_precision precision) {
  return precision == tensor_precision::tf32 ? 4 : 2;
}

bool tensor_uses_tn_layout(tensor_precision precision) { return precision == tensor_precision::fp8_e4m3; }

std::vector<unsigned char> random_operand_bytes(tensor_precision precision, std::uint64_t stream_id,
                                                std::size_t count) {
  std::vector<unsigned char> bytes(count * tensor_input_element_bytes(precision));
  switch (precision) {
    case tensor_precision::bf16:
      fill_seeded(dtype::bf16, init_distribution::uniform_signed, stream_id, bytes.data(), count);
      break;
    case tensor_precision::fp16:
      fill_seeded(dtype::f16, init_distribution::uniform_signed, stream_id, bytes.data(), count);
      break;
    case tensor_precision::tf32:  // fp32 storage; the tensor cores read 10 mantissa bits of it
      fill_seeded(dtype::f32, init_distribution::uniform_signed, stream_id, bytes.data(), count);
      break;
    case tensor_precision::fp8_e4m3:  // the same fp32 draws, rounded to e4m3
      fill_seeded(dtype::e4m3, init_distribution::uniform_signed, stream_id, bytes.data(), count);
      break;
  }
  return bytes;
}

namespace {

constexpr std::size_t workspace_bytes = std::size_t{64} << 20;  // split-K and stream-K scratch
constexpr int warmup_calls = 3;
constexpr int candidate_algorithms = 8;   // the heuristic's top ones, each timed (choose_fastest)
constexpr int candidate_timed_calls = 3;

// What cuBLASLt is asked for, per precision (cuBLASLt matmul type table).
struct gemm_types {
  cudaDataType_t input;
  cudaDataType_t output;  // C and D
  cublasComputeType_t compute;
  const char* description;
};

gemm_types gemm_types_of(tensor_precision precision) {
  switch (precision) {
    case tensor_precision::bf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, "bf16 in, fp32 accumulate, bf16 out"};
    case tensor_precision::fp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, "fp16 in, fp32 accumulate, fp16 out"};
    case tensor_precision::tf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "fp32 in (tf32 math), fp32 accumulate, fp32 out"};
    case tensor_precision::fp8_e4m3:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
              "e4m3 in, default unit scales, fp32 accumulate, bf16 out"};
  }
  throw std::logic_error("unknown tensor_precision");
}

// cuBLASLt's fp8 GEMMs accept only some output arrangements, and which ones has moved between
// versions; the probe tries these in order and names the one that ran (on the H100 with cuBLASLt
// 13.1, the first: TN, bf16 D, no C, no scale pointers).
struct fp8_config {
  cudaDataType_t d_type;
  bool separate_c;   // a C buffer of its own (not aliased, not null)
  bool fast_accum;
  const char* label;
};
constexpr fp8_config fp8_configs[] = {
    {CUDA_R_16BF, false, false, "bf16 D, no C"},
    {CUDA_R_16BF, true, false, "bf16 C and D"},
    {CUDA_R_16BF, true, true, "bf16 C and D, fast accumulation"},
    {CUDA_R_32F, true, false, "fp32 C and D"},
    {CUDA_R_8F_E4M3, true, false, "bf16 C, e4m3 D, unit D scale"},
};

std::string method_of(tensor_precision precision) {
  return fmt::format("cuBLASLt matmul {}, {} layout, fastest of the heuristic's top 8 algorithms, random [-1,1] inputs, cudaEvent per call",
                     gemm_types_of(precision).description, tensor_uses_tn_layout(precision) ? "TN" : "NN");
}

// A failed cuBLASLt call; caught at the edge of measure_tensor_peak, like cuda_error.
void check_cublas_lt(cublasStatus_t status, const char* expression) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(fmt::format("{} ({}): {}", cublasLtGetStatusName(status),
                                         cublasLtGetStatusString(status), expression));
  }
}
#define AISP_CUBLASLT_CHECK(expr) check_cublas_lt((expr), #expr)

// Owners of CUDA and cuBLASLt handles: released on every path, the error paths included. A
// release's own status is dropped: it runs while unwinding, when there is no one left to tell.
template <auto Release>
struct release_with {
  template <class T>
  void operator()(T* handle) const {
    static_cast<void>(Release(handle));
  }
};
template <class Handle, auto Release>
using owned = std::unique_ptr<std::remove_pointer_t<Handle>, release_with<Release>>;

using device_memory = owned<void*, cudaFree>;
using stream_owner = owned<cudaStream_t, cudaStreamDestroy>;
using event_owner = owned<cudaEvent_t, cudaEventDestroy>;
using lt_handle_owner = owned<cublasLtHandle_t, cublasLtDestroy>;
using matmul_desc_owner = owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using layout_owner = owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using preference_owner = owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

device_memory allocate(std::size_t bytes) {
  void* raw = nullptr;
  AISP_CUDA_CHECK(cudaMalloc(&raw, bytes));
  return device_memory(raw);
}

device_memory upload(const void* host, std::size_t bytes) {
  auto memory = allocate(bytes);
  AISP_CUDA_CHECK(cudaMemcpy(memory.get(), host, bytes, cudaMemcpyHostToDevice));
  return memory;
}

layout_owner column_major_layout(cudaDataType_t type, int rows, int cols) {
  cublasLtMatrixLayout_t raw = nullptr;
  AISP_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&raw, type, static_cast<std::uint64_t>(rows),
                                                 static_cast<std::uint64_t>(cols), rows));
  return layout_owner(raw);
}

template <class T>
void set_desc_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  AISP_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

// Everything one timed call touches. cuBLASLt is column-major: D (m x n, ld m) = op(A) * B with
// B stored (k x n, ld k) and A stored (m x k, ld m) for "NN" or (k x m, ld k) for "TN".
struct gemm_setup {
  device_memory a, b, d, workspace, unit_scales;
  lt_handle_owner handle;
  matmul_desc_owner desc;
  layout_owner a_layout, b_layout, d_layout;
  cublasLtMatmulAlgo_t algo{};
  std::vector<cublasLtMatmulAlgo_t> candidates;  // the heuristic's top ones, best guess first
  bool fp8 = false;
  device_memory c;           // fp8 configs with a C of their own
  layout_owner c_layout;
};

gemm_setup prepare_gemm(tensor_precision precision, int m, int n, int k, std::uint64_t seed, const fp8_config* fp8) {
  gemm_types types = gemm_types_of(precision);
  if (fp8 != nullptr) types.output = fp8->d_type;
  const bool tn = tensor_uses_tn_layout(precision);
  const auto mu = static_cast<std::size_t>(m), nu = static_cast<std::size_t>(n), ku = static_cast<std::size_t>(k);
  gemm_setup g;
  g.fp8 = precision == tensor_precision::fp8_e4m3;
  // Host-generated random inputs (a constant input lets the tensor cores idle on zeros and
  // draws less power than real data), uploaded once.
  const auto a_host = random_operand_bytes(precision, buffer_stream_id(seed, "A"), mu * ku);
  g.a = upload(a_host.data(), a_host.size());
  const auto b_host = random_operand_bytes(precision, buffer_stream_id(seed, "B"), ku * nu);
  g.b = upload(b_host.data(), b_host.size());
  const std::size_t d_bytes = fp8 == nullptr ? tensor_output_element_bytes(precision)
                              : fp8->d_type == CUDA_R_32F ? 4 : fp8->d_type == CUDA_R_8F_E4M3 ? 1 : 2;
  g.d = allocate(mu * nu * d_bytes);
  if (fp8 != nullptr && fp8->separate_c) g.c = allocate(mu * nu * (fp8->d_type == CUDA_R_32F ? 4 : 2));
  g.workspace = allocate(workspace_bytes);
  const std::array<float, 3> unit_scales{1.0f, 1.0f, 1.0f};  // fp8 per-tensor scales of A, B and D
  g.unit_scales = upload(unit_scales.data(), sizeof(unit_scales));
  // A pageable cudaMemcpy may return before its DMA lands; the timed stream does not wait on the
  // legacy stream, so wait here.
  AISP_CUDA_CHECK(cudaDeviceSynchronize());

  cublasLtHandle_t raw_handle = nullptr;
  AISP_CUBLASLT_CHECK(cublasLtCreate(&raw_handle));
  g.handle = lt_handle_owner(raw_handle);
  cublasLtMatmulDesc_t raw_desc = nullptr;
  AISP_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&raw_desc, types.compute, CUDA_R_32F));
  g.desc = matmul_desc_owner(raw_desc);
  set_desc_attribute(g.desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, tn ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_desc_attribute(g.desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  if (precision == tensor_precision::fp8_e4m3) {
    // No scale pointers: the scales default to 1. cuBLASLt 13.1 on the H100 refuses the matmul
    // (NOT_SUPPORTED) once unit A/B scale pointers are set, in every layout and output type.
    const auto* scale_d = static_cast<const float*>(g.unit_scales.get()) + 2;
    if (fp8 != nullptr && fp8->d_type == CUDA_R_8F_E4M3) set_desc_attribute(g.desc.get(), CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, scale_d);
    if (fp8 != nullptr && fp8->fast_accum) set_desc_attribute(g.desc.get(), CUBLASLT_MATMUL_DESC_FAST_ACCUM, std::int8_t{1});
  }
  g.a_layout = tn ? column_major_layout(types.input, k, m) : column_major_layout(types.input, m, k);
  g.b_layout = column_major_layout(types.input, k, n);
  g.d_layout = column_major_layout(types.output, m, n);
  // C: D's own layout, except an e4m3 D, whose C is bf16 (as in NVIDIA's fp8 sample).
  g.c_layout = column_major_layout(types.output == CUDA_R_8F_E4M3 ? CUDA_R_16BF : types.output, m, n);

  cublasLtMatmulPreference_t raw_preference = nullptr;
  AISP_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&raw_preference));
  const preference_owner preference(raw_preference);
  AISP_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace_bytes, sizeof(workspace_bytes)));
  std::array<cublasLtMatmulHeuristicResult_t, candidate_algorithms> heuristics{};
  int returned = 0;
  AISP_CUBLASLT_CHECK(cublasLtMatmulAlgoGetHeuristic(g.handle.get(), g.desc.get(), g.a_layout.get(), g.b_layout.get(),
                                                     g.c_layout.get(), g.d_layout.get(), preference.get(),
                                                     candidate_algorithms, heuristics.data(), &returned));
  for (int i = 0; i < returned; ++i) {
    if (heuristics[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS) g.candidates.push_back(heuristics[static_cast<std::size_t>(i)].algo);
  }
  if (g.candidates.empty()) {
    throw std::runtime_error(fmt::format("cuBLASLt has no algorithm for {} {} (sizes must be multiples of 16 for fp8)",
                                         tensor_probe_name(precision), gemm_size_label(m, n, k)));
  }
  g.algo = g.candidates.front();
  return g;
}

void enqueue_gemm(const gemm_setup& g, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;  // beta = 0: C is never read
  // C aliased to D for the 16-bit and tf32 GEMMs; fp8 uses its config's C (own or null).
  const void* c_pointer = g.fp8 ? g.c.get() : g.d.get();
  AISP_CUBLASLT_CHECK(cublasLtMatmul(g.handle.get(), g.desc.get(), &alpha, g.a.get(), g.a_layout.get(), g.b.get(),
                                     g.b_layout.get(), &beta, c_pointer, g.c_layout.get(), g.d.get(),
                                     g.d_layout.get(), &g.algo, g.workspace.get(), workspace_bytes, stream));
}

event_owner create_event() {
  cudaEvent_t raw = nullptr;
  AISP_CUDA_CHECK(cudaEventCreate(&raw));
  return event_owner(raw);
}

// The ceiling is the library at its best, as the peers it judges are (issue 17): each candidate
// runs twice, then its fastest of a few timed calls counts; one that cuBLASLt refuses is skipped.
void choose_fastest(gemm_setup& g, cudaStream_t stream) {
  const event_owner start = create_event();
  const event_owner stop = create_event();
  float best_ms = 0;
  cublasLtMatmulAlgo_t best = g.candidates.front();
  for (const auto& candidate : g.candidates) {
    g.algo = candidate;
    try {
      for (int call = 0; call < 2; ++call) enqueue_gemm(g, stream);
      float fastest_ms = 0;
      for (int call = 0; call < candidate_timed_calls; ++call) {
        AISP_CUDA_CHECK(cudaEventRecord(start.get(), stream));
        enqueue_gemm(g, stream);
        AISP_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
        AISP_CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0;
        AISP_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        if (call == 0 || ms < fastest_ms) fastest_ms = ms;
      }
      if (best_ms == 0 || fastest_ms < best_ms) {
        best_ms = fastest_ms;
        best = candidate;
      }
    } catch (const std::runtime_error&) {  // refused by cuBLASLt: not a candidate after all
      AISP_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }
  g.algo = best;
}

// FLOP/s of each timed call. The calls run back to back, each ending where the next begins
// (event i closes call i and opens call i+1), so the GPU never idles on the host between them.
std::vector<double> time_gemms(tensor_precision precision, int m, int n, int k, int repetitions, std::uint64_t seed,
                               const fp8_config* fp8) {
  gemm_setup g = prepare_gemm(precision, m, n, k, seed, fp8);
  cudaStream_t raw_stream = nullptr;
  AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&raw_stream, cudaStreamNonBlocking));
  const stream_owner stream(raw_stream);

  choose_fastest(g, stream.get());
  for (int call = 0; call < warmup_calls; ++call) enqueue_gemm(g, stream.get());
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  std::vector<event_owner> marks;
  for (int mark = 0; mark <= repetitions; ++mark) marks.push_back(create_event());
  AISP_CUDA_CHECK(cudaEventRecord(marks[0].get(), stream.get()));
  for (std::size_t call = 0; call < static_cast<std::size_t>(repetitions); ++call) {
    enqueue_gemm(g, stream.get());
    AISP_CUDA_CHECK(cudaEventRecord(marks[call + 1].get(), stream.get()));
  }
  AISP_CUDA_CHECK(cudaStreamSynchronize(stream.get()));

  const double flops = gemm_flops(m, n, k);
  std::vector<double> rates;
  for (std::size_t call = 0; call < static_cast<std::size_t>(repetitions); ++call) {
    float elapsed_ms = 0;
    AISP_CUDA_CHECK(cudaEventElapsedTime(&elapsed_ms, marks[call].get(), marks[call + 1].get()));
    if (!(elapsed_ms > 0)) throw std::runtime_error(fmt::format("call {} timed at {} ms", call, elapsed_ms));
    rates.push_back(flops / (static_cast<double>(elapsed_ms) * 1e-3));
  }
  return rates;
}

std::string first_line(std::string text) {
  if (const auto end = text.find('\n'); end != std::string::npos) text.resize(end);
  return text;
}

}  // namespace

probe_result measure_tensor_peak(tensor_precision precision, int m, int n, int k, int repetitions, std::uint64_t seed) {
  probe_result result;
  try {
    result.name = tensor_probe_name(precision);
    result.group = "tensor";
    result.unit = "FLOP/s";
    result.method = method_of(precision);
    result.size = gemm_size_label(m, n, k);
    if (m < 1 || n < 1 || k < 1 || repetitions < 1) {
      result.error = fmt::format("invalid request: m={} n={} k={} repetitions={}", m, n, k, repetitions);
      return result;
    }
    if (precision != tensor_precision::fp8_e4m3) {
      summarize_into(result, time_gemms(precision, m, n, k, repetitions, seed, nullptr));
      return result;
    }
    std::string refused;
    for (const auto& config : fp8_configs) {
      try {
        summarize_into(result, time_gemms(precision, m, n, k, repetitions, seed, &config));
        result.method += std::string(" (") + config.label + ")";
        return result;
      } catch (const std::exception& e) {
        refused += std::string(refused.empty() ? "" : "; ") + config.label + ": " + first_line(e.what()).substr(0, 60);
      }
    }
    result.error = "every fp8 arrangement refused: " + refused;
  } catch (const std::exception& e) {
    result.error = first_line(e.what());
  } catch (...) {
    result.error = "unknown exception";
  }
  return result;
}

}  // namespace aisp

#undef AISP_CUBLASLT_CHECK
