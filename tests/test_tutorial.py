"""docs/tutorial.md, run as its reader runs it: every ``console`` block's ``$`` commands in
order in a fresh folder that looks like a clone, each command's standard output compared
with what the tutorial shows (timings, latencies and match ids may differ; a line ``…``
stands for any lines). A ``python`` block after ``<!-- replaces decide() in PATH -->`` is
the reader's edit: it replaces that function in PATH.

``python tests/test_tutorial.py --write`` runs the tutorial and writes the real output
into it (for whoever changes the tutorial or the commands it shows)."""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"
# what a clone has that the tutorial's commands use (linked, not copied: .venv is big)
LINKED = ("arena", "proto", "sample_bots", "Makefile", "pyproject.toml", "requirements.lock")
EDIT = re.compile(r"<!-- replaces (\w+)\(\) in (\S+) -->")


@dataclasses.dataclass
class Command:
    command: str
    expected: list[str]
    line: int  # in the tutorial, from 1: where its output block starts


@dataclasses.dataclass
class Edit:
    function: str
    path: str
    code: str


def steps(text: str) -> list[Command | Edit]:
    """The tutorial's commands and edits, in order."""
    out: list[Command | Edit] = []
    lines = text.splitlines()
    i = 0
    edit: re.Match[str] | None = None
    while i < len(lines):
        line = lines[i]
        if m := EDIT.fullmatch(line.strip()):
            edit = m
        elif line.startswith("```"):
            kind = line[3:].strip()
            end = lines.index("```", i + 1)
            body = lines[i + 1 : end]
            if kind == "console":
                out += _commands(body, i + 2)
            elif kind == "python" and edit is not None:
                out.append(Edit(edit[1], edit[2], "\n".join(body) + "\n"))
            edit = None
            i = end
        i += 1
    return out


def _commands(body: list[str], first: int) -> list[Command]:
    found: list[Command] = []
    j = 0
    while j < len(body):
        if not body[j].startswith("$ "):
            j += 1
            continue
        command = body[j][2:]
        while command.endswith("\\"):
            j += 1
            command = command[:-1] + body[j].strip()
        start = j + 1
        j = start
        while j < len(body) and not body[j].startswith("$ "):
            j += 1
        found.append(Command(command, body[start:j], first + start))
    return found


def normal(lines: list[str]) -> list[str]:
    """What may differ from run to run made equal: decimals (times, latencies, rates),
    whole seconds, match ids; and runs of spaces (column widths follow the numbers)."""
    out = []
    for line in lines:
        line = re.sub(r"m-[0-9a-f]{12}", "m-…", line)
        line = re.sub(r"\d+\.\d+", "#", line)
        line = re.sub(r"\b\d+s\b", "#s", line)
        out.append(" ".join(line.split()))
    return out


def matches(expected: list[str], actual: list[str]) -> bool:
    pattern = "".join(
        r"(?:.*\n)*?" if line == "…" else re.escape(line) + r"\n" for line in normal(expected)
    )
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in normal(actual))) is not None


def apply(edit: Edit, folder: Path) -> None:
    path = folder / edit.path
    source = path.read_text()
    tree = ast.parse(source)
    function = next(
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == edit.function
    )
    lines = source.splitlines(keepends=True)
    assert function.end_lineno is not None
    lines[function.lineno - 1 : function.end_lineno] = [edit.code]
    path.write_text("".join(lines))


def clone(folder: Path) -> None:
    for name in (*LINKED, ".venv"):
        (folder / name).symlink_to(ROOT / name)


def run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_PROGRESS_SECONDS": "3600", "COLUMNS": "100"}
    for name in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS"):  # run by `make test`: a reader's make
        env.pop(name, None)
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


@pytest.mark.slow
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    clone(tmp_path)
    for step in steps(TUTORIAL.read_text()):
        if isinstance(step, Edit):
            apply(step, tmp_path)
            continue
        done = run(step.command, tmp_path)
        assert done.returncode == 0, (step.command, done.stdout, done.stderr)
        actual = done.stdout.splitlines()
        assert matches(step.expected, actual), (
            f"docs/tutorial.md line {step.line}: $ {step.command}\n"
            + "\n".join(actual)
            + f"\n--- stderr:\n{done.stderr}"
        )


def write() -> None:
    """Run the tutorial in a temporary clone and put the real output in it."""
    import tempfile

    text = TUTORIAL.read_text()
    lines = text.splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        clone(folder)
        replaced: list[tuple[int, int, list[str]]] = []
        for step in steps(text):
            if isinstance(step, Edit):
                apply(step, folder)
                continue
            done = run(step.command, folder)
            print(f"$ {step.command}  → exit {done.returncode}", file=sys.stderr)
            if done.returncode != 0:
                sys.exit(done.stderr)
            start = step.line - 1
            replaced.append((start, start + len(step.expected), done.stdout.splitlines()))
    for start, end, new in reversed(replaced):
        lines[start:end] = new
    TUTORIAL.write_text("\n".join(lines) + "\n")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write()
