// cuTensorMapEncodeTiled, the driver call that builds a TMA tensor map, found through the
// runtime's driver entry-point query: aisp links only cudart (CI machines have no driver), so
// libcuda's symbol is looked up at run time, once per process. Host-only.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums only: nothing here links libcuda
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "aisp/check.hpp"

namespace aisp {

using tensor_map_encoder = PFN_cuTensorMapEncodeTiled_v12000;

// The encoder; a driver without it is a contract error. Call it in setup(), not in run().
inline tensor_map_encoder tensor_map_encode_function() {
  static const tensor_map_encoder encode = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found{};
    AISP_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000,
                                                     cudaEnableDefault, &found));
    AISP_EXPECTS(found == cudaDriverEntryPointSuccess && entry != nullptr,
                 "the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<tensor_map_encoder>(entry);
  }();
  return encode;
}

}  // namespace aisp
