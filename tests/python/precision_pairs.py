"""A float32 matmul whose candidate computes in bfloat16 (Note [accuracy against the baseline]).

py_precision:declared     the candidate declares its precision and the tolerance it is held to
py_precision:undeclared   the same candidate declaring nothing: held to the baseline's accuracy
"""
import torch

import aisp


def matmul_pair(target, declares):
    p = aisp.pair(target, summary="c = a @ b in float32", device="cpu")
    p.sizes(benchmark={"n": 256}, validation=[{"n": 7}, {"n": 64}], held_out=[{"n": 33}])
    p.input("a", ["n", "n"], torch.float32)
    p.input("b", ["n", "n"], torch.float32)
    p.output("c", ["n", "n"], torch.float32)
    p.work(lambda s: aisp.work(bytes=12 * s["n"] ** 2, flops=2 * s["n"] ** 3))

    @p.reference
    def reference(a, b, c):
        c.copy_(a @ b)

    @p.variant("baseline", summary="float32 matmul")
    def baseline(a, b, c):
        torch.matmul(a, b, out=c)

    declared = {"precision": "bf16 inputs and products, rounded to float32",
                "tolerance": (5e-2, 5e-2, "bf16 keeps 8 bits of each input: ~2^-9 relative a product, summed over n", 2e-2)}

    @p.variant("optimized", summary="the same in bfloat16", **(declared if declares else {}))
    def optimized(a, b, c):
        c.copy_(torch.matmul(a.bfloat16(), b.bfloat16()).float())

    return p


declared = matmul_pair("py_precision:declared", True)
undeclared = matmul_pair("py_precision:undeclared", False)
