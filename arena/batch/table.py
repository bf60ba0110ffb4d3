"""Plain-text tables whose columns are as wide as their contents (nothing cut off),
for the results that ``arena match``, ``batch`` and ``tournament`` print."""

from __future__ import annotations

import shutil
from collections.abc import Sequence


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> list[str]:
    """The lines of a table: the first ``left`` columns aligned left (names), the others
    right (numbers); two spaces between columns; trailing spaces stripped."""
    cells = [list(map(str, headers)), *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return [
        "  ".join(
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in cells
    ]


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` when set; 100 when not a terminal)."""
    return shutil.get_terminal_size((100, 24)).columns
