"""``arena serve --workers N``: matches shared out over N worker processes behind one
address (docs/workers.md).

:mod:`.ledger` (which worker hosts which match; the server-wide bounds),
:mod:`.pool` (start, watch and restart the worker processes, trio side) and
:mod:`.front` (the front's gRPC services, asyncio side). The worker process itself is
``arena.cli.serve_worker``; the front's command line ``arena.cli.serve_workers``.
"""
