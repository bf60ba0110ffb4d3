"""Typed models of JSON input, validated by msgspec, with errors a person can act on.

Record lines (:mod:`arena.records.models`) and judge questions (:mod:`arena.cli.judge`)
are described as msgspec ``Struct`` types and checked by :func:`convert`: msgspec does
the checking (in C, the fastest of the libraries measured in ``bench/models.py``), and
:class:`ModelError` says *where* and *what* in one place, so every caller words its
message the same way. Cards convert from their codes through :func:`dec_hook`.

Nothing else in :mod:`arena.rules` imports this module: the rules are the bots' library
too, and must import with the standard library alone (bots run them under ``python -S``;
``tests/test_models.py`` checks it). That is why :class:`~arena.rules.ruleset.RuleSet`
keeps its own small table of variant parsers.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Final, TypeVar

import msgspec

from arena.rules.cards import CARDS, Card

T = TypeVar("T")

EXPECTED: Final[dict[str, str]] = {
    "int": "a whole number",
    "str": "a string",
    "object": "an object",
    "array": "a list",
    "float": "a number",
    "bool": "true or false",
    "null": "null",
}
"""msgspec's JSON type names, as the messages say them."""

_BY_CODE: Final = {card.code: card for card in CARDS}
_AT: Final = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_MISSING: Final = re.compile(r"^Object missing required field `(?P<field>[^`]*)`$")
_TYPE: Final = re.compile(r"^Expected `(?P<expected>[^`]*)`, got `(?P<got>[^`]*)`$")
_VALUE: Final = re.compile(r"^Invalid (?:enum )?value (?P<value>.*)$")
_STEP: Final = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


class Problem(enum.Enum):
    """What is wrong with one value."""

    MISSING = "missing"  # a required key is not there
    TYPE = "type"  # the wrong JSON type (``expected`` says which)
    VALUE = "value"  # a value the field does not take
    INVALID = "invalid"  # refused by a check (``detail``: its message, e.g. a bad code)


class ModelError(ValueError):
    """One value that does not fit its model.

    ``path`` names it (``"fault.kind"``, ``"cards[1]"``; ``""`` for the whole object);
    ``problem`` says what is wrong (:class:`Problem`), ``expected`` what a value of the
    wrong type must be, ``detail`` a refusing check's own message; ``value`` is what was
    given, if any.
    """

    def __init__(
        self,
        path: str,
        problem: Problem,
        expected: str = "",
        value: Any = None,
        detail: str = "",
    ) -> None:
        self.path, self.problem, self.expected = path, problem, expected
        self.value, self.detail = value, detail
        super().__init__(self.describe())

    def describe(self, quote: bool = True) -> str:
        """The standard wording: ``missing 'seat'``, ``'seat' must be a whole number: 'x'``."""
        name = (repr(self.path) if quote else self.path) if self.path else "the value"
        if self.problem is Problem.MISSING:
            return f"missing {name}"
        if self.problem is Problem.TYPE:
            return f"{name} must be {self.expected}: {self.value!r}"
        if self.problem is Problem.VALUE:
            return f"{name} does not take {self.value!r}"
        return f"{self.path}: {self.detail}" if self.path else self.detail


def dec_hook(kind: type, value: Any) -> Any:
    """Cards from their codes (``"TS"``). Not ranks: ``Rank`` is an ``IntEnum``, which
    msgspec reads as its number; a rank field is its code (``str``), parsed after."""
    if kind is Card:
        card = _BY_CODE.get(value) if isinstance(value, str) else None
        if card is not None:  # the standard code: one look-up (records hold thousands)
            return card
        if not isinstance(value, str):
            raise TypeError(f"must be a card code, not {value!r}")
        return Card.parse(value)  # "ts", " TS": parse's own rules, or its error
    raise NotImplementedError(f"no model conversion for {kind!r}")


def convert(data: Any, model: type[T] | Any, *, strict: bool = True) -> T:
    """``data`` (decoded JSON) as a ``model`` value.

    Raises:
        ModelError: naming the first value that does not fit.
    """
    try:
        result: T = msgspec.convert(data, model, strict=strict, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        raise model_error(exc, data) from None
    return result


def model_error(exc: msgspec.ValidationError, data: Any) -> ModelError:
    """msgspec's message, parsed into a :class:`ModelError` (the value looked up in ``data``)."""
    found = _AT.match(str(exc))
    message, path = (found["message"], found["path"] or "") if found else (str(exc), "")
    path = path.removeprefix(".")
    missing = _MISSING.match(message)
    if missing:
        return ModelError(
            f"{path}.{missing['field']}" if path else missing["field"], Problem.MISSING
        )
    value = _lookup(data, path)
    typed = _TYPE.match(message)
    if typed:
        expected = " or ".join(EXPECTED.get(name, name) for name in typed["expected"].split(" | "))
        return ModelError(path, Problem.TYPE, expected, value)
    if _VALUE.match(message):
        return ModelError(path, Problem.VALUE, value=value)
    return ModelError(path, Problem.INVALID, value=value, detail=message)


def _lookup(data: Any, path: str) -> Any:
    for key, index in _STEP.findall(f".{path}" if path else ""):
        try:
            data = data[int(index)] if index else data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data
