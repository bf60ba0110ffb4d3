"""The one convention every ``arena`` command follows, in one place.

- A usage error (a bad option value, a missing argument, an unknown bot) prints one line
  on standard error — the command, the bad value and what is allowed — and exits 2.
  Argparse's own errors go through :class:`ArenaParser`; a command's later checks raise
  :class:`UsageError`.
- A runtime failure (a port in use, an unreadable file, a crash) prints one line and exits
  1; the traceback only with ``--debug`` (:func:`failure_line`).
- ``--help`` of a command that takes ``--rules`` lists every variant key with the values it
  takes, generated from :mod:`arena.rules.ruleset` (:func:`finish_commands`).
- An output folder made by default is new: two runs in the same second get two folders
  (:func:`new_folder`).

Commands added later get all of this by being registered in :mod:`arena.cli.main`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import NoReturn

from arena.errors import ArenaError


class UsageError(Exception):
    """A bad command line, found after parsing: one line on stderr, exit status 2."""


class ArenaParser(argparse.ArgumentParser):
    """Argparse, but a usage error is one line naming the problem (exit 2), not the
    whole usage block: the usage is one ``--help`` away, the message is what matters."""

    def error(self, message: str) -> NoReturn:
        message = (
            message.replace("argument ", "", 1) if message.startswith("argument ") else message
        )
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def finish_commands(sub: argparse._SubParsersAction[ArenaParser]) -> None:
    """What every subcommand gets, whoever registered it: ``--debug``, help text without
    reStructuredText markup, line breaks kept, and the rule variants under ``--help``
    when it takes ``--rules``. Nested command groups are finished too."""
    for command in sub.choices.values():
        command.set_defaults(prog=command.prog)  # "arena check-bot": what its errors say
        command.formatter_class = argparse.RawDescriptionHelpFormatter
        if command.description:  # module docstrings are reStructuredText
            command.description = command.description.replace("``", "")
        groups = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        for group in groups:  # a command group: its commands take --debug, not the group
            finish_commands(group)
        if not groups and "--debug" not in command._option_string_actions:
            command.add_argument(
                "--debug",
                action="store_true",
                help="on a failure, print the whole traceback (by default: one line)",
            )
        if "--rules" in command._option_string_actions:
            from arena.rules.ruleset import variant_help  # only the command being run's

            variants = (
                "rule variants (--rules KEY=VALUE ...; a value is JSON or a bare word, "
                'e.g. --rules decks=1 \'must_defend=["A","K"]\'):\n' + variant_help()
            )
            command.epilog = f"{command.epilog}\n\n{variants}" if command.epilog else variants


def failure_line(exc: BaseException) -> str:
    """One line for a runtime failure: the cause a user can act on, not the stack."""
    leaf = _leaf(exc)
    if isinstance(leaf, ArenaError):
        return str(leaf)
    if isinstance(leaf, OSError):
        return f"{leaf.strerror or leaf}: {leaf.filename}" if leaf.filename else str(leaf)
    text = f"internal error: {type(leaf).__name__}: {leaf}"
    if leaf.__cause__ is not None:
        text += f" ({_cause_text(leaf.__cause__)})"
    return f"{text} (run with --debug for the traceback)"


def _cause_text(cause: BaseException) -> str:
    text = str(cause).strip().splitlines()
    return text[0] if text else type(cause).__name__


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups, e.g. from trio.run."""
    trio = sys.modules.get("trio")  # only a command that ran trio can have its Cancelled
    cancelled = trio.Cancelled if trio is not None else ()
    while isinstance(exc, BaseExceptionGroup):
        real = [e for e in exc.exceptions if not isinstance(e, cancelled)]
        exc = (real or list(exc.exceptions))[0]
    return exc


def is_interrupt(exc: BaseException) -> bool:
    """A Ctrl-C, even when trio wrapped it in an exception group."""
    return isinstance(_leaf(exc), KeyboardInterrupt)


def new_folder(given: str | None, kind: str, parent: str = "records") -> Path:
    """``given`` as is (created if missing), or a new ``records/KIND-<time>`` folder: if
    that exists already (two runs in the same second), ``-2``, ``-3``, … is appended, and
    the folder is created here so that a concurrent run cannot take it too."""
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        return path
    base = Path(parent) / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}"
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise ArenaError(f"no free folder name like {base} (10,000 taken)")


def warn(command: str, message: str) -> None:
    """A one-line note on stderr that is not a failure."""
    print(f"arena {command}: {message}", file=sys.stderr, flush=True)
