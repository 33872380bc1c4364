"""A pair without a held-out size breaks the contract (V8): the error names this file."""
from copy_pair import copy_pair

copy_pair("py_errors:no_held_out", "no held-out size", held_out=False)
