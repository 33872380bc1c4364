// cuDNN's fused flash attention forward, through the C backend graph API (cudnn_sdpa.hpp).
//
// Note [cuDNN SDPA graph]: the operation graph is the pattern cuDNN's runtime fusion engine
// recognizes as flash attention forward (developer guide, Graph API, "Fused Flash Attention
// fprop"), in the form cuDNN's frontend lowers its SDPA node to, for inference: the softmax
// statistics go to a virtual tensor instead of memory. b batch, h query heads, hkv KV heads,
// s queries = keys, d head dim; virtual tensors are fp32 unless noted.
//
//   uid  tensor          dims            written by
//     1  Q               (b, h, s, d)    input, bf16 row-major
//     2  K^T             (b, hkv, d, s)  input, bf16: K (b, hkv, s, d) read through swapped strides
//     3  V               (b, hkv, s, d)  input, bf16
//     4  O               (b, h, s, d)    MATMUL P V, bf16 row-major
//     5  scale           (1, 1, 1, 1)    by value (a host float): 1 / sqrt(d)
//     6  mask fill       (1, 1, 1, 1)    by value: -inf (-FLT_MAX before cuDNN 9.10); causal only
//   100  S               (b, h, s, s)    MATMUL Q K^T; a KV head serves h / hkv query heads
//   101  S * scale       (b, h, s, s)    POINTWISE MUL (S, scale)
//   102  row index       (b, h, s, s)    POINTWISE GEN_INDEX axis 2, int32        } causal only:
//   103  column index    (b, h, s, s)    POINTWISE GEN_INDEX axis 3, int32        } keep a score
//   104  keep            (b, h, s, s)    POINTWISE CMP_GE (row, column), boolean  } where its key
//   105  masked S        (b, h, s, s)    POINTWISE BINARY_SELECT (S, fill, keep)  } is not after it
//   106  m               (b, h, s, 1)    REDUCTION MAX over the keys
//   107  S - m           (b, h, s, s)    POINTWISE SUB
//   108  e               (b, h, s, s)    POINTWISE EXP
//   109  z               (b, h, s, 1)    REDUCTION ADD over the keys
//   110  log z           (b, h, s, 1)    POINTWISE LOG  } the softmax statistics: part of the
//   111  m + log z       (b, h, s, 1)    POINTWISE ADD  } pattern even when nobody reads them
//   112  P = e / z       (b, h, s, s)    POINTWISE DIV, bf16: the second matmul's A, as in the kernels
//
// The engine runs it as one kernel: S and P never reach memory, the virtual tensors only name the
// steps. Every tensor is 16-byte aligned; matmuls, pointwise steps and reductions compute in fp32
// (the comparison in boolean).
//
// Note [cuDNN autotuning]: a library peer is the library at its best (cublaslt_plan.hpp does the
// same for cuBLASLt): the heuristic (mode A) ranks engine configurations, plans are finalized in
// its order until 8 are built (a refused one is skipped), and each runs 3 untimed then 10 timed
// calls on the real q, k and v with an output the tuning allocates; the fastest call stands for a
// plan. A later plan displaces the one held only when faster by more than autotune_margin (Note
// [autotune margin] in aisp/candidate_timer.hpp, which times the plans): within it, noise would decide.
//
// Note [graph replay]: cudnnBackendExecute allocates on the host in every call (9 operator new
// calls a call on an H200, cuDNN 9.14), and run() must not allocate. So setup() captures the
// winner's launches once into a CUDA graph, as ch01:graph_chain does, and run() replays it with
// one cudaGraphLaunch: the same kernels on the same pointers (the harness re-runs setup() whenever
// it moves the buffers), the scale baked into their parameters.
#include "cudnn_sdpa.hpp"

#include <cudnn_graph.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "aisp/candidate_timer.hpp"
#include "aisp/check.hpp"
#include "aisp/device_scratch.hpp"
#include "aisp/library_loading.hpp"

