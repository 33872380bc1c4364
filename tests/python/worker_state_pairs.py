"""Note [worker state]: baselines slowed by a process-wide setting of their own worker.

py_state:baseline_lowers_the_mmap_threshold   the baseline's setup calls mallopt(M_MMAP_THRESHOLD,
                                              64 KiB): each 2 MiB temporary is a fresh mapping
py_state:baseline_turns_off_onednn            the baseline's setup turns torch.backends.mkldnn off
py_state:baseline_collects_all_the_time       the baseline's setup sets gc.set_threshold(1, 1, 1) and
                                              adds a gc callback (red team seven: 2.8x)
"""
import ctypes

import torch
import torch.nn.functional as F

import aisp

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3


def lower_the_mmap_threshold():
    libc = ctypes.CDLL(None)
    libc.mallopt(M_MMAP_THRESHOLD, 64 * 1024)
    libc.mallopt(M_TRIM_THRESHOLD, 0)


mapped = aisp.pair("py_state:baseline_lowers_the_mmap_threshold", summary="y = exp(x) * 2 + 1, its temporaries 2 MiB",
                   device="cpu")
mapped.sizes(benchmark={"n": 1 << 19}, validation=[{"n": 7}, {"n": 1000}], held_out=[{"n": 333}])
mapped.input("x", ["n"], torch.float32)
mapped.output("y", ["n"], torch.float32)
mapped.work(lambda s: aisp.work(bytes=8 * s["n"], flops=3 * s["n"]))


@mapped.reference
def exp_reference(x, y):
    y.copy_(torch.exp(x) * 2 + 1)


@mapped.variant("baseline", summary="eager, in a worker whose mmap threshold its setup lowered", setup=lower_the_mmap_threshold)
def exp_baseline(x, y):
    y.copy_(torch.exp(x) * 2 + 1)


@mapped.variant("optimized", summary="the same code")
def exp_optimized(x, y):
    y.copy_(torch.exp(x) * 2 + 1)


def onednn_off():
    torch.backends.mkldnn.enabled = False


conv = aisp.pair("py_state:baseline_turns_off_onednn", summary="a 3x3 convolution", device="cpu")
conv.sizes(benchmark={"b": 2, "c": 16, "hw": 32, "three": 3}, validation=[{"b": 1, "c": 4, "hw": 8, "three": 3}],
           held_out=[{"b": 1, "c": 3, "hw": 9, "three": 3}])
conv.input("x", ["b", "c", "hw", "hw"], torch.float32)
conv.input("w", ["c", "c", "three", "three"], torch.float32)
conv.output("y", ["b", "c", "hw", "hw"], torch.float32)
conv.work(lambda s: aisp.work(bytes=8 * s["b"] * s["c"] * s["hw"] ** 2, flops=18 * s["b"] * s["c"] ** 2 * s["hw"] ** 2))


@conv.reference
def conv_reference(x, w, y):
    y.copy_(F.conv2d(x, w, padding=1))


@conv.variant("baseline", summary="F.conv2d, with oneDNN turned off by its setup", setup=onednn_off)
def conv_baseline(x, w, y):
    y.copy_(F.conv2d(x, w, padding=1))


@conv.variant("optimized", summary="the same F.conv2d")
def conv_optimized(x, w, y):
    y.copy_(F.conv2d(x, w, padding=1))


def collect_all_the_time():
    import gc
    gc.set_threshold(1, 1, 1)
    if not any(getattr(c, "planted", False) for c in gc.callbacks):
        def note(phase, info):
            sum(range(64))
        note.planted = True
        gc.callbacks.append(note)


collected = aisp.pair("py_state:baseline_collects_all_the_time", summary="y = (x * 2 + 1) * 3 in eager ops", device="cpu")
collected.sizes(benchmark={"n": 4096}, validation=[{"n": 7}, {"n": 1000}], held_out=[{"n": 333}])
collected.input("x", ["n"], torch.float32)
collected.output("y", ["n"], torch.float32)
collected.work(lambda s: aisp.work(bytes=8 * s["n"], flops=3 * s["n"]))


@collected.reference
def eager_reference(x, y):
    y.copy_((x * 2 + 1) * 3)


@collected.variant("baseline", summary="eager ops, in a worker whose collector its setup made run all the time",
                   setup=collect_all_the_time)
def eager_baseline(x, y):
    y.copy_((x * 2 + 1) * 3)


@collected.variant("optimized", summary="the same code")
def eager_optimized(x, y):
    y.copy_((x * 2 + 1) * 3)
