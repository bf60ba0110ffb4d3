"""``arena`` starts fast: ``arena --help`` and ``arena judge`` import only what they use.

The parser registers in full only the command being run (``arena.cli.main.COMMANDS``,
a table of name, summary and module); every other command is a name and a line. These
tests run the real entry point in a fresh interpreter and read ``sys.modules``.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.main import COMMANDS, build_parser

CLI = Path(__file__).resolve().parent.parent / "arena" / "cli"
HEAVY = ("grpc", "trio", "structlog", "sqlalchemy", "msgspec", "google.protobuf", "rich")

PROBE = """
import json, sys
from arena.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def imported_by(*args: str, stdin: str = "") -> set[str]:
    """The modules loaded by ``arena ARGS`` run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY)


def test_help_imports_no_command() -> None:
    modules = imported_by("--help")
    assert heavy(modules) == []
    assert not [m for m in modules if m.startswith(("arena.cli.", "arena.rules", "arena.game"))
                if m not in ("arena.cli.main", "arena.cli.convention")]  # fmt: skip


def test_judge_imports_no_server_side() -> None:
    """The rules oracle needs the rules and msgspec, not grpc, trio or a logger."""
    question = {"id": 1, "q": "units", "cards": ["AS", "AS"], "trump": {"level": "2", "suit": "H"}}
    modules = imported_by("judge", stdin=json.dumps(question) + "\n")
    assert "arena.cli.judge" in modules
    assert heavy(modules) == ["msgspec", *sorted(m for m in modules if m.startswith("msgspec."))]


@pytest.mark.parametrize("command", ["selfplay", "replay"])
def test_a_command_imports_none_of_the_others(command: str) -> None:
    modules = imported_by(command, "--help")
    others = {c.module for c in COMMANDS if c.name != command}
    # a command may share a helper module with another (show uses replay's), not more
    assert len(others & modules) <= 1, others & modules


def test_the_table_lists_every_command_module_with_its_own_help() -> None:
    """A module with ``register`` is a command and is in COMMANDS; the summary ``arena
    --help`` shows without importing it is the help its own parser registers."""
    registering = {
        f"arena.cli.{path.stem}"
        for path in CLI.glob("*.py")
        if any(
            isinstance(node, ast.FunctionDef) and node.name == "register"
            for node in ast.parse(path.read_text()).body
        )
    }
    assert registering == {c.module for c in COMMANDS}
    parser = build_parser()  # every command in full
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {action.dest: action.help for action in sub._choices_actions}
    assert helps == {c.name: c.summary for c in COMMANDS}
