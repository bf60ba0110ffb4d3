"""This checkout's reader of the kernel's TCP times (``arena/server/receive_clock.py``),
loaded by its path.

The benchmarks measure a server that may be an older arena (``PYTHONPATH=<checkout>``: a
baseline run), one without that module; what the bench itself measures with (the bots'
traces, the tick) must not depend on the arena under test. The module uses the standard
library only, so it loads on its own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PATH = Path(__file__).resolve().parents[1] / "arena" / "server" / "receive_clock.py"
NAME = "bench_receive_clock"


def receive_clock() -> ModuleType:
    """``arena.server.receive_clock`` of this checkout, whatever ``arena`` is importable."""
    module = sys.modules.get(NAME)
    if module is None:
        spec = importlib.util.spec_from_file_location(NAME, PATH)
        assert spec is not None and spec.loader is not None, PATH
        module = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = module  # before running it: its dataclasses look it up
        spec.loader.exec_module(module)
    return module
