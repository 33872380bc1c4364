"""Pairs whose workers start processes (Note [compilers in the sandbox]), for the host tests.

py_spawn:compiler_in_setup   allow_subprocesses; the optimized variant's setup runs a program to
                             its end, as torch.compile runs ptxas: allowed, judged as usual
py_spawn:undeclared          the same without allow_subprocesses: the sandbox refuses it
py_spawn:helper_outlives_run allow_subprocesses; setup leaves a process running: child-process (L5)
"""
import subprocess
import sys

import torch

from add_one_pair import add_one_pair as shared_add_one_pair


def add_one_pair(target, summary, allow):
    p = shared_add_one_pair(target, summary)
    if allow:
        p.allow_subprocesses("the optimized variant compiles its kernel with an external program")
    return p


def compile_once():
    # An external program run to its end, like ptxas: the answer is used, the process is gone.
    done = subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


def add_with(one, x, y):
    torch.add(x, one, out=y)


for target, allow in (("py_spawn:compiler_in_setup", True), ("py_spawn:undeclared", False)):
    pair = add_one_pair(target, "setup runs an external program to its end", allow)
    pair.variant("optimized", summary="an add, after an external compile in setup", setup=compile_once)(
        lambda x, y, state: add_with(state, x, y))


def start_helper():
    # A process that outlives setup: it could work outside every timed span.
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


helper = add_one_pair("py_spawn:helper_outlives_run", "setup leaves a process running", True)
helper.variant("optimized", summary="an add, with a helper process alive beside it", setup=start_helper)(
    lambda x, y, state: torch.add(x, 1, out=y))
