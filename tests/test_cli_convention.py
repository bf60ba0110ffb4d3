"""The command line's one convention, run as a user runs it (a subprocess of the installed
``arena`` script): usage errors are one line and exit 2, failures one line and exit 1
(the traceback only with ``--debug``), ``--help`` lists the rule variants from the one
RuleSet definition, default output folders never collide, tables say what their
columns are and cut nothing off, and ``serve`` keeps an explicit log level."""

from __future__ import annotations

import argparse
import enum
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.cli.main import build_parser
from arena.rules import RuleSet
from arena.rules.ruleset import VARIANT_KEYS

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("arena")
ARENA = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "arena.cli.main"]
BUILTINS = ["--bot", "builtin:greedy", "--bot", "builtin:random"] * 2


def arena(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def arena_all(
    runs: Sequence[Sequence[str]], timeout: float = 180
) -> list[subprocess.CompletedProcess[str]]:
    """Several ``arena`` commands at once (each is mostly interpreter start-up)."""
    started = [
        (args, subprocess.Popen([*ARENA, *args], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True))
        for args in runs
    ]  # fmt: skip
    done = []
    for args, process in started:
        out, err = process.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess(list(args), process.returncode, out, err))
    return done


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real two-deal match record (built-in bots, no network)."""
    out = tmp_path_factory.mktemp("record")
    done = arena("batch", *BUILTINS, "--matches", "1", "--deals", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out / "match-00000.jsonl"


USAGE_ERRORS = [
    (["match", *BUILTINS, "--deals", "0"], "--deals: 0 is not allowed: give a positive number"),
    (["batch", *BUILTINS, "--matches", "0"], "--matches: 0 is not allowed: give a number of"),
    (["selfplay", "--deals", "-3"], "--deals: -3 is not allowed"),
    (["match", *BUILTINS, "--time-limit", "soon"], "--time-limit: 'soon' is not a whole number"),
    (["serve", "--listen", "127.0.0.1:99999"], "the port must be 0-65535"),
    (["serve", "--listen", "localhost"], "'localhost' is not HOST:PORT"),
    (["serve", "--listen", ":50051"], "':50051' is not HOST:PORT"),
    (["serve", "--listen", "127.0.0.1:http"], "the port must be 0-65535"),
    (["matches", "list", "--server", "127.0.0.1:0"], "the port must be 1-65535"),
    (["serve", "--join", "front", "--listen", "127.0.0.2:0"], "--join: 'front' is not HOST:PORT"),
    (["match", "--bot", "builtin:greedy"], "give exactly four --bot (got 1)"),
    (["match", *BUILTINS, "--policy", "harsh"], "invalid choice: 'harsh'"),
    (["batch", *BUILTINS, "--rules", "dekcs=1"], "unknown rule variant 'dekcs'; known: "),
    (["tournament", "--bot", "a=builtin:greedy", "--bot", "b=builtin:nobody"], "'nobody'"),
    (["selfplay", "--bots", "random,greedy"], "--bots 'random,greedy': give four of"),
    (["selfplay", "--rules", "decks=5"], "rule 'decks' does not take 5: one of 2, 1, 3"),
    (  # checked before any connection: the same --rules block as every other command
        ["matches", "create", "--server", "127.0.0.1:1", "--rules", "decks=5"],
        "--rules: rule 'decks' does not take 5: one of 2, 1, 3",
    ),
    (["replay", "README.md", "--verify"], "README.md is not a match record"),
    (["show", "README.md"], "README.md is not a match record"),
    (["nonsense"], "invalid choice: 'nonsense'"),
]


def test_a_usage_error_is_one_line_and_exit_2() -> None:
    for (_, message), done in zip(
        USAGE_ERRORS, arena_all([args for args, _ in USAGE_ERRORS]), strict=True
    ):
        assert done.returncode == 2, done
        assert done.stdout == "", done
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done
        assert lines[0].startswith("arena"), done
        assert message in lines[0], done


def test_show_names_the_deals_a_record_has(record: Path) -> None:
    done = arena("show", str(record), "--deal", "99")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"arena show: no deal 99 in {record}: it has deals 1-2\n"
    assert arena("show", str(record), "--deal", "2").returncode == 0


@pytest.fixture
def taken_port() -> Sequence[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield [sock.getsockname()[1]]


def test_a_port_in_use_is_one_line_and_exit_1(taken_port: Sequence[int]) -> None:
    listen = f"127.0.0.1:{taken_port[0]}"
    done = arena("serve", "--listen", listen, "--records", "/nonexistent-unused")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"arena serve: cannot listen on {listen}: the port is in use "
        "(another arena serve? choose another --listen port)"
    ]
    debug = arena("serve", "--listen", listen, "--debug")
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.splitlines()[-1] == done.stderr.splitlines()[0]


RUNTIME_FAILURES = [
    (["match", *BUILTINS, "--deals", "1", "--record", "/proc/nope/m.jsonl"],
     "arena match: cannot write the record in /proc/nope: No such file or directory"),
    (["batch", *BUILTINS, "--out", "/proc/nope"],
     "arena batch: No such file or directory: /proc/nope"),
    (["check-bot", "builtin:greedy", "--out", "/proc/nope"],
     "arena check-bot: No such file or directory: /proc/nope"),
]  # fmt: skip


def test_a_runtime_failure_is_one_line_and_exit_1() -> None:
    for (_, message), done in zip(
        RUNTIME_FAILURES, arena_all([args for args, _ in RUNTIME_FAILURES]), strict=True
    ):
        assert (done.returncode, done.stdout, done.stderr) == (1, "", message + "\n"), done


def test_an_unreadable_record_is_one_line(tmp_path: Path) -> None:
    done = arena("replay", str(tmp_path / "missing.jsonl"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"arena replay: cannot read {tmp_path / 'missing.jsonl'}: No such file or directory"
    ]


def _serve_logs(*args: str) -> str:
    """The stderr of ``arena serve`` on a free port, stopped once it serves."""
    process = subprocess.Popen(
        [*ARENA, "serve", "--listen", "127.0.0.1:0", "--log-json", "--open", "--workers", "1",
         *args],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    first = ""
    while not first.startswith("arena serving on 127.0.0.1:"):  # after notes on access
        first = process.stderr.readline()
        assert first, "arena serve ended before serving"
    time.sleep(0.3)
    process.terminate()
    rest = process.stderr.read()  # (communicate() would skip what readline buffered)
    process.wait(timeout=30)
    return first + rest


@pytest.mark.slow
def test_serve_keeps_an_explicit_log_level(tmp_path: Path) -> None:
    records = ("--records", str(tmp_path))
    assert '"event": "server_started"' in _serve_logs(*records)  # default: info
    assert "server_started" not in _serve_logs(*records, "--log-level", "warning")


def command_names() -> list[str]:
    """Every subcommand's name, as typed (``check-bot``), from the parser itself."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def test_every_command_has_help_and_the_rule_variants_where_it_takes_rules() -> None:
    """``--debug`` everywhere; with ``--rules``, every key and every value an enum variant
    takes, and its default, all from the RuleSet itself."""
    groups = {"matches": "create", "bots": "add", "events": "create"}  # command groups
    commands = [
        *([c] for c in command_names() if c not in groups),
        *([group, verb] for group, verb in groups.items()),
    ]
    defaults = RuleSet().to_mapping()
    for command, done in zip(commands, arena_all([[*c, "--help"] for c in commands]), strict=True):
        assert done.returncode == 0, done
        assert "--debug" in done.stdout and "``" not in done.stdout, done.stdout
        if command[-1] not in ("match", "batch", "tournament", "selfplay", "create"):
            continue
        listing = done.stdout[done.stdout.index("rule variants") :]
        for key in VARIANT_KEYS:
            line = next(ln for ln in listing.splitlines() if ln.split()[:1] == [key])
            value = getattr(RuleSet(), key)
            if isinstance(value, enum.StrEnum):
                assert all(f'"{member.value}"' in line for member in type(value)), line
            assert line.endswith(f"(default {json.dumps(defaults[key])})"), line