namespace aisp::labs_attention {
namespace {

constexpr int warm_calls = 3;
constexpr int timed_calls = 10;
constexpr std::size_t max_plans = 8;
constexpr std::int64_t tensor_alignment_bytes = 16;

// CUDNN_ATTR_OPERATIONGRAPH_HANDLE and CUDNN_ATTR_EXECUTION_PLAN_HANDLE by value: the 9.x headers
// deprecate them (a handle is optional from cuDNN 9.8), but earlier 9.x releases require them.
constexpr auto operation_graph_handle = static_cast<cudnnBackendAttributeName_t>(800);
constexpr auto execution_plan_handle = static_cast<cudnnBackendAttributeName_t>(400);

// The tensors' unique ids, in the order of Note [cuDNN SDPA graph]'s table.
enum tensor_uid : std::int64_t { q_uid = 1, k_uid, v_uid, o_uid, scale_uid, fill_uid };
enum virtual_uid : std::int64_t {
  scores_uid = 100, scaled_uid, row_uid, column_uid, keep_uid, masked_uid, max_uid, centered_uid, exp_uid, sum_uid,
  log_sum_uid, stats_uid, probabilities_uid
};

// ---- Loading: cuDNN's entry points, resolved with dlsym; the header gives only their types ----

struct cudnn_api {
  decltype(&cudnnGetVersion) get_version = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnGetLastErrorString) last_error_string = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnBackendCreateDescriptor) create_descriptor = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) destroy_descriptor = nullptr;
  decltype(&cudnnBackendSetAttribute) set_attribute = nullptr;
  decltype(&cudnnBackendGetAttribute) get_attribute = nullptr;
  decltype(&cudnnBackendFinalize) finalize = nullptr;
  decltype(&cudnnBackendExecute) execute = nullptr;
};

void* open_cudnn() {
  std::vector<std::string> candidates;
  add_library_candidates(candidates, "libcudnn.so.9");
  const opened_library opened = open_first_library(candidates, RTLD_NOW);
  AISP_EXPECTS(opened.handle != nullptr, "cuDNN (libcudnn.so.9) not found: " + opened.first_error);
  return opened.handle;
}

template <class Function>
void resolve(void* library, const char* name, Function& entry) {
  entry = reinterpret_cast<Function>(dlsym(library, name));
  AISP_EXPECTS(entry != nullptr, fmt::format("cuDNN (libcudnn.so.9) has no {}: not a cuDNN 9 library", name));
}

cudnn_api load_cudnn() {
  void* library = open_cudnn();
  cudnn_api api;
  resolve(library, "cudnnGetVersion", api.get_version);
  resolve(library, "cudnnGetErrorString", api.error_string);
  resolve(library, "cudnnGetLastErrorString", api.last_error_string);
  resolve(library, "cudnnCreate", api.create);
  resolve(library, "cudnnDestroy", api.destroy);
  resolve(library, "cudnnSetStream", api.set_stream);
  resolve(library, "cudnnBackendCreateDescriptor", api.create_descriptor);
  resolve(library, "cudnnBackendDestroyDescriptor", api.destroy_descriptor);
  resolve(library, "cudnnBackendSetAttribute", api.set_attribute);
  resolve(library, "cudnnBackendGetAttribute", api.get_attribute);
  resolve(library, "cudnnBackendFinalize", api.finalize);
  resolve(library, "cudnnBackendExecute", api.execute);
  return api;
}

// Loaded once and kept for the process: plans and handles may outlive any one variant, and
// unloading a library that registered CUDA modules is asking for trouble. A failed load throws
// and is tried again by the next caller.
const cudnn_api& cudnn() {
  static const cudnn_api api = load_cudnn();
  return api;
}

// ---- Errors: the call, what it acted on, cuDNN's status and its last error message ----

constexpr int no_attribute = -1;

std::string failure_text(cudnnStatus_t status, std::string_view call, std::string_view subject, int attribute) {
  const cudnn_api& api = cudnn();
  std::string text = fmt::format("{}({}{}) failed: {}", call, subject,
                                 attribute == no_attribute ? std::string() : fmt::format(", attribute {}", attribute),
                                 api.error_string(status));
  std::array<char, 1024> last{};
  api.last_error_string(last.data(), last.size());
  if (last.front() != '\0') text += fmt::format(" ({})", on_one_line(last.data()));
  return text;
}

// The message is built only on failure: run() calls this on its path.
void check(cudnnStatus_t status, std::string_view call, std::string_view subject, int attribute = no_attribute) {
  AISP_EXPECTS(status == CUDNN_STATUS_SUCCESS, failure_text(status, call, subject, attribute));
}

// ---- Descriptors: RAII, with attributes typed by their C++ type ----

// The attribute type cuDNN expects for a C++ type; any other type does not compile.
template <class T>
constexpr cudnnBackendAttributeType_t attribute_type() {
  if constexpr (std::is_same_v<T, std::int64_t>) return CUDNN_TYPE_INT64;
  else if constexpr (std::is_same_v<T, bool>) return CUDNN_TYPE_BOOLEAN;
  else if constexpr (std::is_same_v<T, float>) return CUDNN_TYPE_FLOAT;
  else if constexpr (std::is_same_v<T, cudnnDataType_t>) return CUDNN_TYPE_DATA_TYPE;
  else if constexpr (std::is_same_v<T, cudnnPointwiseMode_t>) return CUDNN_TYPE_POINTWISE_MODE;
  else if constexpr (std::is_same_v<T, cudnnReduceTensorOp_t>) return CUDNN_TYPE_REDUCTION_OPERATOR_TYPE;
  else if constexpr (std::is_same_v<T, cudnnBackendHeurMode_t>) return CUDNN_TYPE_HEUR_MODE;
  else if constexpr (std::is_same_v<T, cudnnBackendKnobType_t>) return CUDNN_TYPE_KNOB_TYPE;
  else if constexpr (std::is_same_v<T, cudnnHandle_t>) return CUDNN_TYPE_HANDLE;
  else static_assert(sizeof(T) == 0, "no cuDNN attribute type for this C++ type");
}

