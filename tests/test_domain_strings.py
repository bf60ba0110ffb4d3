"""No domain value is compared as text below the edges (issue 15).

Sides, end reasons, fault kinds, phases, decision kinds, suits and answer rulings are
types (:mod:`arena.rules.seats`, :mod:`arena.game.domain`, ...); their words appear only
where records, the wire and the command line turn text into values and back. This test
reads every module under ``arena/`` with :mod:`ast` and fails on a comparison (``==``,
``!=``, ``in``, ``not in``, ``is``, a ``match`` case) between anything and a string
literal that is one of those words. Below the server (``rules``, ``game``, ``records``,
``referee``) it is stricter: no comparison with a string literal at all, outside the
modules that parse text.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator
from pathlib import Path

from arena.game import FaultKind, Kind, Phase, PolicyKind, Ruling, Termination
from arena.rules import Side, Suit

ROOT = Path(__file__).resolve().parent.parent / "arena"

DOMAIN: tuple[type[enum.Enum], ...] = (
    Side, Termination, FaultKind, Phase, Kind, PolicyKind, Suit, Ruling,
)  # fmt: skip
WORDS = frozenset(str(member.value) for kind in DOMAIN for member in kind)

EDGES = ("server", "cli", "http", "v1")
"""Text in, values out (and back): the gRPC side, the command line, the web pages, and
the generated protobuf code."""

CORE = ("rules", "game", "records", "referee")
"""Below the server: here no string literal is compared at all, but in TEXT."""

TEXT = {
    "rules/cards.py": "card notation: parses '10' as the rank T",
    "records/reader.py": "the record's line types ('header', 'footer') as read from disk",
    "records/replay.py": "the kind of line the replay expects next ('deck', 'event')",
}
"""Modules of the core that parse text, and why: keep this tiny."""


def _literals(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from _literals(item)


def offences(path: Path, name: str, strict: bool) -> Iterator[str]:
    """``name:line: what`` for each comparison with a domain word (or, ``strict``, with
    any string literal)."""
    tree = ast.parse(path.read_text(), name)
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            texts = [t for operand in operands for t in _literals(operand)]
        elif isinstance(node, ast.MatchValue):
            texts = list(_literals(node.value))
        for text in texts:
            if strict or text in WORDS:
                where = f"{name}:{getattr(node, 'lineno', 0)}"
                yield f"{where}: compares with the string {text!r}"


def _scan() -> list[str]:
    found: list[str] = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        layer = rel.split("/")[0]
        if layer in EDGES or rel in TEXT:
            continue
        found.extend(offences(path, f"arena/{rel}", strict=layer in CORE))
    return found


def test_no_domain_value_is_compared_as_text() -> None:
    found = _scan()
    assert not found, "compare the domain's types, not their words:\n" + "\n".join(found)


def test_the_check_catches_what_it_should(tmp_path: Path) -> None:
    """The scanner itself: each form of comparison is caught, a plain one is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "a == 'dealer'\n"
        "'forfeit' != b\n"
        "c in ('timeout', 'x')\n"
        "match d:\n"
        "    case 'playing':\n"
        "        pass\n"
        "e == 'unrelated'\n"
        "f = 'dealer'\n"
    )
    loose = list(offences(sample, "sample.py", strict=False))
    strict = list(offences(sample, "sample.py", strict=True))
    assert [line.split(": ", 1)[1] for line in loose] == [
        "compares with the string 'dealer'",
        "compares with the string 'forfeit'",
        "compares with the string 'timeout'",
        "compares with the string 'playing'",
    ]
    assert len(strict) == 6  # also 'x' and 'unrelated'


SEATISH = ("seat", "dealer", "leader", "winner", "first", "bidder", "me")
"""Names that hold seats: their ``% 2`` / ``% 4`` is a :class:`~arena.rules.Seat`'s job."""


def _seat_arithmetic(path: Path, name: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), name)):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
            continue
        if not (isinstance(node.right, ast.Constant) and node.right.value in (2, 4)):
            continue
        text = ast.unparse(node.left).lower()
        if any(word in text for word in SEATISH):
            yield f"{name}:{node.lineno}: {ast.unparse(node)}"


def test_seat_arithmetic_lives_in_seat() -> None:
    """``seat % 2`` is ``Seat(seat).team`` (or ``team_of``), ``(seat + 1) % 4`` is
    ``Seat(seat).next``: one place knows how the table is laid out."""
    found = [
        line
        for path in sorted(ROOT.rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in ("rules/seats.py", "v1")
        for line in _seat_arithmetic(path, f"arena/{path.relative_to(ROOT).as_posix()}")
    ]
    assert not found, "use arena.rules.Seat:\n" + "\n".join(found)


def test_the_allowances_still_exist() -> None:
    """An allowance for a module that is gone (or moved) must go too."""
    for rel in TEXT:
        assert (ROOT / rel).is_file(), f"{rel} is allowed to compare text but does not exist"
