"""CPU pairs on two torch intra-op threads (Note [declared threads]): p.threads(2) declares the
pool, so its second thread's CPU in the timed spans, and its spinning after a call, are the
declared pool's, not a helper's.

Note [declared threads used]:
py_threads:serial_baseline_declared   the baseline declares its own one thread: it passes, and
                                      results show 1 beside the candidate's 2
py_threads:baseline_on_one_thread     the baseline's setup() drops torch to one thread under the
                                      pair's 2 (red team five): threads-used fails it
"""
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


def _affine_pair(target, summary):
    made = aisp.pair(target, summary=summary, device="cpu")
    made.sizes(benchmark={"n": 1 << 22}, validation=[{"n": 7}, {"n": 1000}], held_out=[{"n": 4099}])
    made.input("x", ["n"], torch.float32)
    made.output("y", ["n"], torch.float32)
    made.work(lambda s: aisp.work(bytes=8 * s["n"], flops=2 * s["n"]))
    made.threads(2, "torch splits each elementwise op over two intra-op threads")
    made.reference(reference)
    return made


def _one_op(x, y):
    torch.add(torch.ones((), dtype=x.dtype), x, alpha=2, out=y)


declared = _affine_pair("py_threads:serial_baseline_declared", "y = 2x + 1: one thread against two, declared")
declared.variant("baseline", summary="one op on one thread, declared", threads=1)(_one_op)
declared.variant("optimized", summary="one op on the pair's two threads")(_one_op)


def _one_thread():
    torch.set_num_threads(1)


quiet = _affine_pair("py_threads:baseline_on_one_thread", "y = 2x + 1: the baseline drops to one thread, undeclared")
quiet.variant("baseline", summary="one op; setup() calls torch.set_num_threads(1)", setup=_one_thread)(_one_op)
quiet.variant("optimized", summary="one op on the pair's two threads")(_one_op)
