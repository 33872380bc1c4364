"""The tutorial's PyTorch pair on the CPU (docs/tutorial.md): y = gelu(x) * w + b.

Run it:  aisp bench run --python examples/python/host_pairs.py --targets mine:gelu_affine
"""
import torch

import aisp

p = aisp.pair("mine:gelu_affine", summary="y = gelu(x) * w + b over rows of a matrix", device="cpu")
p.sizes(benchmark={"rows": 512, "cols": 1024},
        validation=[{"rows": 3, "cols": 7}, {"rows": 17, "cols": 33}],  # ragged on purpose
        held_out=[{"rows": 5, "cols": 129}])
p.input("x", ["rows", "cols"], torch.float32)
p.input("w", ["cols"], torch.float32)
p.input("b", ["cols"], torch.float32)
p.output("y", ["rows", "cols"], torch.float32)
# fp32 gelu (erf) rounds differently from the fp64 reference, and + b cancels where gelu(x) * w
# is close to -b: the error is a few ulp of the terms, not of the result, hence an absolute floor.
p.tolerance(rtol=1e-5, atol=1e-6, reason="fp32 erf-gelu rounding; + b cancels near zero, so the error is absolute")
# Read x, w and b once, write y once; gelu (erf form) counted as ~20 FLOPs an element.
p.work(lambda s: aisp.work(bytes=4 * (2 * s["rows"] * s["cols"] + 2 * s["cols"]), flops=22 * s["rows"] * s["cols"]))


@p.reference
def reference(x, w, b, y):  # float64 views of the same buffers
    y.copy_(torch.nn.functional.gelu(x) * w + b)


@p.variant("baseline", summary="three eager ops, each through memory")
def baseline(x, w, b, y):
    g = torch.nn.functional.gelu(x)
    torch.add(g * w, b, out=y)


@p.variant("optimized", summary="gelu, then one fused multiply-add into y (addcmul)")
def optimized(x, w, b, y):
    torch.addcmul(b, torch.nn.functional.gelu(x), w, out=y)
