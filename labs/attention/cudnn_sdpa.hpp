// cuDNN's fused flash attention forward (scaled dot-product attention), planned once in setup()
// and replayed in run(): the library peer of labs/attention. cuDNN is loaded at run time
// (dlopen("libcudnn.so.9")), never linked, and driven through its C backend graph API; the graph,
// its tensor UIDs and the autotuning are described at the top of cudnn_sdpa.cpp. Host-only, so a
// pair file (nvcc) includes it without cuDNN's headers; owners keep it in variant state (RAII).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include "aisp/run_context.hpp"

namespace aisp::labs_attention {

// The problem as cuDNN sees it. q and o: (batch, heads, seq, dim); k and v: (batch, kv_heads,
// seq, dim); all bf16 row-major, heads a multiple of kv_heads (query head i reads KV head
// i / (heads / kv_heads), as attention_problem's group does).
struct cudnn_sdpa_shape {
  std::int64_t batch = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t seq = 0;  // queries and keys alike
  std::int64_t dim = 0;
  bool causal = false;  // query i sees keys 0..i
  float scale = 1.0f;   // applied to Q K^T before the softmax
};

// Device pointers to the four bf16 tensors.
struct cudnn_sdpa_tensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
};

// What autotuning kept: the winning engine's identity and how it won. Times are the fastest of
// the timed calls of each plan, in seconds.
struct cudnn_sdpa_choice {
  std::int64_t engine = -1;  // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::string knobs;         // its configuration: "type=value" pairs, cudnnBackendKnobType_t values
  int heuristic_rank = 0;    // 1: the heuristic's first configuration
  int offered = 0;           // configurations the heuristic (mode A) returned
  int finalized = 0;         // of those tried, the plans cuDNN built
  int timed = 0;             // of those, the plans that ran
  double winner_s = 0;
  double first_s = 0;  // rank 1's time; 0 when it did not run
};

// One line for run_context::note() and the log, within max_note_value_chars whatever the values.
[[nodiscard]] std::string describe(const cudnn_sdpa_choice& choice);

class cudnn_sdpa {
 public:
  // The key of the note the constructor leaves in the variant's result.
  static constexpr const char* note_key = "cudnn_engine";

  // setup(): loads cuDNN, builds the graph for `shape`, finalizes up to 8 of the heuristic's plans
  // and keeps the fastest on ctx.stream(), timed on `tensors`' q, k and v with an output of its own
  // (tensors.o is not written), then captures it on `tensors` into a CUDA graph. Notes the choice
  // (note_key) and logs it to stderr. A shape cuDNN cannot run is a contract error that says why.
  cudnn_sdpa(run_context& ctx, const cudnn_sdpa_shape& shape, const cudnn_sdpa_tensors& tensors);
  cudnn_sdpa(const cudnn_sdpa&) = delete;
  cudnn_sdpa& operator=(const cudnn_sdpa&) = delete;
  ~cudnn_sdpa();

  // run(): one forward pass of the chosen plan on `stream`, one cudaGraphLaunch: cuDNN's own
  // execute call allocates on the host (Note [graph replay] in cudnn_sdpa.cpp). With setup()'s
  // tensors nothing else happens; new pointers are captured again.
  void run(const cudnn_sdpa_tensors& tensors, cudaStream_t stream);

  [[nodiscard]] const cudnn_sdpa_choice& choice() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace aisp::labs_attention
