"""``arena serve`` tunes its garbage collector once it listens (arena/server/gc_policy.py):
a real server in its own process reports its frozen objects and thresholds."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from arena.server import gc_policy

# a real server in a fresh interpreter (the settings are process-wide: not in pytest's)
PROBE = textwrap.dedent(
    """
    import gc, trio
    from arena.server.app import open_arena_server

    async def main():
        before = gc.get_freeze_count()
        async with open_arena_server(settle_gc=True):
            print(before, gc.get_freeze_count(), *gc.get_threshold())

    trio.run(main)
    """
)


def test_a_server_settles_its_collector_once_listening() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    before, frozen, *threshold = (int(x) for x in done.stdout.split())
    assert before == 0
    assert frozen > 10_000  # the modules, classes and the server's long-lived objects
    assert tuple(threshold) == (gc_policy.YOUNG, gc_policy.MIDDLE, gc_policy.FULL)
