// cuBLAS math-mode changes made inside run() (W2: TF32 switched on behind the pair's back).
// CUPTI sees CUDA calls, not cuBLAS's; so the executable defines cublasSetMathMode itself, which
// every call from the binary's own code binds to, tells the recorder, and forwards to the real
// function (the next definition in load order: libcublas). Binaries that never call cuBLAS
// never reach this.
#include <dlfcn.h>

namespace aisp {
void note_math_mode_change();
}  // namespace aisp

extern "C" int cublasSetMathMode(void* handle, int mode) {
  using set_math_mode_fn = int (*)(void*, int);
  static const auto real = reinterpret_cast<set_math_mode_fn>(dlsym(RTLD_NEXT, "cublasSetMathMode"));
  aisp::note_math_mode_change();
  constexpr int not_initialized = 1;  // CUBLAS_STATUS_NOT_INITIALIZED
  return real != nullptr ? real(handle, mode) : not_initialized;
}
