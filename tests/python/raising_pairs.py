"""A variant that raises in run(): the variant fails with the message, the judge goes on."""
from copy_pair import copy_pair

p = copy_pair("py_errors:raises", "the optimized variant raises")


@p.variant("optimized", summary="raises")
def optimized(x, y):
    raise ValueError("optimized variant gave up")
