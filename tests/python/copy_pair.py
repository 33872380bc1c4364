"""A y = x pair for the error fixtures; held_out=False leaves out the held-out size (V8)."""
import torch

import aisp


def copy_pair(target, summary, held_out=True):
    p = aisp.pair(target, summary=summary, device="cpu")
    p.sizes(benchmark={"n": 4096}, validation=[{"n": 7}], held_out=[{"n": 33}] if held_out else [])
    p.input("x", ["n"], torch.float32)
    p.output("y", ["n"], torch.float32)
    p.work(lambda s: aisp.work(bytes=8 * s["n"]))

    @p.reference
    def reference(x, y):
        y.copy_(x)

    @p.variant("baseline", summary="a copy")
    def baseline(x, y):
        y.copy_(x)

    return p
