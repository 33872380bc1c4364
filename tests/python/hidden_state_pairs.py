"""Note [worker state], Note [watched python state]: red team eight's baselines, slowed by process-wide
settings the first probes did not see (2026-12-04).

py_state:probes_spoofed                 module code replaces torch's getter and the bridge's readers,
                                        then the baseline's setup turns oneDNN off
py_state:onednn_off_inside_each_call    the baseline turns oneDNN off as each call starts and back on
                                        as it returns (13.4x for a red team)
py_state:baseline_rebinds_gelu          the baseline's setup rebinds torch.nn.functional.gelu to a
                                        slower form of the same function
py_state:threshold_just_above_the_probe the baseline's setup sets glibc's mmap and trim thresholds to
                                        1.5 MiB, above the 1 MiB probe: its 2 MiB temporaries are fresh
                                        mappings (3.56x for a red team)
py_state:baseline_perturbs_allocations  the baseline's setup calls mallopt(M_PERTURB): every block
                                        handed out and taken back is filled
py_state:declared_switch_in_calls       the same, with the pair declaring why: passes worker-state
py_state:both_without_onednn           both variants' setups turn oneDNN off: the baseline still fails
py_state:baseline_quiets_the_collector  the baseline's setup disables the collector and raises its
                                        thresholds (as timeit does): faster, not a handicap; passes
py_state:baseline_sets_the_cpu_capability the baseline's setup sets ATEN_CPU_CAPABILITY=default:
                                        unvectorized kernels (red team nine: 1.35x)
py_state:baseline_enters_a_function_mode the baseline's setup enters a pass-through TorchFunctionMode
                                        and never leaves it (1.55x)
py_state:baseline_samples_itself         the baseline's setup calls perf_event_open: the sandbox
                                        refuses it (2.1x with a real sampler)
py_state:baseline_leaves_the_profiler_on the baseline's setup starts torch's autograd profiler and
                                        never stops it (red team ten: 2.57x)
py_state:baseline_widens_the_default_dtype the baseline's setup sets the default dtype to float64 and
                                        puts back torch.Storage (1.89x)
py_state:baseline_pins_a_thread          the baseline's setup pins a thread of its worker to one CPU
                                        (red team twelve pinned torch's pool: 2.73x): scheduling-change
py_state:baseline_caps_onednn_isa       the baseline's setup caps oneDNN's instruction set through its C
                                        API (red team twelve: 2.33x): the worker's first reading has
                                        fixed it, so the cap is refused (raises here if it took)
py_state:baseline_traces_allocations    the baseline's setup starts tracemalloc, 64 frames a traceback
                                        (red team thirteen: 1.44x)
py_state:baseline_monitors_its_calls    the baseline's setup turns on sys.monitoring's call events under
                                        the profiler's tool id and frees the id (Python 3.12 on only)
py_state:baseline_keeps_the_jit_profiling the baseline's setup keeps TorchScript's executor in its
                                        profiling runs (_jit_set_num_profiled_runs; red team thirteen:
                                        1.28x)
py_state:baseline_traces_from_c         the baseline's setup sets a trace function from C with no object
                                        (PyEval_SetTrace through ctypes: sys.gettrace() reads None;
                                        red team eighteen: 3.60x)
py_state:baseline_profiles_from_c       the same with PyEval_SetProfile (2.56x)
py_state:baseline_replaces_a_kernel     the baseline's setup registers a slower Python CPU kernel for
                                        aten::mul.out (torch.library; red team eighteen: 1.43x)
Each optimized variant is the same code, untouched: it must pass worker-state.
"""
import ctypes
import math
import os
import sys
import threading
import tracemalloc
import warnings

import torch
import torch.nn.functional as F

import aisp
import aisp._bridge

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_PERTURB = -6

# Module code every variant shares: the spoof the first probes fell for.
torch._C._get_mkldnn_enabled = lambda: True
aisp._bridge.state_watch = lambda: None


def eager_pair(name, summary, setup, op=lambda x: torch.exp(x) * 2 + 1):
    made = aisp.pair(name, summary=summary, device="cpu")
    made.sizes(benchmark={"n": 1 << 19}, validation=[{"n": 7}, {"n": 1000}], held_out=[{"n": 333}])
    made.input("x", ["n"], torch.float32)
    made.output("y", ["n"], torch.float32)
    made.work(lambda s: aisp.work(bytes=8 * s["n"], flops=8 * s["n"]))

    @made.reference
    def reference(x, y):
        y.copy_(op(x))

    @made.variant("baseline", summary="the same code, in a worker its setup slowed", setup=setup)
    def baseline(x, y):
        y.copy_(op(x))

    @made.variant("optimized", summary="the same code")
    def optimized(x, y):
        y.copy_(op(x))

    return made