class backend_descriptor {
 public:
  backend_descriptor() = default;
  // `what` names it in error messages: "tensor S (uid 100)".
  backend_descriptor(cudnnBackendDescriptorType_t type, std::string what) : what_(std::move(what)) {
    check(cudnn().create_descriptor(type, &raw_), "cudnnBackendCreateDescriptor", what_);
  }
  backend_descriptor(backend_descriptor&& other) noexcept
      : raw_(std::exchange(other.raw_, nullptr)), what_(std::move(other.what_)) {}
  backend_descriptor& operator=(backend_descriptor&& other) noexcept {
    std::swap(raw_, other.raw_);
    std::swap(what_, other.what_);
    return *this;
  }
  backend_descriptor(const backend_descriptor&) = delete;
  backend_descriptor& operator=(const backend_descriptor&) = delete;
  ~backend_descriptor() {  // the status is dropped: nobody is left to tell
    if (raw_ != nullptr) static_cast<void>(cudnn().destroy_descriptor(raw_));
  }

  template <class T>
  backend_descriptor& set(cudnnBackendAttributeName_t name, std::span<const T> values) {
    return set_elements(name, attribute_type<T>(), values.size(), values.data());
  }
  template <class T>
  backend_descriptor& set(cudnnBackendAttributeName_t name, const T& value) {
    return set(name, std::span<const T>(&value, 1));
  }
  // Descriptors and raw pointers are both void* in C: each has its own setter.
  backend_descriptor& set_descriptors(cudnnBackendAttributeName_t name, std::span<const cudnnBackendDescriptor_t> values) {
    return set_elements(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, values.size(), values.data());
  }
  backend_descriptor& set_descriptor(cudnnBackendAttributeName_t name, const backend_descriptor& value) {
    return set_descriptors(name, std::span<const cudnnBackendDescriptor_t>(&value.raw_, 1));
  }
  backend_descriptor& set_pointers(cudnnBackendAttributeName_t name, std::span<void* const> values) {
    return set_elements(name, CUDNN_TYPE_VOID_PTR, values.size(), values.data());
  }

  void finalize() { check(cudnn().finalize(raw_), "cudnnBackendFinalize", what_); }
  // For a descriptor cuDNN may refuse (an engine configuration it cannot build for this graph).
  [[nodiscard]] cudnnStatus_t try_finalize() { return cudnn().finalize(raw_); }

  template <class T>
  [[nodiscard]] T get(cudnnBackendAttributeName_t name) const {
    T value{};
    std::int64_t count = 0;
    check(cudnn().get_attribute(raw_, name, attribute_type<T>(), 1, &count, &value), "cudnnBackendGetAttribute", what_, name);
    return value;
  }
  // Fills `out` with descriptors made beforehand (cuDNN copies into them); returns how many it filled.
  std::size_t get_descriptors(cudnnBackendAttributeName_t name, std::span<cudnnBackendDescriptor_t> out) const {
    std::int64_t count = 0;
    check(cudnn().get_attribute(raw_, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(out.size()), &count,
                                out.data()),
          "cudnnBackendGetAttribute", what_, name);
    return static_cast<std::size_t>(std::clamp<std::int64_t>(count, 0, static_cast<std::int64_t>(out.size())));
  }
  // How many elements the attribute holds.
  [[nodiscard]] std::size_t count_of(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type) const {
    std::int64_t count = 0;
    check(cudnn().get_attribute(raw_, name, type, 0, &count, nullptr), "cudnnBackendGetAttribute", what_, name);
    return static_cast<std::size_t>(std::max<std::int64_t>(count, 0));
  }

  [[nodiscard]] cudnnBackendDescriptor_t get() const { return raw_; }
  [[nodiscard]] const std::string& what() const { return what_; }

 private:
  backend_descriptor& set_elements(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::size_t count,
                                   const void* elements) {
    check(cudnn().set_attribute(raw_, name, type, static_cast<std::int64_t>(count), elements), "cudnnBackendSetAttribute",
          what_, name);
    return *this;
  }

  cudnnBackendDescriptor_t raw_ = nullptr;
  std::string what_;
};

