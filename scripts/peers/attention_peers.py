#!/usr/bin/env python3
"""PyTorch SDPA on the shapes of labs/attention: the lab's second opinion (issue 18).

Same shapes, dtypes and masks as the lab's pairs (labs/attention/attention_forward.cu), random
bf16 inputs in [-1, 1), forward only. Each available SDPA backend (flash, cuDNN, memory-efficient)
is timed per call with CUDA events (hw_peers.isolated_median_seconds: median of 20 calls after
a warm-up), twice: warm, and with a 2x-L2 read before each call (cold, as aisp times). FLOPs as
the lab counts them: 4 b h s^2 d, half of that (s (s + 1) / 2 scores) when causal. Prints one JSON object on stdout; a backend that refuses a shape records its error.

Run on the GPU machine: python3 scripts/peers/attention_peers.py > attention_peers.json
"""

import json
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from hw_peers import isolated_median_seconds, l2_flush

# target: (batch, query heads, kv heads, seq, head dim, causal), as the lab declares them
SHAPES = {
    "labs/attention:fwd_hd128": (4, 16, 16, 4096, 128, False),
    "labs/attention:fwd_hd128_causal": (4, 16, 16, 4096, 128, True),
    "labs/attention:fwd_hd64": (4, 16, 16, 4096, 64, False),
    "labs/attention:fwd_gqa": (1, 32, 8, 8192, 128, False),
}
BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def main():
    flush = l2_flush()
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "pairs": {}}
    for target, (b, h, hkv, s, d, causal) in SHAPES.items():
        def uniform(heads):
            return torch.empty((b, heads, s, d), device="cuda").uniform_(-1.0, 1.0).to(torch.bfloat16)
        q, k, v = uniform(h), uniform(hkv), uniform(hkv)
        scored = s * (s + 1) / 2 if causal else s * s
        flops = 4.0 * b * h * scored * d
        row = {"flops": flops}
        for name, backend in BACKENDS.items():
            try:
                with sdpa_kernel(backend):
                    call = lambda: torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, is_causal=causal, enable_gqa=(h != hkv))
                    warm = isolated_median_seconds(call)
                    cold = isolated_median_seconds(call, before=flush)
                row[name] = {"warm_s": warm, "cold_s": cold, "warm_tflops": flops / warm / 1e12,
                             "cold_tflops": flops / cold / 1e12}
            except Exception as error:  # a backend that refuses the shape: recorded, the rest still run
                row[name + "_error"] = str(error).splitlines()[0][:300]
        out["pairs"][target] = row
        print(f"{target}: " + ", ".join(f"{n} {r['cold_tflops']:.0f} cold / {r['warm_tflops']:.0f} warm TFLOP/s"
                                        for n, r in row.items() if isinstance(r, dict)), file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