def onednn_off():
    torch.backends.mkldnn.enabled = False


def conv_pair(name, baseline_summary, baseline, setup=None, optimized_setup=None):
    made = aisp.pair(name, summary="a 3x3 convolution", device="cpu")
    made.sizes(benchmark={"b": 2, "c": 16, "hw": 32, "three": 3}, validation=[{"b": 1, "c": 4, "hw": 8, "three": 3}],
               held_out=[{"b": 1, "c": 3, "hw": 9, "three": 3}])
    made.input("x", ["b", "c", "hw", "hw"], torch.float32)
    made.input("w", ["c", "c", "three", "three"], torch.float32)
    made.output("y", ["b", "c", "hw", "hw"], torch.float32)
    made.work(lambda s: aisp.work(bytes=8 * s["b"] * s["c"] * s["hw"] ** 2, flops=18 * s["b"] * s["c"] ** 2 * s["hw"] ** 2))

    @made.reference
    def reference(x, w, y):
        y.copy_(F.conv2d(x, w, padding=1))

    made.variant("baseline", summary=baseline_summary, setup=setup)(baseline)

    @made.variant("optimized", summary="the same F.conv2d", setup=optimized_setup)
    def optimized(x, w, y):
        y.copy_(F.conv2d(x, w, padding=1))

    return made


def plain_conv(x, w, y):
    y.copy_(F.conv2d(x, w, padding=1))


conv_pair("py_state:probes_spoofed", "F.conv2d, with oneDNN turned off by its setup", plain_conv, setup=onednn_off)


def onednn_off_while_called(fn):
    def called(*args, **named):
        torch.backends.mkldnn.enabled = False
        try:
            return fn(*args, **named)
        finally:
            torch.backends.mkldnn.enabled = True
    return called


conv_pair("py_state:onednn_off_inside_each_call", "F.conv2d, oneDNN off only while it runs",
          onednn_off_while_called(plain_conv))

# The honest form: the pair says why its calls turn the switch (as F.ctc_loss under
# cudnn.flags(enabled=False) must); the baseline is not judged on it.
conv_pair("py_state:declared_switch_in_calls", "F.conv2d, oneDNN off while it runs, declared",
          onednn_off_while_called(plain_conv)).switches_in_calls("the baseline is the native convolution, oneDNN off")


# Both variants without oneDNN: still a handicapped baseline (a candidate that never needed
# oneDNN would be compared with a convolution slowed for it).
conv_pair("py_state:both_without_onednn", "F.conv2d, oneDNN off by its setup", plain_conv, setup=onednn_off,
          optimized_setup=onednn_off)


def slow_gelu(x, approximate="none"):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def rebind_gelu():
    F.gelu = slow_gelu


eager_pair("py_state:baseline_rebinds_gelu", "y = gelu(x)", rebind_gelu, op=lambda x: F.gelu(x))


def threshold_just_above_the_probe():
    libc = ctypes.CDLL(None)
    libc.mallopt(M_TRIM_THRESHOLD, 3 << 19)  # 1.5 MiB: the 1 MiB probe block is never trimmed
    libc.mallopt(M_MMAP_THRESHOLD, 3 << 19)  # 1.5 MiB: the probe block stays on the heap, 2 MiB temporaries do not


eager_pair("py_state:threshold_just_above_the_probe", "y = exp(x) * 2 + 1, its temporaries 2 MiB",
           threshold_just_above_the_probe)


def perturb_allocations():
    ctypes.CDLL(None).mallopt(M_PERTURB, 0x55)


eager_pair("py_state:baseline_perturbs_allocations", "y = exp(x) * 2 + 1, its temporaries 2 MiB", perturb_allocations)


def quiet_the_collector():
    import gc
    gc.disable()
    gc.set_threshold(100000, 50, 50)


# Honest: steadier timings, as timeit takes them; only the baseline's own time gains.
eager_pair("py_state:baseline_quiets_the_collector", "y = exp(x) * 2 + 1", quiet_the_collector)


def lower_the_cpu_capability():
    import os
    os.environ["ATEN_CPU_CAPABILITY"] = "default"  # read once, at ATen's first dispatch: after this


eager_pair("py_state:baseline_sets_the_cpu_capability", "y = exp(x) * 2 + 1", lower_the_cpu_capability)


