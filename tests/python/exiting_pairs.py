"""A pair file that ends the process while it is imported (os._exit skips every handler): the
judge must say so in one line (Note [plugin load probe])."""
import os

import aisp  # noqa: F401

os._exit(3)
