"""The table: four seats, two teams, and the two sides of a deal (RULES.md §2).

Seats sit 0–3 in play order; partners face each other, so seats 0+2 are team 0 and
seats 1+3 team 1. In a deal the dealer's team is the :attr:`Side.DEALER` side and the
other team the :attr:`Side.ATTACKERS`. These are the only places that know the seat
arithmetic (``% 2``, ``% 4``): everything else asks a :class:`Seat`.
"""

from __future__ import annotations

import enum
from typing import Final


class Seat(int):
    """A seat, 0–3: an ``int`` (records, the wire and table indexes use it as one) that
    knows its team, partner and neighbours. Interned like cards: ``Seat(2) is Seat(2)``.

    ``repr`` shows the type (``Seat(2)``); ``str`` and f-strings give the bare number, as
    messages and records always have.
    """

    __slots__ = ()

    def __new__(cls, value: int) -> Seat:
        if type(value) is cls:
            return value
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 4:
            return SEATS[value]
        raise ValueError(f"a seat is 0, 1, 2 or 3, not {value!r}")

    @property
    def team(self) -> int:
        """0 for seats 0 and 2, 1 for seats 1 and 3."""
        return self & 1

    @property
    def partner(self) -> Seat:
        return SEATS[self ^ 2]

    @property
    def next(self) -> Seat:
        """The seat that plays after this one."""
        return SEATS[(self + 1) & 3]

    def after(self, places: int) -> Seat:
        """The seat ``places`` turns after this one (``places`` may be any int)."""
        return SEATS[(self + places) & 3]

    def places_after(self, other: int) -> int:
        """How many turns after ``other`` this seat plays (0–3)."""
        return (self - other) & 3

    def side(self, dealer: int) -> Side:
        """This seat's side in a deal that ``dealer`` deals."""
        return Side.DEALER if (self ^ dealer) & 1 == 0 else Side.ATTACKERS

    def __repr__(self) -> str:
        return f"Seat({int(self)})"

    __str__ = int.__repr__

    def __reduce__(self) -> tuple[object, tuple[int]]:
        return (Seat, (int(self),))

    def __copy__(self) -> Seat:
        return self

    def __deepcopy__(self, memo: object) -> Seat:
        return self


SEATS: Final[tuple[Seat, Seat, Seat, Seat]] = tuple(  # type: ignore[assignment]
    int.__new__(Seat, i) for i in range(4)
)
"""The four seats in play order."""


def other_team(team: int) -> int:
    """The team that is not ``team``."""
    return team ^ 1


def team_of(seat: int) -> int:
    """Seats 0+2 are team 0, seats 1+3 team 1 (for a plain int: ``Seat(seat).team``)."""
    return seat & 1


class Side(enum.StrEnum):
    """A team's side in one deal. The value is the record's and the wire's word; a
    ``StrEnum`` so those edges need no table, but code compares members, never text."""

    DEALER = "dealer"
    ATTACKERS = "attackers"

    def team(self, dealer: int) -> int:
        """The team on this side in a deal that ``dealer`` deals."""
        return team_of(dealer) if self is Side.DEALER else other_team(team_of(dealer))

    @property
    def other(self) -> Side:
        return Side.ATTACKERS if self is Side.DEALER else Side.DEALER