def enter_a_function_mode():
    from torch.overrides import TorchFunctionMode

    class PassThrough(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    PassThrough().__enter__()  # never left


eager_pair("py_state:baseline_enters_a_function_mode", "y = exp(x) * 2 + 1", enter_a_function_mode)


def open_a_sampler():
    import ctypes
    perf_event_open = 298  # x86-64
    ctypes.CDLL(None).syscall(perf_event_open, None, 0, -1, -1, 0)


eager_pair("py_state:baseline_samples_itself", "y = exp(x) * 2 + 1", open_a_sampler)


def start_the_profiler():
    if not torch.autograd._profiler_enabled():  # setup() runs at every size
        torch.autograd.profiler.profile(record_shapes=True).__enter__()  # never left


eager_pair("py_state:baseline_leaves_the_profiler_on", "y = exp(x) * 2 + 1", start_the_profiler)


def widen_the_default_dtype():
    storage = torch.Storage
    torch.set_default_dtype(torch.float64)
    torch.Storage = storage  # put back the one watched attribute the call changes


eager_pair("py_state:baseline_widens_the_default_dtype", "y = exp(x) * 2 + arange", widen_the_default_dtype,
           op=lambda x: torch.exp(x) * 2 + (torch.arange(x.shape[0]) / x.shape[0]).to(x.dtype))


def pin_a_thread():
    pinned, parked = threading.Event(), threading.Event()

    def pin_myself_and_park():  # as each thread of an OpenMP team can (GOMP_parallel through ctypes)
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        pinned.set()
        parked.wait()

    threading.Thread(target=pin_myself_and_park, daemon=True).start()
    pinned.wait()


eager_pair("py_state:baseline_pins_a_thread", "y = exp(x) * 2 + 1", pin_a_thread)

DNNL_CPU_ISA_SSE41 = 0x1


def cap_onednn_isa():
    try:
        onednn = ctypes.CDLL("libdnnl.so.2")
    except OSError:
        return  # torch's oneDNN is not a library of its own here (pip wheels link it in)
    if onednn.dnnl_set_max_cpu_isa(DNNL_CPU_ISA_SSE41) == 0:
        raise RuntimeError("oneDNN took the instruction-set cap: the worker's first reading did not fix it")


conv_pair("py_state:baseline_caps_onednn_isa", "F.conv2d, oneDNN capped at SSE4.1 by its setup", plain_conv,
          setup=cap_onednn_isa)


def trace_allocations():
    if not tracemalloc.is_tracing():  # setup() runs at every size
        tracemalloc.start(64)


eager_pair("py_state:baseline_traces_allocations", "y = exp(x) * 2 + 1", trace_allocations)


def monitor_its_calls():
    monitoring = sys.monitoring
    tool = monitoring.PROFILER_ID
    if monitoring.get_events(tool):
        return
    monitoring.use_tool_id(tool, "a baseline's own profiler")
    events = monitoring.events.PY_START | monitoring.events.CALL
    for event in (monitoring.events.PY_START, monitoring.events.CALL):
        monitoring.register_callback(tool, event, lambda *args: None)
    monitoring.set_events(tool, events)
    monitoring.free_tool_id(tool)  # its events stay on


if hasattr(sys, "monitoring"):
    eager_pair("py_state:baseline_monitors_its_calls", "y = exp(x) * 2 + 1", monitor_its_calls)


def keep_the_jit_profiling():
    torch._C._jit_set_num_profiled_runs(10 ** 9)


eager_pair("py_state:baseline_keeps_the_jit_profiling", "y = exp(x) * 2 + 1", keep_the_jit_profiling)


# Note [C-level hooks]: a trace or profile function set from C with no object, which
# sys.gettrace() and sys.getprofile() read as None (red team eighteen: 3.60x and 2.56x).
_C_HOOK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)(lambda *args: 0)


def trace_from_c():
    ctypes.pythonapi.PyEval_SetTrace(_C_HOOK, None)


def profile_from_c():
    ctypes.pythonapi.PyEval_SetProfile(_C_HOOK, None)


eager_pair("py_state:baseline_traces_from_c", "y = exp(x) * 2 + 1", trace_from_c)
eager_pair("py_state:baseline_profiles_from_c", "y = exp(x) * 2 + 1", profile_from_c)


# Note [replaced kernels]: the baseline's setup replaces the CPU kernel of aten::mul.out with a
# slower Python one (red team eighteen: 1.43x); torch.mul stays the same object.
_replaced = []


def replace_a_kernel():
    if _replaced:  # setup() runs at every size; a kernel is registered once
        return
    library = torch.library.Library("aten", "IMPL")

    def slower_mul(x, other, out):
        out.copy_(torch.mul(x, other).clone())
        return out

    with warnings.catch_warnings():  # torch warns that it overrides a kernel
        warnings.simplefilter("ignore")
        library.impl("mul.out", slower_mul, "CPU")
    _replaced.append(library)


eager_pair("py_state:baseline_replaces_a_kernel", "y = exp(x) * 2 + 1", replace_a_kernel)
