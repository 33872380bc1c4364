"""A pair whose output names a dim no size gives (`m`), beside a good one: the file is refused at
load in one line, before any pair runs (a user's walkthrough, 2026-12-04: the run ended at the bad
pair's turn, the good pairs after it never ran)."""
import torch

import aisp

p = aisp.pair("py_bad:dim_named_nowhere", summary="y's dims name m, the sizes give n", device="cpu")
p.sizes(benchmark={"n": 1024}, validation=[{"n": 7}], held_out=[{"n": 33}])
p.input("x", ["n"], torch.float32)
p.output("y", ["m"], torch.float32)
p.work(lambda s: aisp.work(bytes=8 * s["n"]))


@p.reference
def reference(x, y):
    y.copy_(x)


@p.variant("baseline")
def baseline(x, y):
    y.copy_(x)


@p.variant("optimized")
def optimized(x, y):
    y.copy_(x)
