"""Record writing and reading with msgspec, pydantic and the old hand-written checks.

Why arena validates with msgspec (docs/architecture.md, "Typed models"): this plays one
real full match into a record (N lines), then times, side by side in one run, three ways
of turning the match's line objects into bytes (write) and bytes back into typed,
checked lines (read):

- ``hand-written``: the stdlib ``json`` module and the validators arena had before
  (``bench/handwritten.py``, kept verbatim);
- ``msgspec``: what arena runs now (``arena.records``: msgspec models and encoder);
- ``pydantic``: the same models in pydantic v2 (cards and ranks by ``BeforeValidator``,
  events as models made from the event dataclasses), encoded by ``pydantic_core``.

Each way converts the same lines, best of ``rounds`` interleaved rounds; it also times
``parse_record`` (the whole forgiving reader) and ``RecordWriter`` on the same match.

    .venv/bin/python bench/models.py [rounds] [seed]

pydantic is not one of arena's dependencies: without it that column is skipped.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

import handwritten

from arena.bots import make_bot
from arena.game import EVENTS, MatchSetup
from arena.records import RecordHeader, RecordWriter, SeatRecord, parse_record
from arena.records.format import EVENT_TYPES, _ranks_parsed, dump_line
from arena.records.lines import PARSERS
from arena.records.models import MODELS, EventModel
from arena.records.reader import _JSON, _decode
from arena.referee import play_match
from arena.rules import Card, Rank, RuleSet
from arena.rules.models import convert

BOTS = ("random", "greedy", "random", "greedy")


def record(seed: int, folder: Path) -> bytes:
    setup = MatchSetup(RuleSet(), seed)
    seats = [SeatRecord(f"seat{i}", f"builtin:{n}") for i, n in enumerate(BOTS)]
    header = RecordHeader.for_setup(f"bench-{seed}", setup, seats)
    path = folder / "match.jsonl"
    with RecordWriter.open(path, header, overwrite=True) as writer:
        play_match(setup, [make_bot(n, seed * 4 + s) for s, n in enumerate(BOTS)],
                   recorder=writer, clock=time.perf_counter)  # fmt: skip
    return path.read_bytes()


# -- the pydantic models -----------------------------------------------------------------


def pydantic_way() -> tuple[Callable[[dict[str, Any]], bytes], Callable[[bytes], Any]] | None:
    try:
        import pydantic
        import pydantic_core
    except ImportError:
        return None
    from typing import Annotated, Literal

    from pydantic import BeforeValidator, ConfigDict, StrictFloat, StrictInt, StrictStr

    PCard = Annotated[Card, BeforeValidator(lambda v: Card.parse(v))]
    PRank = Annotated[Rank, BeforeValidator(lambda v: Rank.parse(v))]
    config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    def swap(hint: Any) -> Any:
        if hint is Card:
            return PCard
        if hint is Rank:
            return PRank
        if hint is int:
            return StrictInt
        if hint is str:
            return StrictStr
        args = typing.get_args(hint)
        if typing.get_origin(hint) is tuple:
            return tuple[tuple(swap(a) if a is not Ellipsis else a for a in args)]  # type: ignore[misc]
        if args:  # X | None
            return typing.Union[tuple(swap(a) for a in args)]  # noqa: UP007
        return hint

    event_models = {}
    for cls in EVENTS:
        hints = typing.get_type_hints(cls)
        fields = {f.name: (swap(hints[f.name]), ...) for f in dataclasses.fields(cls)}
        model = pydantic.create_model(f"P{cls.__name__}", __config__=config, **fields)
        event_models[cls.type] = (model, cls)

    class Base(pydantic.BaseModel):
        model_config = config
        n: StrictInt

    class Deck(Base):
        type: Literal["deck"]
        deal: StrictInt
        attempt: StrictInt
        cards: tuple[PCard, ...]

    class EventLineModel(Base):
        type: Literal["event"]
        event: dict[str, Any]

    class Fault(pydantic.BaseModel):
        kind: StrictStr
        reason: StrictStr

    class Answer(Base):
        type: Literal["answer"]
        seat: StrictInt
        seq: StrictInt
        kind: Literal["bid", "bury", "play"]
        sent: tuple[PCard, ...] | None
        played: tuple[PCard, ...]
        requested_at_ms: StrictFloat | StrictInt
        latency_ms: StrictFloat | StrictInt
        verdict: Literal["accepted", "fault", "absent"]
        fault: Fault | None

    class Footer(Base):
        type: Literal["footer"]
        result: dict[str, Any]
        faults: tuple[dict[str, Any], ...]
        lines: StrictInt
        digest: StrictStr

    Line = Annotated[Deck | EventLineModel | Answer | Footer, pydantic.Field(discriminator="type")]
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Line)

    def read(raw: bytes) -> Any:
        data = pydantic_core.from_json(raw)
        if data["type"] == "header":
            return RecordHeader.from_dict(data)
        line = adapter.validate_python(data)
        if isinstance(line, EventLineModel):
            model, cls = event_models[line.event["type"]]
            m = model.model_validate(line.event)
            return cls(**{f.name: getattr(m, f.name) for f in dataclasses.fields(cls)})
        return line

    def write(data: dict[str, Any]) -> bytes:
        return pydantic_core.to_json(data) + b"\n"

    return write, read


# -- the ways --------------------------------------------------------------------------


def msgspec_models(raw: bytes) -> Any:
    """The same work as the pydantic way: decode, the line's model, the event's model."""
    data = _JSON.decode(raw)
    if data["type"] == "header":
        return RecordHeader.from_dict(data)
    line = convert(data, MODELS[data["type"]])
    if isinstance(line, EventModel):
        cls = EVENT_TYPES[line.event["type"]]
        return convert(_ranks_parsed(line.event, cls), cls)
    return line


def msgspec_read(raw: bytes) -> Any:
    data = _decode(raw[:-1])
    assert isinstance(data, dict)
    return PARSERS[data["type"]](data, data["n"])


def handwritten_read(raw: bytes) -> Any:
    data = handwritten.decode(raw[:-1])
    return handwritten.PARSERS[data["type"]](data, data["n"])


def timed(fn: Callable[[Any], Any], items: list[Any]) -> float:
    start = time.process_time()
    for item in items:
        fn(item)
    return time.process_time() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory() as tmp:
        data = record(seed, Path(tmp))
    raws = [line + b"\n" for line in data.split(b"\n")[:-1]]
    dicts = [handwritten.decode(r[:-1]) for r in raws]
    ways: dict[str, tuple[Callable[[dict[str, Any]], bytes], Callable[[bytes], Any]]] = {
        "hand-written": (handwritten.dump_line, handwritten_read),
        "arena now": (dump_line, msgspec_read),
        "msgspec": (dump_line, msgspec_models),
    }
    pyd = pydantic_way()
    if pyd is not None:
        ways["pydantic"] = pyd
    for name, (write, read) in ways.items():  # each reads every line back the same
        assert [write(d) for d in dicts[:5]] == raws[:5] or name == "pydantic", name
        assert write(dicts[-1]) == raws[-1] or name == "pydantic", name
        for r in raws:
            read(r)
    best: dict[str, list[float]] = {name: [9e9, 9e9] for name in ways}
    for _ in range(rounds):
        for name, (write, read) in ways.items():
            best[name][0] = min(best[name][0], timed(write, dicts))
            best[name][1] = min(best[name][1], timed(read, raws))
    reader = min(timed(parse_record, [data]) for _ in range(rounds))
    print(f"one full match record: {len(raws)} lines, {len(data):,} bytes; best of {rounds}, "
          f"CPU time; load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"  {'way':<13} {'write µs/line':>14} {'read µs/line':>13} {'read lines/s':>13}")
    base = best["hand-written"]
    for name, (w, r) in best.items():
        print(
            f"  {name:<13} {w / len(raws) * 1e6:>8.2f} ({w / base[0]:4.2f}×)"
            f" {r / len(raws) * 1e6:>7.2f} ({r / base[1]:4.2f}×) {len(raws) / r:>12,.0f}"
        )
    print(f"  parse_record (the whole reader, msgspec): {reader * 1e3:.1f} ms "
          f"({len(raws) / reader:,.0f} lines/s)")  # fmt: skip


if __name__ == "__main__":
    main()