// `count` descriptors of one type, and their raw handles for a get_descriptors call.
std::vector<backend_descriptor> make_descriptors(cudnnBackendDescriptorType_t type, std::size_t count, const char* what) {
  std::vector<backend_descriptor> made;
  made.reserve(count);
  for (std::size_t i = 0; i < count; ++i) made.emplace_back(type, fmt::format("{} {}", what, i));
  return made;
}
std::vector<cudnnBackendDescriptor_t> raw_of(const std::vector<backend_descriptor>& descriptors) {
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const auto& d : descriptors) raw.push_back(d.get());
  return raw;
}

class cudnn_handle {
 public:
  cudnn_handle() { check(cudnn().create(&raw_), "cudnnCreate", "the SDPA peer's handle"); }
  cudnn_handle(const cudnn_handle&) = delete;
  cudnn_handle& operator=(const cudnn_handle&) = delete;
  ~cudnn_handle() { static_cast<void>(cudnn().destroy(raw_)); }
  [[nodiscard]] cudnnHandle_t get() const { return raw_; }

 private:
  cudnnHandle_t raw_ = nullptr;
};

// A unique_ptr deleter that calls a CUDA release function; its status is dropped: nobody is left to tell.
template <auto Release>
struct released_by {
  template <class T>
  void operator()(T* pointer) const {
    static_cast<void>(Release(pointer));
  }
};
using graph_exec_ptr = std::unique_ptr<CUgraphExec_st, released_by<cudaGraphExecDestroy>>;

// ---- The operation graph (Note [cuDNN SDPA graph]) ----

using dims4 = std::array<std::int64_t, 4>;

[[nodiscard]] dims4 row_major_strides(const dims4& dims) {
  return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
}

struct tensor_spec {
  std::int64_t uid = 0;
  const char* name = "";
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  dims4 dims{};
  dims4 strides{};
  bool is_virtual = false;
  bool by_value = false;  // a host scalar the variant pack points at
};

// The graph's descriptors, kept alive as long as plans built from it.
struct sdpa_graph {
  std::deque<backend_descriptor> tensors;  // a deque: references to its elements stay valid
  std::vector<backend_descriptor> operations;
  backend_descriptor graph;
};

class graph_builder {
 public:
  const backend_descriptor& tensor(const tensor_spec& spec) {
    backend_descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR, fmt::format("tensor {} (uid {})", spec.name, spec.uid));
    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, spec.uid)
        .set(CUDNN_ATTR_TENSOR_DATA_TYPE, spec.type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, std::span<const std::int64_t>(spec.dims))
        .set(CUDNN_ATTR_TENSOR_STRIDES, std::span<const std::int64_t>(spec.strides))
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, tensor_alignment_bytes);
    if (spec.is_virtual) t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
    if (spec.by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
    t.finalize();
    return graph_.tensors.emplace_back(std::move(t));
  }
  // A tensor no memory backs: one step's output, the next one's input.
  const backend_descriptor& intermediate(std::int64_t uid, const char* name, cudnnDataType_t type, const dims4& dims) {
    return tensor({uid, name, type, dims, row_major_strides(dims), true, false});
  }
  const backend_descriptor& host_scalar(std::int64_t uid, const char* name) {
    return tensor({uid, name, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true});
  }

  void matmul(const backend_descriptor& a, const backend_descriptor& b, const backend_descriptor& c) {
    backend_descriptor desc(CUDNN_BACKEND_MATMUL_DESCRIPTOR, "matmul into " + c.what());
    desc.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT).finalize();
    backend_descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "matmul operation into " + c.what());
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, desc)
        .finalize();
    graph_.operations.push_back(std::move(op));
  }

  void unary(cudnnPointwiseMode_t mode, const backend_descriptor& x, const backend_descriptor& y) {
    pointwise(mode, CUDNN_DATA_FLOAT, std::nullopt, x, nullptr, nullptr, y);
  }
  void binary(cudnnPointwiseMode_t mode, const backend_descriptor& x, const backend_descriptor& b, const backend_descriptor& y,
              cudnnDataType_t math = CUDNN_DATA_FLOAT) {
    pointwise(mode, math, std::nullopt, x, &b, nullptr, y);
  }
  // y = keep ? x : b
  void select(const backend_descriptor& x, const backend_descriptor& b, const backend_descriptor& keep,
              const backend_descriptor& y) {
    pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, std::nullopt, x, &b, &keep, y);
  }
  // y = each element's index along `axis` of x
  void index(std::int64_t axis, const backend_descriptor& x, const backend_descriptor& y) {
    pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, axis, x, nullptr, nullptr, y);
  }

  // Reduces x over the dimensions where y is 1.
  void reduction(cudnnReduceTensorOp_t mode, const backend_descriptor& x, const backend_descriptor& y) {
    backend_descriptor desc(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, "reduction into " + y.what());
    desc.set(CUDNN_ATTR_REDUCTION_OPERATOR, mode).set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT).finalize();
    backend_descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "reduction operation into " + y.what());
    op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc)
        .finalize();
    graph_.operations.push_back(std::move(op));
  }

  sdpa_graph finish(cudnnHandle_t handle) {
    backend_descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "the SDPA operation graph");
    graph.set_descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, raw_of(graph_.operations)).set(operation_graph_handle, handle);
    graph.finalize();
    graph_.graph = std::move(graph);
    return std::move(graph_);
  }

 private:
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t math, std::optional<std::int64_t> axis,
                 const backend_descriptor& x, const backend_descriptor* b, const backend_descriptor* t,
                 const backend_descriptor& y) {
    backend_descriptor desc(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise into " + y.what());
    desc.set(CUDNN_ATTR_POINTWISE_MODE, mode).set(CUDNN_ATTR_POINTWISE_MATH_PREC, math);
    if (axis) desc.set(CUDNN_ATTR_POINTWISE_AXIS, *axis);
    desc.finalize();
    backend_descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "pointwise operation into " + y.what());
    op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
        .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (b != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    // y = op(alpha1 x, alpha2 b): both 1, as cuDNN's frontend sets them.
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0f).set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0f).finalize();
    graph_.operations.push_back(std::move(op));
  }

  sdpa_graph graph_;
};

