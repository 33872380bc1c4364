"""A pair file that crashes the interpreter while it is imported (as a broken extension module
would): the judge must say so in one line (Note [plugin load probe])."""
import os
import signal

import aisp  # noqa: F401

os.kill(os.getpid(), signal.SIGSEGV)
