#!/usr/bin/env python3
"""Peer numbers for `aisp hw`, measured through PyTorch on the same card.

Every figure here is an independent second opinion on one `aisp hw` probe: same sizes, random
inputs, timed per call with CUDA events (median of at least 20 calls, after a warm-up). Prints one
JSON object on stdout and nothing else; rates are per second and times in seconds (SI base units).
A measurement that fails records "<key>_error" and the others still run.

Run on the GPU machine: python3 scripts/peers/hw_peers.py > peers.json
"""

import json
import statistics
import sys
import warnings

import torch

GEMM_SIZE = 8192
COPY_BYTES = 1 << 30         # 1 GiB of float32: matches the `copy` probe
TRANSFER_BYTES = 256 << 20   # host <-> device transfers
GRAPH_KERNELS = 1000         # tiny kernels captured into one graph
WARMUP_CALLS = 3
TIMED_CALLS = 20


def median_seconds(fn, calls=TIMED_CALLS, warmup=WARMUP_CALLS):
    """Median duration of one fn() call, in seconds.

    The calls run back to back on the current stream and event i closes call i and opens call
    i+1, so the GPU never waits on Python between them; one synchronize at the end.
    """
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(calls + 1)]
    marks[0].record()
    for call in range(calls):
        fn()
        marks[call + 1].record()
    torch.cuda.synchronize()
    return statistics.median(marks[i].elapsed_time(marks[i + 1]) * 1e-3 for i in range(calls))


def isolated_median_seconds(fn, calls=TIMED_CALLS, warmup=WARMUP_CALLS, before=None):
    """Median duration of one fn() call timed alone: events around it, then a synchronize.

    Used for host-device copies, as `aisp hw` times them: back-to-back copies queue behind each
    other on the copy engine and the driver's staging, which measures something else. `before`
    (untimed) runs ahead of each timed call: an L2 flush for cold timings.
    """
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    seconds = []
    for _ in range(calls):
        if before is not None:
            before()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        seconds.append(start.elapsed_time(stop) * 1e-3)
    return statistics.median(seconds)


def l2_flush():
    """A call that reads twice the L2 through a scratch buffer, evicting what a timed call reads:
    `before=` of isolated_median_seconds for cold timings, as aisp times."""
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    scratch = torch.empty(2 * l2_bytes // 4 + (4 << 20), dtype=torch.float32, device="cuda").uniform_()
    sink = torch.empty((), dtype=torch.float32, device="cuda")
    return lambda: torch.sum(scratch, dim=0, out=sink)


def uniform_signed(shape, dtype=torch.float32):
    """Random values in [-1, 1) on the device: tensor cores draw less power on zeros or constants."""
    return torch.empty(shape, dtype=torch.float32, device="cuda").uniform_(-1.0, 1.0).to(dtype)


def copy_bytes_per_s():
    elements = COPY_BYTES // 4
    src = uniform_signed((elements,))
    dst = torch.empty_like(src)
    seconds = median_seconds(lambda: dst.copy_(src))
    return 2 * COPY_BYTES / seconds  # each byte read once and written once


def matmul_flops_per_s(dtype):
    a = uniform_signed((GEMM_SIZE, GEMM_SIZE), dtype)
    b = uniform_signed((GEMM_SIZE, GEMM_SIZE), dtype)
    seconds = median_seconds(lambda: torch.matmul(a, b))
    return 2 * GEMM_SIZE**3 / seconds


def fp32_matmul_flops_per_s(allow_tf32):
    # The legacy switch, as the C++ probe's peers use it; torch >= 2.9 warns that it is deprecated
    # in favour of torch.backends.cuda.matmul.fp32_precision, and the warning goes to stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        previous = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32
        try:
            return matmul_flops_per_s(torch.float32)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = previous


def fp8_flops_per_s():
    # _scaled_mm wants A row-major and B column-major ("TN" to cuBLASLt): b is a contiguous
    # (n, k) tensor passed transposed. Unit per-tensor scales; fast accumulation off (default).
    a = uniform_signed((GEMM_SIZE, GEMM_SIZE), torch.float8_e4m3fn)
    b = uniform_signed((GEMM_SIZE, GEMM_SIZE), torch.float8_e4m3fn)
    one = torch.tensor(1.0, device="cuda")
    seconds = median_seconds(
        lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
    return 2 * GEMM_SIZE**3 / seconds


def host_tensor(pinned):
    values = torch.empty(TRANSFER_BYTES // 4, dtype=torch.float32).uniform_(-1.0, 1.0)
    return values.pin_memory() if pinned else values


def h2d_bytes_per_s(pinned):
    host = host_tensor(pinned)
    device = torch.empty(host.shape, dtype=host.dtype, device="cuda")
    # non_blocking only matters when pinned; pageable copies stage through a driver buffer.
    seconds = isolated_median_seconds(lambda: device.copy_(host, non_blocking=pinned))
    return TRANSFER_BYTES / seconds


def d2h_pinned_bytes_per_s():
    host = host_tensor(pinned=True)
    device = uniform_signed(host.shape)
    seconds = isolated_median_seconds(lambda: host.copy_(device, non_blocking=True))
    return TRANSFER_BYTES / seconds


def graph_kernel_s():
    x = torch.zeros(1, device="cuda")
    # Warm up on a side stream before capture, as torch.cuda.graphs asks.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(GRAPH_KERNELS):
            x.add_(1)
    x.zero_()
    seconds = median_seconds(graph.replay)
    # Every replay really ran every kernel: warm-up and timed replays, GRAPH_KERNELS adds each.
    replays = WARMUP_CALLS + TIMED_CALLS
    if x.item() != replays * GRAPH_KERNELS:
        raise RuntimeError(f"graph replays added {x.item()}, expected {replays * GRAPH_KERNELS}")
    return seconds / GRAPH_KERNELS


MEASUREMENTS = [
    ("copy_bytes_per_s", copy_bytes_per_s),
    ("bf16_flops_per_s", lambda: matmul_flops_per_s(torch.bfloat16)),
    ("fp16_flops_per_s", lambda: matmul_flops_per_s(torch.float16)),
    ("tf32_flops_per_s", lambda: fp32_matmul_flops_per_s(allow_tf32=True)),
    ("fp8_flops_per_s", fp8_flops_per_s),
    ("fp32_flops_per_s", lambda: fp32_matmul_flops_per_s(allow_tf32=False)),
    ("h2d_pinned_bytes_per_s", lambda: h2d_bytes_per_s(pinned=True)),
    ("h2d_pageable_bytes_per_s", lambda: h2d_bytes_per_s(pinned=False)),
    ("d2h_pinned_bytes_per_s", d2h_pinned_bytes_per_s),
    ("graph_kernel_s", graph_kernel_s),
]


def one_line(error):
    text = f"{type(error).__name__}: {error}"
    return text.splitlines()[0] if text else type(error).__name__


def release_cached_memory():
    """Hands the last measurement's blocks back, so the next one allocates on an empty card."""
    try:
        torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001 -- after a sticky CUDA error; the next measurement records it
        pass


def main():
    results = {"torch_version": torch.__version__}
    try:
        results["device"] = torch.cuda.get_device_name()
    except Exception as error:  # noqa: BLE001 -- recorded, never raised
        results["device_error"] = one_line(error)
    for key, measure in MEASUREMENTS:
        try:
            results[key] = measure()
        except Exception as error:  # noqa: BLE001 -- one failure must not stop the rest
            results[f"{key}_error"] = one_line(error)
        release_cached_memory()
    json.dump(results, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