// Scores kept where the key is not after the query (row >= column), the fill elsewhere.
const backend_descriptor& add_causal_mask(graph_builder& g, const backend_descriptor& scores, const dims4& score_dims) {
  const auto& fill = g.host_scalar(fill_uid, "mask fill");
  const auto& row = g.intermediate(row_uid, "row index", CUDNN_DATA_INT32, score_dims);
  const auto& column = g.intermediate(column_uid, "column index", CUDNN_DATA_INT32, score_dims);
  const auto& keep = g.intermediate(keep_uid, "keep", CUDNN_DATA_BOOLEAN, score_dims);
  const auto& masked = g.intermediate(masked_uid, "masked S", CUDNN_DATA_FLOAT, score_dims);
  g.index(2, scores, row);
  g.index(3, scores, column);
  g.binary(CUDNN_POINTWISE_CMP_GE, row, column, keep, CUDNN_DATA_BOOLEAN);
  g.select(scores, fill, keep, masked);
  return masked;
}

// P = softmax(scores) over the keys, in the flash pattern's steps; P is bf16.
const backend_descriptor& add_softmax(graph_builder& g, const backend_descriptor& scores, const dims4& score_dims) {
  const dims4 row_dims{score_dims[0], score_dims[1], score_dims[2], 1};
  const auto& max = g.intermediate(max_uid, "m", CUDNN_DATA_FLOAT, row_dims);
  const auto& centered = g.intermediate(centered_uid, "S - m", CUDNN_DATA_FLOAT, score_dims);
  const auto& exponent = g.intermediate(exp_uid, "e", CUDNN_DATA_FLOAT, score_dims);
  const auto& sum = g.intermediate(sum_uid, "z", CUDNN_DATA_FLOAT, row_dims);
  const auto& log_sum = g.intermediate(log_sum_uid, "log z", CUDNN_DATA_FLOAT, row_dims);
  const auto& stats = g.intermediate(stats_uid, "m + log z", CUDNN_DATA_FLOAT, row_dims);
  const auto& probabilities = g.intermediate(probabilities_uid, "P", CUDNN_DATA_BFLOAT16, score_dims);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, scores, max);
  g.binary(CUDNN_POINTWISE_SUB, scores, max, centered);
  g.unary(CUDNN_POINTWISE_EXP, centered, exponent);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, exponent, sum);
  g.unary(CUDNN_POINTWISE_LOG, sum, log_sum);
  g.binary(CUDNN_POINTWISE_ADD, max, log_sum, stats);
  g.binary(CUDNN_POINTWISE_DIV, exponent, sum, probabilities);
  return probabilities;
}

