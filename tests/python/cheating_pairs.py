"""Planted cheats through --python (issue 20): the judge must catch them as it does the lab's.

py_cheat:cached_output   the optimized variant computes once per address of x and replays it (O2)
py_cheat:skips_the_work  the optimized variant writes y once per address, then returns at once
"""
import torch

from add_one_pair import add_one_pair

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
