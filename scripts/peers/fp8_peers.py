#!/usr/bin/env python3
"""PyTorch's fp8 GEMMs at 8192^3: the peers of ch19:block_scaled_fp8_gemm and labs/gemm:fp8_8192 (issue 19).

C (8192 x 8192, bf16) = A B^T, A and B e4m3 (K-major), through torch._scaled_mm (cuBLASLt):
one scale a tensor, and DeepSeek-V3's block scales (fp32, one per 1 x 128 of A and per 128 x 128
of B) where this PyTorch and cuBLASLt take them on this card. The scale layouts torch accepts
have changed between releases, so each candidate layout is tried; one that runs must also give
the dequantized fp32 product (relative L2 under 1e-2) before it is timed, so a layout read the
wrong way round is reported, not timed. Timed per call with CUDA events after an L2 flush
(hw_peers.isolated_median_seconds), as aisp times. Prints one JSON object on stdout.

Run on the GPU machine: python3 scripts/peers/fp8_peers.py > fp8_peers.json
"""

import json
import sys

import torch

from hw_peers import isolated_median_seconds, l2_flush

SIZE = 8192
BLOCK = 128


def e4m3(shape):
    return torch.empty(shape, device="cuda").uniform_(-1.0, 1.0).to(torch.float8_e4m3fn)


def relative_l2(got, want):
    return (torch.linalg.vector_norm(got.float() - want) / torch.linalg.vector_norm(want)).item()


def timed(out, key, call, flush, want=None):
    try:
        got = call()
        if want is not None:
            error = relative_l2(got, want)
            out[key + " relative_l2"] = error
            if not error < 1e-2:
                out[key + "_error"] = f"wrong product (relative L2 {error:.3g}): the scale layout is read another way"
                return
        seconds = isolated_median_seconds(call, before=flush)
        out[key] = {"seconds": seconds, "tflops": 2 * SIZE**3 / seconds / 1e12}
        print(f"{key}: {2 * SIZE**3 / seconds / 1e12:.0f} TFLOP/s cold", file=sys.stderr)
    except Exception as error:  # recorded; the rest still run
        out[key + "_error"] = str(error).splitlines()[0][:300]


def main():
    flush = l2_flush()
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda, "size": SIZE}
    a, b = e4m3((SIZE, SIZE)), e4m3((SIZE, SIZE))  # b: (n, k) contiguous, passed as b.t()
    one = torch.tensor(1.0, device="cuda")
    timed(out, "per_tensor _scaled_mm", lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
          flush)
    # cuBLASLt's FAST_ACCUM: the K sum kept in the tensor cores' fp8 accumulator, never promoted,
    # the precision of labs/gemm's optimized_fp8_wgmma (its like-for-like peer; the lab's
    # peer_cublas promotes, as optimized_fp8_promoted does).
    timed(out, "per_tensor _scaled_mm use_fast_accum",
          lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=True), flush)
    blocks = SIZE // BLOCK
    sa = torch.empty((SIZE, blocks), device="cuda").uniform_(0.5, 1.0)  # (m, k blocks)
    sb = torch.empty((blocks, blocks), device="cuda").uniform_(0.5, 1.0)  # (n blocks, k blocks)
    a_deq = a.float() * sa.repeat_interleave(BLOCK, dim=1)
    b_deq = b.float() * sb.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)
    want = a_deq @ b_deq.t()
    del a_deq, b_deq
    candidates = {
        # scale_a (m, k/128) outer-dim-major; scale_b for B^T (k, n): (k/128, n/128)
        "block_scaled _scaled_mm (sa col-major, sb (kb, nb))": (sa.t().contiguous().t(), sb.t().contiguous()),
        "block_scaled _scaled_mm (sa col-major, sb (kb, nb) col-major)": (sa.t().contiguous().t(), sb.t()),
        "block_scaled _scaled_mm (sa row-major, sb (kb, nb))": (sa, sb.t().contiguous()),
    }
    for key, (scale_a, scale_b) in candidates.items():
        timed(out, key, lambda: torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16), flush, want)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