def test_default_output_folders_never_collide(tmp_path: Path) -> None:
    """Two runs started in the same second each get their own folder."""
    args = ["check-bot", "builtin:greedy", "--no-stacked", "--matches", "1", "--deals", "1"]
    runs = [
        subprocess.Popen([*ARENA, *args], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for run in runs:
        run.communicate(timeout=120)
        assert run.returncode == 0
    folders = sorted((tmp_path / "records").iterdir())
    assert len(folders) == 2, folders
    assert all((f / "check-bot.json").exists() for f in folders)


def test_tournament_table_says_what_its_cells_hold_and_cuts_nothing(tmp_path: Path) -> None:
    long_a, long_b = "a_bot_with_a_rather_long_name", "another_bot_with_a_long_name"
    done = arena(
        "tournament",
        *("--bot", f"{long_a}=builtin:greedy", "--bot", f"{long_b}=builtin:random"),
        *("--rounds", "1", "--deals", "1", "--out", str(tmp_path)),
        env={"COLUMNS": "70"},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "the row bot's wins-losses-draws against the column bot" in out
    assert f"{long_a}+{long_a}  vs  {long_b}+{long_b}" in out
    grid = out[out.index("pairwise") :].split("\n\n")[0].splitlines()[2:]
    assert grid[0].split() == ["#1", "#2"]  # the names would not fit in 70 columns
    assert all(len(line) <= 70 for line in grid)
    for row in grid[1:]:
        cells = [c for c in row.split()[2:] if c != "—"]
        assert all(c.count("-") == 2 for c in cells), row  # wins-losses-draws


def test_batch_table_names_its_columns(tmp_path: Path) -> None:
    done = arena("batch", *BUILTINS, "--matches", "2", "--deals", "1", "--out", str(tmp_path))
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert "partnerships (the two seats of a team; wins, draws and losses are matches):" in lines
    header = next(ln for ln in lines if ln.startswith("partnership "))
    assert header.split() == ["partnership", "matches", "wins", "draws", "losses", "win", "%"]
    assert any(ln.startswith("builtin:greedy+builtin:greedy ") for ln in lines)