sdpa_graph build_graph(const cudnn_sdpa_shape& p, cudnnHandle_t handle) {
  graph_builder g;
  const dims4 q_dims{p.batch, p.heads, p.seq, p.dim};
  const dims4 kv_dims{p.batch, p.kv_heads, p.seq, p.dim};
  const dims4 score_dims{p.batch, p.heads, p.seq, p.seq};
  const dims4 kv_strides = row_major_strides(kv_dims);
  const auto& q = g.tensor({q_uid, "Q", CUDNN_DATA_BFLOAT16, q_dims, row_major_strides(q_dims)});
  // K^T without a transpose: K's row and column strides swapped.
  const auto& k_t = g.tensor({k_uid, "K^T", CUDNN_DATA_BFLOAT16, {p.batch, p.kv_heads, p.dim, p.seq},
                              {kv_strides[0], kv_strides[1], 1, p.dim}});
  const auto& v = g.tensor({v_uid, "V", CUDNN_DATA_BFLOAT16, kv_dims, kv_strides});
  const auto& o = g.tensor({o_uid, "O", CUDNN_DATA_BFLOAT16, q_dims, row_major_strides(q_dims)});
  const auto& scale = g.host_scalar(scale_uid, "scale");
  const auto& scores = g.intermediate(scores_uid, "S", CUDNN_DATA_FLOAT, score_dims);
  const auto& scaled = g.intermediate(scaled_uid, "S * scale", CUDNN_DATA_FLOAT, score_dims);
  g.matmul(q, k_t, scores);
  g.binary(CUDNN_POINTWISE_MUL, scores, scale, scaled);
  const auto& logits = p.causal ? add_causal_mask(g, scaled, score_dims) : scaled;
  g.matmul(add_softmax(g, logits, score_dims), v, o);
  return g.finish(handle);
}

// ---- Plans: the heuristic's configurations, finalized ----

struct candidate {
  int rank = 0;  // in the heuristic's order, from 1
  backend_descriptor config;
  backend_descriptor plan;
  std::size_t workspace_bytes = 0;
};

struct candidates {
  std::vector<candidate> plans;
  int offered = 0;
  std::string first_refusal;  // why the first configuration cuDNN refused was refused
};

std::vector<backend_descriptor> heuristic_configs(const backend_descriptor& graph) {
  backend_descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "the engine heuristics (mode A)");
  heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph).set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_HEUR_MODE_A);
  heuristics.finalize();
  auto configs = make_descriptors(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                                  heuristics.count_of(CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR),
                                  "engine configuration");
  auto raw = raw_of(configs);
  configs.resize(heuristics.get_descriptors(CUDNN_ATTR_ENGINEHEUR_RESULTS, raw));
  return configs;
}

// Plans in the heuristic's order until max_plans are built; a configuration cuDNN cannot build
// for this graph is skipped.
candidates finalize_plans(const backend_descriptor& graph, cudnnHandle_t handle) {
  candidates found;
  auto configs = heuristic_configs(graph);
  found.offered = static_cast<int>(configs.size());
  for (std::size_t i = 0; i < configs.size() && found.plans.size() < max_plans; ++i) {
    backend_descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, fmt::format("execution plan {}", i + 1));
    plan.set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i]).set(execution_plan_handle, handle);
    if (const cudnnStatus_t status = plan.try_finalize(); status != CUDNN_STATUS_SUCCESS) {
      if (found.first_refusal.empty()) found.first_refusal = failure_text(status, "cudnnBackendFinalize", plan.what(), no_attribute);
      continue;
    }
    const auto workspace = plan.get<std::int64_t>(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
    found.plans.push_back({static_cast<int>(i) + 1, std::move(configs[i]), std::move(plan),
                           static_cast<std::size_t>(std::max<std::int64_t>(workspace, 0))});
  }
  return found;
}

// ---- The choice's identity: the engine's global index and its knob settings ----

std::int64_t engine_index(const backend_descriptor& config) {
  backend_descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "the chosen engine");
  std::array<cudnnBackendDescriptor_t, 1> out{engine.get()};
  AISP_EXPECTS(config.get_descriptors(CUDNN_ATTR_ENGINECFG_ENGINE, out) == 1, "cuDNN returned no engine for the chosen configuration");
  return engine.get<std::int64_t>(CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
}

std::string knob_settings(const backend_descriptor& config) {
  auto choices = make_descriptors(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS, "knob choice");
  auto raw = raw_of(choices);
  const std::size_t count = config.get_descriptors(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, raw);
  std::string text;
  for (std::size_t i = 0; i < count; ++i) {
    const auto type = choices[i].get<cudnnBackendKnobType_t>(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE);
    const auto value = choices[i].get<std::int64_t>(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE);
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", static_cast<int>(type), value);
  }
  return text.empty() ? "none" : text;
}

// Bounded whatever the value: at most 10 characters and a unit.
std::string duration_text(double seconds) {
  if (seconds >= 0 && seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds >= 0 && seconds < 1.0) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.4g} s", seconds);
}

// The mask's fill: cuDNN before 9.10 wants the lowest float rather than -inf (as its frontend
// does). With a causal mask every row keeps its diagonal, so either gives exp(fill - m) = 0.
float mask_fill_value() {
  return cudnn().get_version() < 91000 ? std::numeric_limits<float>::lowest() : -std::numeric_limits<float>::infinity();
}

std::string shape_text(const cudnn_sdpa_shape& p) {
  return fmt::format("b {} h {} hkv {} s {} d {}{}", p.batch, p.heads, p.kv_heads, p.seq, p.dim, p.causal ? " causal" : "");
}

