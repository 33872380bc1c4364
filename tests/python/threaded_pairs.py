"""A CPU pair on two torch intra-op threads (Note [declared threads]): p.threads(2) declares the
pool, so its second thread's CPU in the timed spans, and its spinning after a call, are the
declared pool's, not a helper's."""
import torch

import aisp

p = aisp.pair("py_threads:two_intra_op_threads", summary="y = 2x + 1 on two torch threads", device="cpu")
p.sizes(benchmark={"n": 1 << 22}, validation=[{"n": 7}, {"n": 1000}], held_out=[{"n": 4099}])
p.input("x", ["n"], torch.float32)
p.output("y", ["n"], torch.float32)
p.work(lambda s: aisp.work(bytes=8 * s["n"], flops=2 * s["n"]))
p.threads(2, "torch splits each elementwise op over two intra-op threads")


@p.reference
def reference(x, y):
    y.copy_(2 * x + 1)


@p.variant("baseline", summary="two ops: a multiply into y, then an add in place")
def baseline(x, y):
    torch.mul(x, 2, out=y)
    y.add_(1)


@p.variant("optimized", summary="one op: torch.add(1, x, alpha=2)")
def optimized(x, y):
    torch.add(torch.ones((), dtype=x.dtype), x, alpha=2, out=y)
