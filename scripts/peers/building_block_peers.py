#!/usr/bin/env python3
"""PyTorch on the shapes of ch16's transformer building blocks: the chapter's second opinion (issue 19).

Same shapes and dtypes as the pairs (chapters/ch16/*.cu), random bf16 inputs in [-1, 1):
softmax over rows, residual add + layer_norm / rms_norm (the two eager ops an unfused model runs,
and the op alone), and the decode GEMV through torch.nn.functional.linear. Each is timed per call
with CUDA events (hw_peers.isolated_median_seconds: median of 20 calls after a warm-up), twice:
warm, and with a 2x-L2 read before each call (cold, as aisp times). Bytes are counted as the aisp
pair counts them, so the GB/s compare directly. Prints one JSON object on stdout.

Run on the GPU machine: python3 scripts/peers/building_block_peers.py > building_block_peers.json
"""

import json
import sys

import torch
import torch.nn.functional as F

from hw_peers import isolated_median_seconds, l2_flush

ROW_SHAPES = [(32768, 4096), (4096, 32768)]
GEMV_SHAPES = [(8192, 8192), (28672, 8192)]


def uniform(*shape):
    return torch.empty(shape, device="cuda").uniform_(-1.0, 1.0).to(torch.bfloat16)


def timed(call, flush):
    warm = isolated_median_seconds(call)
    cold = isolated_median_seconds(call, before=flush)
    return warm, cold


def record(out, target, what, call, flush, nbytes):
    try:
        warm, cold = timed(call, flush)
        out[target + " " + what] = {"bytes": nbytes, "warm_s": warm, "cold_s": cold,
                                    "cold_gbps": nbytes / cold / 1e9, "warm_gbps": nbytes / warm / 1e9}
        print(f"{target} {what}: {nbytes / cold / 1e9:.0f} GB/s cold, {nbytes / warm / 1e9:.0f} warm",
              file=sys.stderr)
    except Exception as error:  # recorded; the rest still run
        out[target + " " + what + "_error"] = str(error).splitlines()[0][:300]


def main():
    flush = l2_flush()
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "rows": {}}
    rows_out = out["rows"]
    for rows, cols in ROW_SHAPES:
        n = rows * cols
        x, residual = uniform(rows, cols), uniform(rows, cols)
        weight, bias = uniform(cols), uniform(cols)
        record(rows_out, f"ch16:softmax_{cols}", "torch.softmax", lambda: torch.softmax(x, dim=-1), flush, 4 * n)
        # The pair's work: x and residual read, h and y written (8n bytes), as the fused kernel needs.
        record(rows_out, f"ch16:layer_norm_{cols}", "add + F.layer_norm",
               lambda: F.layer_norm(x + residual, (cols,), weight, bias), flush, 8 * n)
        record(rows_out, f"ch16:layer_norm_{cols}", "F.layer_norm alone (4n bytes)",
               lambda: F.layer_norm(x, (cols,), weight, bias), flush, 4 * n)
        record(rows_out, f"ch16:rms_norm_{cols}", "add + F.rms_norm",
               lambda: F.rms_norm(x + residual, (cols,), weight, 1e-6), flush, 8 * n)
        record(rows_out, f"ch16:rms_norm_{cols}", "F.rms_norm alone (4n bytes)",
               lambda: F.rms_norm(x, (cols,), weight, 1e-6), flush, 4 * n)
        del x, residual
    for rows, k in GEMV_SHAPES:
        w, x = uniform(rows, k), uniform(k)
        record(rows_out, f"ch16:gemv_{rows}", "F.linear", lambda: F.linear(x, w), flush, 2 * (rows * k + rows + k))
        del w
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
