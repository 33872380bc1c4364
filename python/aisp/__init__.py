"""Declare benchmark pairs in Python for aisp's judge (docs/python_pairs.md).

A pair file declares pairs; `aisp bench run --python FILE` judges them with every check the
C++ pairs get. The harness owns every buffer: a variant receives views of them as torch
tensors (keyword arguments named like the buffers) and writes its outputs in place.

    import aisp, torch

    p = aisp.pair("mine:scale_add", summary="y = 2x + 1", device="cpu")
    p.sizes(benchmark={"n": 1 << 22}, validation=[{"n": 1000}, {"n": 4097}], held_out=[{"n": 333}])
    p.input("x", ["n"], torch.float32)
    p.output("y", ["n"], torch.float32)
    p.work(lambda s: aisp.work(bytes=8 * s["n"], flops=2 * s["n"]))

    @p.reference                     # fp64 views of the same buffers
    def reference(x, y):
        y.copy_(2 * x + 1)

    @p.variant("baseline", summary="two eager ops")
    def baseline(x, y):
        torch.add(torch.mul(x, 2), 1, out=y)

    @p.variant("optimized", summary="one fused op")
    def optimized(x, y):
        torch.addcmul(torch.ones_like(x), x, torch.full_like(x, 2), out=y)

A function that also takes `sizes` gets the workload's sizes (a dict); a variant with a
`setup` gets what setup returned as `state`.
"""

_PAIRS = []

_DTYPES = {  # torch dtype name -> aisp dtype name
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
    "int32": "i32", "int64": "i64", "uint8": "u8", "int8": "i8",
    "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2",
}
_INITS = ("uniform_signed", "uniform_unit", "small_integers", "index_permutation")


class DeclarationError(ValueError):
    """A pair file declared something aisp cannot judge; the message says what."""


def work(bytes=0, flops=0):
    """The work one call must do: the fewest bytes through memory and the FLOPs."""
    return {"bytes": float(bytes), "flops": float(flops)}


def _dtype_name(dtype):
    name = str(dtype).replace("torch.", "")
    if name not in _DTYPES:
        raise DeclarationError(f"dtype {dtype} is not one aisp knows ({', '.join(sorted(_DTYPES))})")
    return _DTYPES[name]


