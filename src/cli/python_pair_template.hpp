// The skeleton `aisp new pair --python` writes: a PyTorch pair file that passes `bench verify`
// as written (docs/tutorial.md, section 5). {target} and {name} are filled in.
#pragma once

namespace aisp::cli {

constexpr const char* python_pair_template = R"("""{target}: TODO one line: what the pair computes.

Baseline: TODO the first version a competent engineer writes.
Optimized: TODO what changed, and why it is faster (the napkin math).
Run: aisp bench verify --python {name}.py
     aisp bench run    --python {name}.py
"""
import torch

import aisp

p = aisp.pair("{target}", summary="TODO one line for `bench list-targets`",
              device="cpu")  # TODO "cuda" for a GPU pair
# TODO sizes: the benchmark size is timed; validation and held-out sizes are checked against the
# reference. Keep odd sizes among them: they find tails.
p.sizes(benchmark={{"n": 1 << 22}}, validation=[{{"n": 1}}, {{"n": 1001}}], held_out=[{{"n": 65537}}])
# TODO buffers, shaped by named sizes: inputs get fresh random values before every call.
p.input("x", ["n"], torch.float64)
p.output("y", ["n"], torch.float64)
# TODO the work one call does: bytes moved and FLOPs, for the speed of light.
p.work(lambda s: aisp.work(bytes=16 * s["n"], flops=s["n"]))


@p.reference  # TODO the right answer; it sees float64 views of the same buffers
def reference(x, y):
    y.copy_(2 * x)


@p.variant("baseline", summary="TODO what it is")
def baseline(x, y):  # the harness owns the buffers: write the outputs in place
    torch.mul(x, 2, out=y)


@p.variant("optimized", summary="TODO what changed")
def optimized(x, y):
    torch.add(x, x, out=y)
)";

}  // namespace aisp::cli
