"""The garbage collector's settings for a long-running server process (``arena serve``:
the single server, the workers' front and each worker).

Why: at 250 concurrent matches a worker holds ~170k tracked objects, and CPython's
default thresholds (700, 10, 10) ran ~490 young, ~45 middle and ~5 full collections per
worker in a 46 s level, the middle and full ones each a pause of tens to hundreds of
milliseconds on the trio thread and, holding the GIL, on the gRPC threads too: a
decision that waits behind one is late by the whole pause (bench/remote.py's p99 cycle).
Two standard remedies, applied once start-up is over:

- :func:`gc.freeze` moves everything alive then (modules, classes, the server's own
  long-lived objects) to the permanent generation, which no collection walks again;
- a larger first threshold lets the short-lived objects of a decision (requests,
  events, views) die by reference counting before any collection has to look at them,
  so collections are fewer and each young one still short.

Reference cycles are still collected: only how often the collector runs changes.
"""

from __future__ import annotations

import gc

#: net allocations of tracked objects between young collections (CPython's default: 700)
YOUNG = 10_000
#: young collections per middle one, middle per full one (CPython's defaults)
MIDDLE, FULL = 10, 10


def settle_after_start_up() -> None:
    """Collect once, freeze what is alive, and raise the young threshold (call it once,
    after the imports and settings of a server process, before it serves)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, FULL)
