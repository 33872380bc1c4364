"""What aisp's Python bridge (src/python_bridge) calls; not for pair files.

Every function takes and returns strings and never raises: an error comes back as one line
(the exception, and where in the pair file it was raised), which the harness reports.
Buffers arrive as addresses of the harness's own memory; the tensors made here are views of it.
"""

import ctypes
import importlib.util
import inspect
import json
import os
import sys
import traceback

import aisp

_TYPESTR = {"f64": "<f8", "f32": "<f4", "f16": "<f2", "bf16": "<i2", "i32": "<i4", "i64": "<i8",
            "u8": "|u1", "i8": "|i1", "e4m3": "|u1", "e5m2": "|u1"}
_ITEMSIZE = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "u8": 1, "i8": 1, "e4m3": 1, "e5m2": 1}
_TORCH_DTYPE = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32",
                "i64": "int64", "u8": "uint8", "i8": "int8", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}

_pairs = []      # the loaded pair file's pairs, in declaration order
_bindings = {}   # key -> a variant bound to the harness's buffers


def _one_line(error):
    """The exception and the innermost frame of a user's file, in one line."""
    where = ""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(os.path.dirname(__file__))]
    if frames:
        where = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})"
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text + where


def _guarded(fn):
    def call(*args):
        try:
            result = fn(*args)
            return "" if result is None else result
        except BaseException as error:  # noqa: B902: a pair's SystemExit must not end the worker
            return "error: " + _one_line(error)
    return call


@_guarded
def load(path):
    """Imports the pair file; returns its pairs' declarations as JSON."""
    import torch  # noqa: F401: a missing PyTorch is reported here, with the interpreter's name
    first = len(aisp._PAIRS)
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no pair file {path}")
    spec = importlib.util.spec_from_file_location(f"aisp_user_pairs_{first}", path)
    if spec is None:  # importlib takes only Python sources by their suffix
        raise aisp.DeclarationError(f"{path} is not a Python file: a pair file is a .py module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _pairs[:] = list(aisp._PAIRS)
    if len(_pairs) == first:
        raise aisp.DeclarationError(f"{path} declares no pair (aisp.pair(...))")
    return json.dumps({"pairs": [dict(p._describe(), index=first + i) for i, p in enumerate(_pairs[first:])]})


@_guarded
def work(pair_index, sizes_json):
    amount = _pairs[pair_index]._work(json.loads(sizes_json))
    if not isinstance(amount, dict) or "bytes" not in amount:
        raise aisp.DeclarationError("work() must return aisp.work(bytes=..., flops=...)")
    return json.dumps({"bytes": float(amount["bytes"]), "flops": float(amount.get("flops", 0.0))})


class _DeviceArray:
    """A harness buffer on the GPU, as __cuda_array_interface__ describes it."""

    def __init__(self, address, count, type_name):
        self.__cuda_array_interface__ = {"shape": (count,), "typestr": _TYPESTR[type_name],
                                         "data": (address, False), "version": 2}


def _tensor(torch, spec, device):
    address, count, type_name, shape = spec
    if device == "cuda":
        flat = torch.as_tensor(_DeviceArray(address, count, type_name), device="cuda")
    else:
        raw = (ctypes.c_byte * (count * _ITEMSIZE[type_name])).from_address(address)
        flat = torch.frombuffer(raw, dtype=torch.uint8)
    return flat.view(getattr(torch, _TORCH_DTYPE[type_name])).view(shape)


def _tensors(torch, request, device):
    return {name: _tensor(torch, spec, device) for name, spec in request["buffers"].items()}


def _caller(fn, sizes):
    accepted = set(inspect.signature(fn).parameters)
    extra = {"sizes": sizes} if "sizes" in accepted else {}
    return fn, extra, "state" in accepted


class _Binding:
    def __init__(self, torch, pair, variant, request):
        self.variant = variant
        self.sizes = request["sizes"]
        self.device = "cuda" if pair.device == "cuda" else "cpu"
        self.tensors = _tensors(torch, request, self.device)
        self.stream = torch.cuda.ExternalStream(request["stream"]) if self.device == "cuda" and request["stream"] else None
        self.state = None
        self.run, self.extra, self.takes_state = _caller(variant["run"], self.sizes)
        torch.set_num_threads(variant.get("threads") or pair._threads)  # Note [declared threads used]

    def call(self, fn, extra, with_state):
        if self.stream is None:
            return fn(**self.tensors, **extra, **({"state": self.state} if with_state else {}))
        import torch
        with torch.cuda.stream(self.stream):
            return fn(**self.tensors, **extra, **({"state": self.state} if with_state else {}))


@_guarded
def bind(key, pair_index, variant_index, request_json):
    """Binds a variant to the harness's buffers (again after the harness moved them)."""
    import torch
    pair = _pairs[pair_index]
    old = _bindings.get(key)
    binding = _Binding(torch, pair, pair._variants[variant_index], json.loads(request_json))
    if old is not None:
        binding.state = old.state
    _bindings[key] = binding


@_guarded
def setup(key):
    binding = _bindings[key]
    fn = binding.variant["setup"]
    if fn is not None:
        accepted = set(inspect.signature(fn).parameters)
        binding.state = fn(**({"sizes": binding.sizes} if "sizes" in accepted else {}))


@_guarded
def run(key):
    binding = _bindings[key]
    binding.call(binding.run, binding.extra, binding.takes_state)


@_guarded
def teardown(key):
    binding = _bindings.pop(key, None)
    if binding is not None and binding.variant["teardown"] is not None:
        binding.variant["teardown"](binding.state)


def backend_state():
    """Note [worker state]: torch's process-wide switches that change how fast (or how precisely)
    the same code runs, read by the worker outside timed windows; {} before torch is imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return "{}"
    try:
        backends = torch.backends
        state = {"mkldnn_enabled": bool(backends.mkldnn.enabled),
                 "cudnn_enabled": bool(backends.cudnn.enabled),
                 "cudnn_deterministic": bool(backends.cudnn.deterministic),
                 "cudnn_allow_tf32": bool(backends.cudnn.allow_tf32),
                 "matmul_allow_tf32": bool(backends.cuda.matmul.allow_tf32),
                 "deterministic_algorithms": bool(torch.are_deterministic_algorithms_enabled()),
                 "float32_matmul_precision_lowered": torch.get_float32_matmul_precision() != "highest"}
    except Exception as error:  # an older torch without one of them: what it has is enough
        return json.dumps({"unreadable": _one_line(error)})
    return json.dumps(state)


def interpreter_state():
    """Note [worker state]: the interpreter-wide settings every variant should run under alike:
    the garbage collector's (a red team's baseline lowered its thresholds and added a callback,
    2.8x for the same code) and the profile and trace hooks."""
    import gc
    import threading
    state = {"gc_threshold": list(gc.get_threshold()),
             "gc_enabled": gc.isenabled(),
             "gc_callbacks": len(gc.callbacks),
             "profile_hook": sys.getprofile() is not None,
             "trace_hook": sys.gettrace() is not None,
             "threading_hooks": getattr(threading, "_profile_hook", None) is not None
             or getattr(threading, "_trace_hook", None) is not None}
    return json.dumps(state)


@_guarded
def reference(pair_index, request_json):
    """The fp64 truth, on float64 CPU views of the judge's buffers."""
    import torch
    request = json.loads(request_json)
    fn, extra, _ = _caller(_pairs[pair_index]._reference, request["sizes"])
    with torch.no_grad():
        fn(**_tensors(torch, request, "cpu"), **extra)