class pair:
    """One baseline/optimized pair: its sizes, buffers, work, reference and variants."""

    def __init__(self, target, summary="", device="cpu"):
        if ":" not in target:
            raise DeclarationError(f"target '{target}' needs a group: 'group:name'")
        if device not in ("cpu", "cuda"):
            raise DeclarationError(f"{target}: device must be 'cpu' or 'cuda', not '{device}'")
        self.target, self.summary, self.device = target, summary, device
        self._sizes = None
        self._buffers = []
        self._work = None
        self._reference = None
        self._variants = []
        self._tolerance = None
        self._exact = False
        self._fixed_inputs = ""
        self._threads = 1
        self._threads_reason = ""
        self._subprocesses = ""
        self._switches = ""
        self._goal = "speed"
        _PAIRS.append(self)

    def sizes(self, benchmark, validation, held_out=()):
        """The benchmark size, validation sizes (include ragged ones) and held-out sizes."""
        self._sizes = {"benchmark": dict(benchmark), "validation": [dict(v) for v in validation],
                       "held_out": [dict(h) for h in held_out]}
        return self

    def _buffer(self, role, name, dims, dtype, init="uniform_signed"):
        if init not in _INITS:
            raise DeclarationError(f"{self.target}: input '{name}': init must be one of {', '.join(_INITS)}")
        if isinstance(dims, str):
            dims = [dims]
        self._buffers.append({"name": name, "role": role, "dims": list(dims), "dtype": _dtype_name(dtype), "init": init})
        return self

    def input(self, name, dims, dtype, init="uniform_signed"):
        """An input of prod(sizes[d] for d in dims) elements, filled by the harness."""
        return self._buffer("input", name, dims, dtype, init)

    def output(self, name, dims, dtype):
        """An output the variants write; the harness poisons it before calls."""
        return self._buffer("output", name, dims, dtype)

    def work(self, fn):
        """fn(sizes) -> aisp.work(bytes=..., flops=...)."""
        self._work = fn
        return self

    def tolerance(self, rtol, atol, reason, max_rel_l2=0.0):
        """A tolerance other than the dtype's default, with the reason it is right. max_rel_l2 bounds
        the relative L2 error (at most 0.16); left 0, it is rtol, at least the dtype's default."""
        self._tolerance = {"rtol": rtol, "atol": atol, "max_rel_l2": max_rel_l2, "reason": reason}
        return self

    def exact_math(self):
        """The math is exact on small integers: outputs are also compared bitwise."""
        self._exact = True
        return self

    def fixed_inputs(self, reason):
        """Every timed call keeps the same inputs (say why)."""
        self._fixed_inputs = reason
        return self

    def goal(self, what):
        """What the verdict judges: "speed" (the median call, the default), "memory" (the bytes a
        call needs), "latency" (the p99 of single calls, with p50 and p99 reported) or
        "throughput" (calls per second)."""
        if what not in ("speed", "memory", "latency", "throughput"):
            raise DeclarationError(f"{self.target}: goal must be speed, memory, latency or throughput, not '{what}'")
        self._goal = what
        return self

    def allow_subprocesses(self, reason):
        """Let the workers start processes (say why): torch.compile runs Triton's ptxas, and its
        compile workers unless TORCHINDUCTOR_COMPILE_THREADS=1. Any process still alive when a
        verified call returns fails the pair (child-process, L5); the reason is in the results."""
        if not reason:
            raise DeclarationError(f"{self.target}: allow_subprocesses needs a reason")
        self._subprocesses = reason
        return self

    def switches_in_calls(self, reason):
        """The variants turn torch's backend switches inside their calls, and why ("cuDNN's CTC
        loss is nondeterministic: F.ctc_loss runs under cudnn.flags(enabled=False)"). Without
        it, a baseline that turns oneDNN or cuDNN off (or a deterministic mode on), even only
        while it runs, fails worker-state (Note [watched python state]). The reason is in the
        results."""
        if not reason:
            raise DeclarationError(f"{self.target}: switches_in_calls needs a reason")
        self._switches = reason
        return self

    def threads(self, count, reason=None):
        """torch's intra-op threads in the workers (default 1: host timings are one core's).
        More is declared with the pair (Note [declared threads]): the other threads may then use
        up to count - 1 timed spans of CPU, and their spinning after a call is not a late write;
        beyond that, worker-CPU (L5) still reads them as a helper's. The reason is in the results."""
        count = int(count)
        if count < 1:
            raise DeclarationError(f"{self.target}: threads() wants 1 or more, not {count}")
        self._threads = count
        self._threads_reason = reason or f"torch intra-op threads: torch.set_num_threads({count})"
        return self

    def reference(self, fn):
        """Decorator: the fp64 truth, fn(**buffers) on float64 CPU tensors."""
        self._reference = fn
        return fn

    MATH_UNITS = ("fp32_simt", "tf32_tensor", "fp16_tensor", "bf16_tensor", "fp8_tensor")

    def variant(self, name, summary="", setup=None, teardown=None, math="fp32_simt", threads=None, precision="",
                tolerance=None):
        """Decorator: a timed variant, fn(**buffers), named baseline, optimized,
        optimized_<step> or peer_<library>; setup() (untimed) returns its `state`. `math`: the
        unit whose peak bounds its FLOP/s for SOL and the physics gate (a bf16 matmul on tensor
        cores: "bf16_tensor"); the audit checks it against the kernels that ran. `threads`: the
        intra-op threads of this variant where fewer than the pair's threads() (a serial baseline
        beside a parallel candidate); each variant is held to using the threads it declares
        (Note [declared threads used]). `precision`: what this variant computes in where the
        baseline's differs ("bf16 matmul, fp32 accumulate"), with `tolerance` = (rtol, atol,
        reason) or (rtol, atol, reason, max_rel_l2) for its outputs; without it a candidate is held
        to the baseline's accuracy (Note [accuracy against the baseline])."""
        if callable(name):  # @p.variant without its parentheses: the function came as the name
            raise DeclarationError(f"{self.target}: @p.variant needs its name, with parentheses: @p.variant(\"baseline\")")
        if math not in self.MATH_UNITS:
            raise DeclarationError(f"{self.target}: variant {name}: math must be one of {', '.join(self.MATH_UNITS)}, not '{math}'")
        if threads is not None and (int(threads) != threads or threads < 1):
            raise DeclarationError(f"{self.target}: variant {name}: threads must be a whole number of 1 or more, not {threads!r}")
        if tolerance is not None and not precision:
            raise DeclarationError(f"{self.target}: variant {name}: a tolerance comes with the precision it is for (precision=...)")
        if tolerance is not None and (not isinstance(tolerance, (tuple, list)) or len(tolerance) not in (3, 4)):
            raise DeclarationError(f"{self.target}: variant {name}: tolerance must be (rtol, atol, reason) or (rtol, atol, reason, max_rel_l2)")
        declared_tolerance = None if tolerance is None else {
            "rtol": tolerance[0], "atol": tolerance[1], "reason": tolerance[2],
            "max_rel_l2": tolerance[3] if len(tolerance) == 4 else 0.0}
        def register(fn):
            self._variants.append({"name": name, "summary": summary, "run": fn, "setup": setup, "teardown": teardown,
                                   "math": math, "threads": int(threads) if threads is not None else None,
                                   "precision": precision, "tolerance": declared_tolerance})
            return fn
        return register

    def _describe(self):
        missing = [what for what, there in (("sizes()", self._sizes), ("work()", self._work),
                                            ("a @reference", self._reference), ("variants", self._variants)) if not there]
        if missing:
            raise DeclarationError(f"{self.target}: missing {', '.join(missing)}")
        return {"target": self.target, "summary": self.summary, "backend": "host" if self.device == "cpu" else "cuda",
                "sizes": self._sizes, "buffers": self._buffers, "tolerance": self._tolerance,
                "exact_math": self._exact, "fixed_inputs": self._fixed_inputs, "threads": self._threads,
                "threads_reason": self._threads_reason if self._threads > 1 else "",
                "goal": self._goal, "subprocesses": self._subprocesses, "switches": self._switches,
                "variants": [{"name": v["name"], "summary": v["summary"], "math": v["math"], "threads": v["threads"] or 0,
                              "precision": v["precision"], "tolerance": v["tolerance"]}
                             for v in self._variants]}
