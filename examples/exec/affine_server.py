#!/usr/bin/env python3
"""An executable pair's variants and reference in one program (docs/tutorial.md, section 6).

It speaks the executable protocol (docs/worker_protocol.md, "Executable variants"): one JSON
request a line on stdin, one reply a line on stdout. `setup` hands it the harness's buffers as
file descriptors (memfds) to map; `run` computes y = 3 x + 1 on the current inputs; `exit` (or
end of input) ends it. Usage: affine_server.py loop | numpy | reference
"""
import json
import mmap
import os
import sys

import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32}


def mapped(buffer):
    """The harness's buffer as a numpy array over the same pages (no copy)."""
    size = buffer["bytes"]
    region = mmap.mmap(buffer["fd"], max(size, 1), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    os.close(buffer["fd"])  # the mapping keeps the pages
    return np.frombuffer(region, dtype=DTYPES[buffer["dtype"]], count=buffer["elements"]).reshape(buffer["shape"])


def loop(x, y):
    for i in range(x.shape[0]):  # what a first version does: element by element
        y[i] = 3.0 * x[i] + 1.0


def vectorized(x, y):
    y[:] = x.astype(np.float64) * 3.0 + 1.0  # in float64 and rounded once, as the loop does


def reference(x, y):  # float64 buffers: the judge's fp64 reference
    y[:] = 3.0 * x + 1.0


def main():
    compute = {"loop": loop, "numpy": vectorized, "reference": reference}[sys.argv[1]]
    arrays = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "setup":
            arrays = {b["name"]: mapped(b) for b in request["buffers"]}
            reply = {"ok": True}
        elif request["op"] == "run":
            compute(arrays["x"], arrays["y"])
            reply = {"ok": True}
        elif request["op"] == "exit":
            return
        else:
            reply = {"ok": False, "message": "unknown op " + request["op"]}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
