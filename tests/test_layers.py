"""Every import in ``arena/`` points down the layer order (docs/architecture.md, "Layers").

Read from the source with ``ast``, so an import fails here whether or not it ever runs:
top-level, inside a function (a lazy import is still a dependency), ``from arena import
X`` and ``importlib.import_module("arena.X")`` alike. A package may import its own
modules and any package of a lower rank; never one of the same rank (peers stay
independent) or a higher one.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

ARENA = Path(__file__).resolve().parent.parent / "arena"

LAYERS: Final[dict[str, int]] = {
    # the root package (__version__), errors and text: leaves everyone may use
    "arena": 0, "errors": 0, "text": 0,
    "rules": 1,  # sans-IO rules
    "game": 2,  # sans-IO machines, views (the one redaction path)
    "records": 3, "env": 3,  # records: write/read/replay; env: PettingZoo over game/
    "referee": 4, "bots": 4,  # referee: the core and its trio driver; bots: in-process
    "v1": 5,  # the generated protobuf code: only the edges above may speak it
    "server": 6,  # gRPC edge: host, services, bridge, access
    "http": 7, "botzone": 7, "competition": 7,  # users of server/, independent of each other
    "batch": 8,  # many matches: server + bot processes (botzone seats among them)
    "cli": 9,  # the `arena` command
}  # fmt: skip
"""The layer order, lowest first: one rank per package (the table in docs/architecture.md)."""

ALLOWED_UPWARD: Final[dict[tuple[str, str], str]] = {
    ("server/app.py", "http"): "open_arena_server(http=...) starts the pages and /metrics "
    "on the server's own trio loop (imported only when --http is given)",
    ("server/workers/run.py", "http"): "the workers' front serves the merged /metrics and "
    "redirects pages to workers on its own trio loop (imported only when --http is given)",
}
"""Known imports against the order, each with its reason. Strict: an entry no longer
needed fails the test, so the list only shrinks."""


def imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, imported arena package) for every import of ``arena.*`` anywhere in ``tree``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "arena":  # from arena import botzone, __version__
                names = [f"arena.{alias.name}" for alias in node.names]
            else:
                names = [node.module]
        elif isinstance(node, ast.ImportFrom):  # relative: not used in arena/
            names = [f"<relative import level {node.level}>"]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            first = node.args[0]
            text = first.value if isinstance(first, ast.Constant) else _prefix(first)
            names = [str(text)]
        for name in names:
            parts = name.split(".")
            if parts[0] == "arena":
                package = parts[1] if len(parts) > 1 else "arena"
                found.append((node.lineno, package if _is_module(package) else "arena"))
            elif name.startswith("<relative"):
                found.append((node.lineno, name))
    return sorted(found)


def _is_module(name: str) -> bool:
    """A package or module of arena (else a name in arena/__init__.py: __version__)."""
    return name != "" and ((ARENA / name).is_dir() or (ARENA / f"{name}.py").exists())


def _prefix(text: ast.JoinedStr) -> str:
    """The constant start of an f-string: ``f"arena.cli.{name}"`` → ``arena.cli.``."""
    first = text.values[0] if text.values else None
    return str(first.value) if isinstance(first, ast.Constant) else ""


def modules() -> list[Path]:
    return sorted(p for p in ARENA.rglob("*.py") if "v1" not in p.relative_to(ARENA).parts)


def package_of(path: Path) -> str:
    first = path.relative_to(ARENA).parts[0]
    return "arena" if first == "__init__.py" else first.removesuffix(".py")


def violations(path: Path) -> list[str]:
    return violations_in(path.relative_to(ARENA).as_posix(), path.read_text(encoding="utf-8"))


def violations_in(name: str, source: str) -> list[str]:
    """What is wrong with the imports of ``source``, the module ``name`` under arena/."""
    own = package_of(ARENA / name)
    tree = ast.parse(source, filename=name)
    bad = []
    for line, package in imports(tree):
        if package not in LAYERS:
            bad.append(f"{name}:{line}: {package}")
        elif (
            package != own
            and LAYERS[package] >= LAYERS[own]
            and (name, package) not in ALLOWED_UPWARD
        ):
            bad.append(
                f"{name}:{line}: {own} (rank {LAYERS[own]}) imports {package} "
                f"(rank {LAYERS[package]})"
            )
    return bad


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.relative_to(ARENA).as_posix())
def test_imports_follow_the_layer_order(path: Path) -> None:
    bad = violations(path)
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_every_package_has_a_rank() -> None:
    packages = {package_of(p) for p in modules()} | {"v1", "arena"}
    assert packages == set(LAYERS), f"give each a rank: {sorted(packages ^ set(LAYERS))}"


@pytest.mark.parametrize("known", sorted(ALLOWED_UPWARD), ids="->".join)
def test_known_exceptions_are_still_needed(known: tuple[str, str]) -> None:
    path, package = known
    found = {p for _, p in imports(ast.parse((ARENA / path).read_text(encoding="utf-8")))}
    assert package in found, f"{path} no longer imports {package}: drop it from ALLOWED_UPWARD"


def test_the_scan_sees_every_kind_of_import() -> None:
    source = (
        "import arena.rules.cards\n"
        "from arena.game import deal\n"
        "from arena import botzone, __version__\n"
        "def late():\n    from arena.server.host import MatchHost\n"
        "importlib.import_module('arena.http.app')\n"
        "importlib.import_module(f'arena.cli.{name}')\n"
        "from . import sibling\n"
    )
    assert [p for _, p in imports(ast.parse(source))] == [
        "rules", "game", "arena", "botzone", "server", "http", "cli",
        "<relative import level 1>",
    ]  # fmt: skip
    cli = ARENA / "cli" / "main.py"
    assert package_of(cli) == "cli" and package_of(ARENA / "errors.py") == "errors"


def test_an_upward_import_is_named() -> None:
    late = "def f():\n    from arena.referee import play\n"
    assert violations_in("rules/cards.py", late) == [
        "rules/cards.py:2: rules (rank 1) imports referee (rank 4)"
    ]
    assert violations_in("http/app.py", "from arena import botzone\n") == [
        "http/app.py:1: http (rank 7) imports botzone (rank 7)"
    ]
    assert violations_in("cli/main.py", "from arena.referee import play\n") == []
