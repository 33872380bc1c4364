"""Planted cheats through --python (issue 20): the judge must catch them as it does the lab's.

py_cheat:cached_output   the optimized variant computes once per address of x and replays it (O2)
py_cheat:skips_the_work  the optimized variant writes y once per address, then returns at once
"""
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


cached = add_one_pair("py_cheat:cached_output", "replays the result it computed for this address of x")
_kept = {}


@cached.variant("optimized", summary="computes once per address of x, then replays")
def replay(x, y):
    key = (x.data_ptr(), x.numel())
    if key not in _kept:
        _kept[key] = x + 1
    y.copy_(_kept[key])


skipped = add_one_pair("py_cheat:skips_the_work", "run() writes nothing after the first call")
_done = set()


@skipped.variant("optimized", summary="writes y once per address, then returns at once")
def once(x, y):
    if y.data_ptr() not in _done:
        _done.add(y.data_ptr())
        torch.add(x, 1, out=y)