bool same_tensors(const cudnn_sdpa_tensors& a, const cudnn_sdpa_tensors& b) {
  return a.q == b.q && a.k == b.k && a.v == b.v && a.o == b.o;
}

// Note [graph replay]: one execution of `plan` with `pack`, captured on a stream of its own and
// uploaded to `run_stream`; the handle is left on `run_stream`.
graph_exec_ptr capture_execution(cudnnHandle_t handle, const backend_descriptor& plan, const backend_descriptor& pack,
                                 cudaStream_t run_stream) {
  cudaStream_t raw_stream = nullptr;
  AISP_CUDA_CHECK(cudaStreamCreateWithFlags(&raw_stream, cudaStreamNonBlocking));
  const std::unique_ptr<CUstream_st, released_by<cudaStreamDestroy>> capture_stream(raw_stream);
  check(cudnn().set_stream(handle, capture_stream.get()), "cudnnSetStream", "the capture stream");
  // Thread-local capture: nothing another thread enqueues can fall into this graph.
  AISP_CUDA_CHECK(cudaStreamBeginCapture(capture_stream.get(), cudaStreamCaptureModeThreadLocal));
  const cudnnStatus_t executed = cudnn().execute(handle, plan.get(), pack.get());
  cudaGraph_t raw_graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(capture_stream.get(), &raw_graph);  // ended whatever execute did
  const std::unique_ptr<CUgraph_st, released_by<cudaGraphDestroy>> graph(raw_graph);
  check(cudnn().set_stream(handle, run_stream), "cudnnSetStream", "the harness's stream");
  check(executed, "cudnnBackendExecute", "the chosen plan, under stream capture");
  AISP_CUDA_CHECK(ended);
  cudaGraphExec_t raw_exec = nullptr;
  AISP_CUDA_CHECK(cudaGraphInstantiate(&raw_exec, graph.get(), 0));
  graph_exec_ptr exec(raw_exec);
  // Uploaded on the stream run() launches into: a first replay on another stream would build the
  // launch's host-side structures inside run() (ch01:graph_chain saw hundreds of allocations).
  AISP_CUDA_CHECK(cudaGraphUpload(exec.get(), run_stream));
  AISP_CUDA_CHECK(cudaStreamSynchronize(run_stream));
  return exec;
}

}  // namespace

std::string describe(const cudnn_sdpa_choice& c) {
  const std::string tail = fmt::format(": rank {} of {} heuristic configurations ({} built, {} timed), {}; rank 1 {}",
                                       c.heuristic_rank, c.offered, c.finalized, c.timed, duration_text(c.winner_s),
                                       c.first_s > 0 ? duration_text(c.first_s) : std::string("did not run"));
  std::string head = fmt::format("engine {} knobs {}", c.engine, c.knobs);
  // A long knob list gives way, never the timings.
  if (head.size() + tail.size() > max_note_value_chars) {
    head.resize(max_note_value_chars - std::min(max_note_value_chars, tail.size() + 3));
    head += "...";
  }
  return (head + tail).substr(0, max_note_value_chars);
}

// ---- The plan's state: the handle, the graph, and the chosen plan as run() replays it ----

struct cudnn_sdpa::state {
  explicit state(const cudnn_sdpa_shape& shape)
      : graph(build_graph(shape, handle.get())), scale(shape.scale), fill(mask_fill_value()), causal(shape.causal) {}

  // A finalized pack cannot take new pointers, so each binding makes its own. The host scalars go
  // by address: cuDNN reads `scale` and `fill` when it launches.
  [[nodiscard]] backend_descriptor variant_pack(const cudnn_sdpa_tensors& t) {
    const std::array<std::int64_t, 6> uids{q_uid, k_uid, v_uid, o_uid, scale_uid, fill_uid};
    // cuDNN takes void*; it only reads q, k, v and the scalars.
    const std::array<void*, 6> pointers{const_cast<void*>(t.q), const_cast<void*>(t.k), const_cast<void*>(t.v), t.o, &scale, &fill};
    const std::size_t count = causal ? 6 : 5;  // the fill is a tensor of the causal graph only
    const std::array<void*, 1> workspace_pointer{workspace->data()};  // allocated before any pack
    backend_descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "the variant pack");
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, std::span<const std::int64_t>(uids.data(), count))
        .set_pointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, std::span<void* const>(pointers.data(), count))
        .set_pointers(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, workspace_pointer)
        .finalize();
    return pack;
  }

  // Note [cuDNN autotuning]: times every plan on `tensors` (with an output of its own) and keeps
  // the fastest as `plan`.
  void autotune(candidates& found, const cudnn_sdpa_tensors& tensors, std::size_t bytes_o, cudaStream_t stream);

  // The chosen plan on `t`, captured for replay on `run_stream` (Note [graph replay]).
  void bind(const cudnn_sdpa_tensors& t, cudaStream_t run_stream) {
    replay = capture_execution(handle.get(), plan, variant_pack(t), run_stream);
    bound = t;
  }

  cudnn_handle handle;  // declared first: destroyed after the descriptors
  sdpa_graph graph;
  float scale;
  float fill;
  bool causal;
  std::unique_ptr<device_scratch> workspace;  // the largest of the built plans' workspaces
  backend_descriptor plan;  // the winner
  graph_exec_ptr replay;
  cudnn_sdpa_tensors bound;
  cudnn_sdpa_choice choice;
};

