"""Time every garbage collection of the Python processes started with this folder on
``PYTHONPATH`` (the bench's own script and its Python bots excepted): each writes a
summary per generation — collections, total, largest and median pause in ms, wall time —
to ``$GCPROBE_DIR/gc-<pid>.json`` after every full collection and every 20th one (a
worker may end by a signal, so not only at exit). How docs/architecture.md measured the
server's GC pauses at 250 matches:

    mkdir -p /tmp/gc && GCPROBE_DIR=/tmp/gc PYTHONPATH=$PWD/bench/gc_probe \\
        .venv/bin/python bench/remote.py --only b --levels 250 --workers 2 --bot cpp
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from typing import Any

_ARGV = " ".join(sys.argv)
_FOLDER = os.environ.get("GCPROBE_DIR", "")
_started = [0.0]
_pauses: list[tuple[int, float]] = []  # (generation, seconds)


def _dump() -> None:
    out: dict[str, Any] = {"argv": _ARGV[-200:], "frozen": gc.get_freeze_count(), "gens": {}}
    for generation in (0, 1, 2):
        took = sorted(s for g, s in _pauses if g == generation)
        if took:
            out["gens"][generation] = {
                "n": len(took),
                "total_ms": sum(took) * 1e3,
                "max_ms": took[-1] * 1e3,
                "p50_ms": took[len(took) // 2] * 1e3,
            }
    with open(os.path.join(_FOLDER, f"gc-{os.getpid()}.json"), "w", encoding="utf-8") as f:
        json.dump(out, f)


def _timed(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
        return
    _pauses.append((info["generation"], time.perf_counter() - _started[0]))
    if info["generation"] == 2 or len(_pauses) % 20 == 0:
        _dump()


if _FOLDER and "fallback_bot" not in _ARGV and "remote.py" not in _ARGV:
    gc.callbacks.append(_timed)
