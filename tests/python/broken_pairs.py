"""A pair file that fails to import: the error must name this file and line."""
import aisp

raise RuntimeError("this pair file is broken on purpose")