void cudnn_sdpa::state::autotune(candidates& found, const cudnn_sdpa_tensors& tensors, std::size_t bytes_o,
                                 cudaStream_t stream) {
  // An output of its own: setup() leaves the harness's o alone (it stays poisoned).
  const device_scratch scratch_o(bytes_o);
  cudnn_sdpa_tensors tuning = tensors;
  tuning.o = scratch_o.data();
  const backend_descriptor pack = variant_pack(tuning);
  check(cudnn().set_stream(handle.get(), stream), "cudnnSetStream", "the harness's stream");
  // Each failed plan's launch error is taken by the timer: one already waiting is setup()'s own.
  AISP_CUDA_CHECK(cudaPeekAtLastError());
  candidate_timer timer(warm_calls, timed_calls);
  choice = cudnn_sdpa_choice{};
  choice.offered = found.offered;
  choice.finalized = static_cast<int>(found.plans.size());
  choice.winner_s = std::numeric_limits<double>::infinity();
  candidate* winner = nullptr;
  for (auto& c : found.plans) {
    const auto time_s = timer.fastest_s(
        [&] { return cudnn().execute(handle.get(), c.plan.get(), pack.get()) == CUDNN_STATUS_SUCCESS; }, stream);
    if (!time_s) continue;
    ++choice.timed;
    if (c.rank == 1) choice.first_s = *time_s;
    if (autotune_displaces(*time_s, choice.winner_s)) {  // near-ties keep the heuristic's order
      choice.winner_s = *time_s;
      choice.heuristic_rank = c.rank;
      winner = &c;
    }
  }
  AISP_EXPECTS(winner != nullptr, fmt::format("cuDNN ran none of its {} built plans", choice.finalized));
  choice.engine = engine_index(winner->config);
  choice.knobs = knob_settings(winner->config);
  plan = std::move(winner->plan);
}

cudnn_sdpa::cudnn_sdpa(run_context& ctx, const cudnn_sdpa_shape& shape, const cudnn_sdpa_tensors& tensors) {
  AISP_EXPECTS(shape.kv_heads > 0 && shape.heads % shape.kv_heads == 0, "cuDNN SDPA: query heads must be a multiple of KV heads");
  try {
    state_ = std::make_unique<state>(shape);
    auto found = finalize_plans(state_->graph.graph, state_->handle.get());
    AISP_EXPECTS(!found.plans.empty(), fmt::format("cuDNN built none of the {} engine configurations its heuristic offered{}",
                                                   found.offered, found.first_refusal.empty() ? "" : ": " + found.first_refusal));
    std::size_t workspace_bytes = 0;
    for (const auto& c : found.plans) workspace_bytes = std::max(workspace_bytes, c.workspace_bytes);
    state_->workspace = std::make_unique<device_scratch>(workspace_bytes);
    const auto bytes_o = static_cast<std::size_t>(shape.batch * shape.heads * shape.seq * shape.dim) * 2;  // bf16
    state_->autotune(found, tensors, bytes_o, ctx.stream());
    state_->bind(tensors, ctx.stream());
  } catch (const contract_error& error) {
    throw contract_error(fmt::format("cuDNN SDPA peer ({}): {}", shape_text(shape), error.what()));
  }
  const std::string chosen = describe(state_->choice);
  ctx.note(note_key, chosen);
  std::fprintf(stderr, "aisp: cudnn sdpa peer chose %s (%s)\n", chosen.c_str(), shape_text(shape).c_str());
}

cudnn_sdpa::~cudnn_sdpa() = default;

void cudnn_sdpa::run(const cudnn_sdpa_tensors& tensors, cudaStream_t stream) {
  state& s = *state_;
  // Note [stable buffers]: the harness moves buffers only between a teardown() and a new setup(),
  // so the graph setup() captured serves every call. Were they to move, it is captured again here,
  // and the allocation check reports what that allocates.
  if (!same_tensors(tensors, s.bound)) s.bind(tensors, stream);
  AISP_CUDA_CHECK(cudaGraphLaunch(s.replay.get(), stream));
}

const cudnn_sdpa_choice& cudnn_sdpa::choice() const { return state_->choice; }

}  // namespace aisp::labs_attention
