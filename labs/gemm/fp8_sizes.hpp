// The validation and held-out sizes of the e4m3 GEMM pairs (labs/gemm:fp8_*, ch19's block-scaled
// GEMM): the cases the fp8 kernels' paths and edge tiles need, declared once.
#pragma once

#include "aisp/pair.hpp"

namespace aisp::labs_gemm {

// k % 16 != 0 takes the fp8 steps' SIMT fallback (7 x 5 x 3, 65 x 33 x 40: the bf16 baseline
// still runs its TMA path at k % 8 == 0); the rest run the real kernels with edge tiles in m, n
// and k: 130 x 66 x 48 (one partial k-block, n % 8 != 0), 257 x 129 x 272 (n odd, a 16-wide last
// k-block), 272 x 400 x 272 (multiples of 16: cuBLASLt's fp8 path, with edge tiles for ours; the
// battery's size). Held out: edge tiles on every axis (2051 = 8 x 256 + 3, 2568 = 10 x 256 + 8,
// 528 = 4 x 128 + 16); 9 x 11 = 99 cluster tiles, more than the ~66 co-resident clusters, so 50
// clusters take two each (barrier phases carried into a second tile), and 5 k-blocks wrap the
// 4-slot ring; 5.6 GFLOP on the host, once per run.
inline pair& with_fp8_gemm_sizes(pair& p) {
  return p.validation_size({{"m", 1}, {"n", 1}, {"k", 1}})
      .validation_size({{"m", 7}, {"n", 5}, {"k", 3}})
      .validation_size({{"m", 65}, {"n", 33}, {"k", 40}})
      .validation_size({{"m", 128}, {"n", 128}, {"k", 128}})
      .validation_size({{"m", 130}, {"n", 66}, {"k", 48}})
      .validation_size({{"m", 257}, {"n", 129}, {"k", 272}})
      .validation_size({{"m", 272}, {"n", 400}, {"k", 272}})
      .held_out_size({{"m", 2051}, {"n", 2568}, {"k", 528}});
}

}  // namespace aisp::labs_gemm
