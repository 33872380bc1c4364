#!/usr/bin/env python3
"""Planted cheats through --exec (issue 20): the judge must catch them as it does the lab's.

cached    computes y on its first call, then writes that same y back on every call (O2)
escapes   replies "ok" at once and writes y from a thread afterwards, outside the timed call:
          a host program's stream escape (Note [late writes])
ahead     a thread watches x and computes y as soon as x changes, between the judge's fill and
          the timed call (a red team's version read 47x, 2026-12-03); run() copies it when x is
          the one it saw (Note [work before the window])
reniced   honest numpy, in a program that lowers its own priority at setup (os.nice): the
          worker's nice value stays put, its child's does not (Note [children's priority]);
          a red team's baseline did so to lend its rival 1.30x on a loaded machine (2026-12-04)
idled     honest numpy, in a program that puts itself under SCHED_IDLE at setup: the worker's
          policy stays put, its child's threads' do not (Note [thread placement]; red team fifteen)
deep      `ahead`'s helper as a process six levels below the program (a chain forked at setup),
          past the four levels the worker's /proc walk once read (red team six: 5.5x, 2026-12-04)
split     honest numpy, each half of a call on its own thread (numpy lets go of the GIL over a
          slice): the candidate of thread_pairs.json, whose pair declares 2 threads
quieted   honest numpy, in a program that sets NPY_DISABLE_CPU_FEATURES itself before importing
          numpy (red team eleven: 17.7x, 2026-12-05; Note [live program environment])
refaulting honest numpy, in a program that drops its pages of the judge's buffers after every call
          (madvise MADV_DONTNEED): each call faults them back in, a baseline's handicap the worker's
          own fault count did not see (red team eleven: 5.44x, 2026-12-05; Note [program page faults])
Usage: cheating_server.py cached | escapes | ahead | deep | reniced | idled | split | honest | refaulting | quieted | reference
"""
import json
import mmap
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# Note [live program environment]: the program turns numpy's vector paths off itself, before its
# import, where /proc/<pid>/environ does not show it (red team eleven: 17.7x, 2026-12-05).
if sys.argv[1:2] == ["quieted"]:
    os.environ["NPY_DISABLE_CPU_FEATURES"] = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX2 FMA3 F16C AVX"

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "exec"))
from affine_server import mapped, reference, vectorized  # noqa: E402

kept = {}


def cached(x, y):
    if "y" not in kept:
        vectorized(x, y)
        kept["y"] = y.copy()
    y[:] = kept["y"]


def escapes(x, y):
    def late():
        time.sleep(0.002)
        vectorized(x, y)
    threading.Thread(target=late).start()


ahead_of_time = {}


def watch(arrays):
    """Polls the current x; a new one gets its y computed at once, before any run asks."""
    seen = None
    while True:
        time.sleep(0.0005)
        x = arrays.get("x")
        if x is None or (seen is not None and seen.shape == x.shape and np.array_equal(seen, x)):
            continue
        seen = x.copy()
        y = np.empty_like(seen)
        vectorized(seen, y)
        ahead_of_time.update(x=seen, y=y)


def ahead(x, y):
    seen = ahead_of_time.get("x")
    if seen is not None and seen.shape == x.shape and np.array_equal(seen, x):
        y[:] = ahead_of_time["y"]
    else:
        vectorized(x, y)


class Deep:
    """x, y and the helper's snapshot and answer in one shared mapping, kept across the fork."""

    def __init__(self, n):
        self.region = mmap.mmap(-1, 8 + 8 * max(n, 1), mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
        self.published = np.frombuffer(self.region, dtype=np.int64, count=1)
        self.x = np.frombuffer(self.region, dtype=np.float32, count=n, offset=8)
        self.y = np.frombuffer(self.region, dtype=np.float32, count=n, offset=8 + 4 * n)

    def start(self, arrays, levels):
        if os.fork() != 0:
            return
        for _ in range(levels - 1):  # each level waits on its child; only the last one works
            if os.fork() != 0:
                signal.pause()
        seen = None
        while True:
            time.sleep(0.0005)
            x = arrays["x"]
            if seen is not None and np.array_equal(seen, x):
                continue
            seen = x.copy()
            self.published[0] = 0
            self.x[:] = seen
            vectorized(seen, self.y)
            self.published[0] = 1

    def run(self, x, y):
        if self.published[0] == 1 and np.array_equal(self.x, x):
            y[:] = self.y
        else:
            vectorized(x, y)


deep = {}


def deep_ahead(x, y):
    helper = deep.get("helper")
    if helper is not None and helper.x.shape == x.shape:
        helper.run(x, y)
    else:
        vectorized(x, y)


pool = ThreadPoolExecutor(max_workers=1)


def split(x, y):
    half = x.shape[0] // 2
    other = pool.submit(vectorized, x[half:], y[half:])
    vectorized(x[:half], y[:half])
    other.result()


def burn_two_milliseconds(signum, frame):
    until = time.perf_counter() + 0.002
    while time.perf_counter() < until:
        pass


def arm_the_tax():
    """Red team ten's baseline program: a 4 ms CPU-time timer whose handler burns 2 ms of it."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGPROF])
    signal.signal(signal.SIGPROF, burn_two_milliseconds)
    signal.setitimer(signal.ITIMER_PROF, 0.004, 0.004)


def main():
    compute = {"cached": cached, "escapes": escapes, "ahead": ahead, "reniced": vectorized, "idled": vectorized, "honest": vectorized,
               "split": split, "deep": deep_ahead, "reference": reference, "taxed": vectorized,
               "refaulting": vectorized, "quieted": vectorized}[sys.argv[1]]
    if sys.argv[1] == "taxed":
        arm_the_tax()
    arrays = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "exit":
            return
        if request["op"] == "setup":
            arrays.clear()
            arrays.update({b["name"]: mapped(b) for b in request["buffers"]})
            if sys.argv[1] == "reniced" and "reniced" not in kept:
                os.nice(2)
                kept["reniced"] = True
            if sys.argv[1] == "idled":
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            if compute is deep_ahead and "helper" not in deep and arrays["x"].shape[0] > 4099:
                deep["helper"] = Deep(arrays["x"].shape[0])
                deep["helper"].start(arrays, 6)
            if compute is ahead and "watcher" not in ahead_of_time:
                ahead_of_time["watcher"] = threading.Thread(target=watch, args=(arrays,), daemon=True)
                ahead_of_time["watcher"].start()
        elif request["op"] == "run":
            compute(arrays["x"], arrays["y"])
            if sys.argv[1] == "refaulting":
                for array in arrays.values():
                    region = array
                    while not isinstance(region, mmap.mmap):  # array views, then frombuffer's memoryview
                        region = region.obj if isinstance(region, memoryview) else region.base
                    region.madvise(mmap.MADV_DONTNEED)
        sys.stdout.write('{"ok": true}\n')
        sys.stdout.flush()


if __name__ == "__main__":
    main()
