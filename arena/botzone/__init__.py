"""Botzone bots in arena seats, unmodified (docs/botzone.md).

A Botzone Tractor bot speaks JSON on stdin/stdout (botzone.org.cn); this package runs
one as an arena client: :mod:`.cards` maps arena's cards to Botzone's ids, :mod:`.table`
turns arena's requests into Botzone's (sans-IO), :mod:`.process` runs the bot in either
process mode, :mod:`.seat` is the gRPC client, :mod:`.spec` the ``botzone:CMD`` form and
:mod:`.preset` the ``--rules botzone`` variants.
"""

from arena.botzone.spec import is_botzone, seat_argv, seat_command

__all__ = ["is_botzone", "seat_argv", "seat_command"]
