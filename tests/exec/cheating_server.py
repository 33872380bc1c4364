#!/usr/bin/env python3
"""Planted cheats through --exec (issue 20): the judge must catch them as it does the lab's.

cached    computes y on its first call, then writes that same y back on every call (O2)
escapes   replies "ok" at once and writes y from a thread afterwards, outside the timed call:
          a host program's stream escape (Note [late writes])
Usage: cheating_server.py cached | escapes | honest | reference
"""
import json
import os
import sys
import threading
import time

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


def main():
    compute = {"cached": cached, "escapes": escapes, "honest": vectorized, "reference": reference}[sys.argv[1]]
    arrays = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "exit":
            return
        if request["op"] == "setup":
            arrays = {b["name"]: mapped(b) for b in request["buffers"]}
        elif request["op"] == "run":
            compute(arrays["x"], arrays["y"])
        sys.stdout.write('{"ok": true}\n')
        sys.stdout.flush()


if __name__ == "__main__":
    main()
