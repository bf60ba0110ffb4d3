"""arena — a referee server for bot-versus-bot Tractor (升级 / 拖拉机) matches.

Layers, each a package (arrows point only downwards)::

    cli/       arena serve | match | selfplay | judge | ...
    server/    the gRPC edge
    referee/   trio: runs matches, deadlines, time banks, faults
    records/   match records: write, read, replay, verify
    game/      sans-IO deal and match state machines, seat views
    rules/     sans-IO: cards, trump order, units, legality, scoring, bids
"""

__version__ = "0.1.0"
