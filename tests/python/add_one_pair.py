"""A y = x + 1 pair in float64 with an eager baseline, for the cheat and subprocess fixtures."""
import torch

import aisp


def add_one_pair(target, summary):
    p = aisp.pair(target, summary=summary, device="cpu")
    p.sizes(benchmark={"n": 1 << 16}, validation=[{"n": 7}, {"n": 1000}], held_out=[{"n": 333}])
    p.input("x", ["n"], torch.float64)
    p.output("y", ["n"], torch.float64)
    p.work(lambda s: aisp.work(bytes=16 * s["n"], flops=s["n"]))

    @p.reference
    def reference(x, y):
        y.copy_(x + 1)

    @p.variant("baseline", summary="an eager add")
    def baseline(x, y):
        torch.add(x, 1, out=y)

    return p
