"""A stream escape through --python (T1), for the GPU tests: the optimized variant launches its
work on a stream of its own and returns without waiting, so the harness's timed stream is empty."""
import torch

import aisp

p = aisp.pair("py_cuda_cheat:stream_escape", summary="y = 2x on a side stream, unsynchronized", device="cuda")
p.sizes(benchmark={"n": 1 << 24}, validation=[{"n": 1000}, {"n": 4097}], held_out=[{"n": 2049}])
p.input("x", ["n"], torch.float32)
p.output("y", ["n"], torch.float32)
p.work(lambda s: aisp.work(bytes=8 * s["n"], flops=s["n"]))


@p.reference
def reference(x, y):
    y.copy_(2 * x)


@p.variant("baseline", summary="torch.mul on the harness's stream")
def baseline(x, y):
    torch.mul(x, 2, out=y)


_side = {}


@p.variant("optimized", summary="the same multiply on a side stream, not joined back")
def optimized(x, y):
    side = _side.setdefault("stream", torch.cuda.Stream())
    with torch.cuda.stream(side):
        for _ in range(8):  # long enough that the escape shows
            torch.mul(x, 2, out=y)
