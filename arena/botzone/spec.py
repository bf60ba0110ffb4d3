"""``botzone:CMD`` — a Botzone bot wherever arena takes a bot command.

``botzone:python3 my_bot.py`` runs ``arena botzone-seat -- python3 my_bot.py`` in the
seat's place (it finds the server and token in ``ARENA_SERVER``/``ARENA_TOKEN`` like any
bot). Options go in brackets before the colon, comma-separated:
``botzone[globaldata=state/my_bot.json,simple]:python3 my_bot.py``.
"""

from __future__ import annotations

import shlex
import sys

OPTIONS = {"simple": "--simple", "verbose": "--verbose", "globaldata": "--globaldata"}


def is_botzone(command: str) -> bool:
    return command.startswith(("botzone:", "botzone["))


def seat_argv(command: str) -> list[str]:
    """The ``arena botzone-seat`` command line for a ``botzone:`` seat.

    Raises:
        ValueError: an unknown option, or no bot command after the colon.
    """
    head, sep, cmd = (
        command.partition("]:")
        if command.startswith("botzone[")
        else ("botzone", ":", command.removeprefix("botzone:"))
    )
    if not sep or not cmd.strip():
        raise ValueError(f"{command!r}: expected botzone:CMD or botzone[OPTIONS]:CMD")
    flags: list[str] = []
    for word in filter(None, head.removeprefix("botzone").removeprefix("[").split(",")):
        key, eq, value = word.strip().partition("=")
        flag = OPTIONS.get(key)
        if flag is None or (key == "globaldata") != bool(eq and value):
            raise ValueError(
                f"{command!r}: unknown botzone option {word!r}; known: simple, verbose, "
                "globaldata=FILE"
            )
        flags += [flag, value] if eq else [flag]
    return [sys.executable, "-m", "arena.cli.main", "botzone-seat", *flags, "--", *shlex.split(cmd)]


def seat_command(command: str) -> str:
    """:func:`seat_argv` as one shell-quoted line (bot commands are lines)."""
    return shlex.join(seat_argv(command))
