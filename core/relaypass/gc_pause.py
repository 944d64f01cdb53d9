"""Keep Python's cyclic garbage collector out of whole-program work.

Printing, parsing and passes allocate many small objects (nodes, argument
tuples, memo entries) and form no reference cycles, yet every allocation counts
towards the collector's thresholds, so it walks the whole live program again
and again: on a 100,000-node module that is up to half the time, and it makes
the cost per node grow with the size of the program.  Pausing it loses nothing:
cycles made meanwhile are collected when it is enabled again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (nested uses are free)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
