"""Note [goals]: a latency pair. The baseline sorts its input first whenever x[0] > 0.8 (about one
call in ten, decided by the fresh inputs), so its median call is the optimized variant's and
its p99 is not: the verdict, on the p99, must say faster; a median verdict would not."""
import torch

import aisp

p = aisp.pair("py_goal:tail_latency", summary="y = 2x, with a slow path in one call of ten", device="cpu")
p.sizes(benchmark={"n": 1 << 16}, validation=[{"n": 7}, {"n": 1000}], held_out=[{"n": 333}])
p.input("x", ["n"], torch.float64)
p.output("y", ["n"], torch.float64)
p.work(lambda s: aisp.work(bytes=16 * s["n"], flops=s["n"]))
p.goal("latency")


@p.reference
def reference(x, y):
    y.copy_(2 * x)


@p.variant("baseline", summary="sorts a copy twice first when x[0] > 0.8, then doubles")
def baseline(x, y):
    if x[0].item() > 0.8:
        for _ in range(2):
            torch.sort(x)
    torch.mul(x, 2, out=y)


@p.variant("optimized", summary="never takes the slow path")
def optimized(x, y):
    torch.mul(x, 2, out=y)
