"""docs/protocol.md agrees with the proto and with a running server.

A bot author codes from the guide, so every promise in it is checked here: each message,
field, enum value and method it names exists in ``proto/arena/v1/arena.proto``; its
tables of events and request fields list exactly the proto's fields; its links land on
its own headings; its text-format examples parse as the messages they show; its
``arena judge`` examples give the answers it prints; and every status code it promises
is what a real ``arena serve`` on a free loopback port returns.
"""

from __future__ import annotations

import enum
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import text_format
from servekit import Serve, bearer, start_serve

from arena.rules import RuleSet, ruleset
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
FILE = pb.DESCRIPTOR


def section(title: str) -> str:
    """The text under the ``## title`` heading, up to the next ``## `` heading."""
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end > 0 else len(DOC)]


def table(text: str) -> list[list[str]]:
    """The rows of the first Markdown table in ``text`` (header and rule excluded)."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


# -- names --------------------------------------------------------------------------------

MESSAGES = dict(FILE.message_types_by_name)
ENUMS = dict(FILE.enum_types_by_name)
SERVICES = dict(FILE.services_by_name)
FIELDS = {f.name for m in MESSAGES.values() for f in m.fields}
ENUM_VALUES = {v.name for e in ENUMS.values() for v in e.values}
STATUS_CODES = {c.name for c in grpc.StatusCode}
RULE_KEYS = set(RuleSet().to_mapping())
RULE_VALUES = {
    member.value
    for value in vars(ruleset).values()
    if isinstance(value, type) and issubclass(value, enum.Enum)
    for member in value
}
PROTO_WORDS = set(re.findall(r"\w+", (ROOT / "proto" / "arena" / "v1" / "arena.proto").read_text()))
CARD = re.compile(r"[2-9TJQKA][SHCD]|SJ|BJ")
# Names in the guide that are not the protocol's: environment variables, other libraries'
# and languages' names, record and judge-format keys, shell words.
NOT_PROTO = {
    "ARENA", "PROTOC",
    "INTERNAL", "ArenaOuterClass", "ArenaGrpc", "ClientCall.Listener.onHeaders",
    "ClientInterceptor", "Arena.V1", "Arena.V1.Arena.ArenaClient", "Arena.V1.BotMessage",
    "WritesDone", "SHCD", "PATH", "Cargo.toml", "Google.Protobuf", "Grpc.Net.Client",
    "Grpc.Tools", "go_package", "java_package", "csharp_namespace",
}  # fmt: skip


def resolve(name: str) -> bool:
    """Whether a dotted name (``Request.view``, ``Arena.Play``, ``arena.v1.Arena``) is in
    the proto."""
    name = name.removeprefix("arena.v1.")
    head, *rest = name.split(".")
    if head in SERVICES:
        return not rest or (len(rest) == 1 and rest[0] in SERVICES[head].methods_by_name)
    if head in ENUMS:
        return not rest or (len(rest) == 1 and rest[0] in ENUMS[head].values_by_name)
    descriptor: Any = MESSAGES.get(head)
    for part in rest:
        if descriptor is None or part not in descriptor.fields_by_name:
            return False
        descriptor = descriptor.fields_by_name[part].message_type
    return head in MESSAGES


def test_every_protocol_name_in_the_guide_exists() -> None:
    unknown = set()
    for token in set(re.findall(r"`([^`\n]+)`", DOC)):
        name = token.split("(")[0].split("{")[0].strip().rstrip(":")
        if name in NOT_PROTO or name.startswith("ARENA_"):  # ARENA_*: environment variables
            continue
        if name in RULE_KEYS or name in RULE_VALUES or CARD.fullmatch(name):
            continue
        if re.fullmatch(r"[A-Z][A-Za-z0-9]*(\.[A-Za-z_][A-Za-z0-9_]*)+|[a-z]+\.v1\.\w+", name):
            ok = resolve(name)  # Message.field, Service.Method
        elif re.fullmatch(r"[A-Z][a-z][A-Za-z]*", name):
            methods = {m for service in SERVICES.values() for m in service.methods_by_name}
            ok = name in MESSAGES or name in ENUMS or name in SERVICES or name in methods
        elif re.fullmatch(r"[A-Z][A-Z0-9_]+", name):
            ok = name in ENUM_VALUES or name in STATUS_CODES
        elif re.fullmatch(r"[a-z]+(_[a-z]+)+", name):
            ok = name in FIELDS or name in PROTO_WORDS  # a field, or a value the proto names
        else:
            continue  # cards, commands, values: not names of the protocol
        if not ok:
            unknown.add(name)
    assert not unknown, f"docs/protocol.md names what the proto does not have: {sorted(unknown)}"


def test_the_events_table_lists_every_case_and_field() -> None:
    cases: dict[str, Any] = {
        f.name: f.message_type for f in pb.Event.DESCRIPTOR.oneofs_by_name["kind"].fields
    }
    listed: set[str] = set()
    for kinds, _, fields in table(section("Events")):
        fields = re.sub(r"\([^)]*\)", "", fields)  # what is in brackets explains a field
        names = {t for t in ticked(fields) if re.fullmatch(r"[a-z_]+", t)}
        for kind in ticked(kinds):
            listed.add(kind)
            wire = set(cases[kind].fields_by_name)
            assert names == wire, f"{kind}: the guide lists {sorted(names)}, the proto {wire}"
    assert listed == set(cases)


def test_the_request_table_lists_every_field() -> None:
    rows = table(section("The messages").split("**Request**")[1])
    listed = {t for row in rows for t in ticked(row[0])}
    assert listed == set(pb.Request.DESCRIPTOR.fields_by_name)


def test_every_link_lands_on_a_heading() -> None:
    headings = re.findall(r"^#{2,4} (.+)$", DOC, flags=re.M)

    def slug(text: str) -> str:
        text = re.sub(r"[^\w\- ]", "", text.lower().replace("`", ""))
        return text.replace(" ", "-")

    anchors = {slug(h) for h in headings}
    missing = sorted(set(re.findall(r"\]\(#([^)]+)\)", DOC)) - anchors)
    assert not missing, f"links to no heading: {missing}"
    for target in re.findall(r"\]\((\.\.?/[^)#]+)", DOC):
        assert (ROOT / "docs" / target).resolve().exists(), target


# -- examples -----------------------------------------------------------------------------


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.S)


def _parse_section(text: str, kind: str | None) -> Any:
    text = "\n".join(line for line in text.splitlines() if "…" not in line)
    if kind is None:  # the first field says which message it is
        first = re.search(r"^\s*(\w+)", text, flags=re.M)
        assert first is not None
        for candidate in (pb.BotMessage, pb.RefereeMessage):
            if first.group(1) in candidate.DESCRIPTOR.fields_by_name:
                kind = candidate.DESCRIPTOR.name
    assert kind in MESSAGES, f"which message is this? {text[:80]!r}"
    return text_format.Parse(text, getattr(pb, kind)())


def test_every_text_format_example_parses() -> None:
    parsed = 0
    for block in blocks("textproto"):
        # a block may hold several messages, each after a comment naming it
        # ("# CheckRequest", "# 22:04:13.598 received RefereeMessage")
        parts = re.split(r"^# .*?(\w+)\s*$", block, flags=re.M)
        if parts[0].strip():
            _parse_section(parts[0], None)
            parsed += 1
        for kind, text in zip(parts[1::2], parts[2::2], strict=True):
            message = _parse_section(text, kind)
            parsed += 1
            if isinstance(message, pb.RefereeMessage) and message.HasField("welcome"):
                for value in message.welcome.rules.values():
                    json.loads(value)  # rule values are JSON
    assert parsed >= 15


def test_the_arena_judge_examples_answer_as_shown() -> None:
    (block,) = [b for b in blocks("sh") if "arena judge" in b and "$ echo" in b]
    lines = block.strip().splitlines()
    questions = [re.search(r"echo '(.*)' \|", line) for line in lines[0::2]]
    shown = [json.loads(line) for line in lines[1::2]]
    stdin = "".join(q.group(1) + "\n" for q in questions if q)
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "judge"],
        input=stdin, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert [json.loads(line) for line in proc.stdout.splitlines()] == shown


def test_the_follow_examples_are_the_referees_answers() -> None:
    rows = table(section("The rules your bot must follow").split("Examples with L = 2")[1])
    questions: list[dict[str, Any]] = []
    expected: list[str] = []
    for lead, hand, _, illegal in rows:
        play = re.match(r"`([^`]+)`: \"(.+)\"", illegal)
        if play is None:
            continue
        questions.append(
            {"id": len(questions), "q": "follow", "trump": {"level": "2", "suit": "S"},
             "lead": ticked(lead)[0].split(), "hand": ticked(hand)[0].split(),
             "play": play.group(1).split()}
        )  # fmt: skip
        expected.append(play.group(2))
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "judge"],
        input="".join(json.dumps(q) + "\n" for q in questions),
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(a["legal"], a["reason"]) for a in answers] == [(False, r) for r in expected]
    assert len(expected) >= 4


# -- status codes against a real server ------------------------------------------------------


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    serve = start_serve(tmp_path_factory.mktemp("serve"))
    try:
        yield serve
    finally:
        serve.stop()


def promised(title: str, phrase: str) -> str:
    """The status the guide's table in section ``title`` gives for ``phrase``."""
    rows = [row for row in table(section(title)) if phrase in row[1]]
    assert len(rows) == 1, f"{title}: no single row says {phrase!r}"
    (status,) = ticked(rows[0][0])
    return status


def _play(target: str, *messages: Any, wait: float = 10.0) -> grpc.StatusCode | pb.Welcome:
    """Open Play, send ``messages`` (BotMessages or raw bytes), return the status the
    stream ended with, or the Welcome it answered with."""
    with grpc.insecure_channel(target) as channel:
        raw = any(isinstance(m, bytes) for m in messages)
        call: Any = channel.stream_stream(
            "/arena.v1.Arena/Play",
            request_serializer=(lambda b: b) if raw else pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )(iter(messages), timeout=wait)
        try:
            for reply in call:
                if reply.HasField("welcome"):
                    welcome: pb.Welcome = reply.welcome
                    return welcome
        except grpc.RpcError as exc:
            return exc.code()
    raise AssertionError("the stream ended without a status or a Welcome")


def hello(token: str, protocol: int = 1) -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(token=token, name="doc", protocol=protocol))


def _check(target: str, token: str, seq: int = 1) -> grpc.StatusCode | pb.Verdict:
    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.ArenaStub(channel)
        try:
            return stub.Check(pb.CheckRequest(token=token, action=pb.Action(seq=seq)), timeout=10)
        except grpc.RpcError as exc:
            return exc.code()


def _finished_match(serve: Serve) -> list[str]:
    """The seat tokens of a one-deal match played to its end by fallback bots."""
    target, organiser = serve.target, bearer(serve.token)
    with grpc.insecure_channel(target) as channel:
        matches = pb_grpc.MatchesStub(channel)
        created = matches.Create(
            pb.CreateMatchRequest(seed=1, deals=1), timeout=10, metadata=organiser
        )
        bots = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "bots" / "fallback_bot.py"),
             "--server", target, "--tokens-file", "-"],
            input="\n".join(created.seat_tokens) + "\n", capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert bots.returncode == 0, bots.stderr
        info = matches.Get(
            pb.GetMatchRequest(match_id=created.match_id), timeout=10, metadata=organiser
        )
        assert info.state == pb.FINISHED and info.result.HasField("winner_team")
        return list(created.seat_tokens)


@pytest.mark.slow
def test_every_status_the_guide_promises_is_what_the_server_returns(serve: Serve) -> None:
    title = "Connecting and the handshake"
    server = serve.target
    with grpc.insecure_channel(server) as channel:
        waiting = pb_grpc.MatchesStub(channel).Create(
            pb.CreateMatchRequest(), timeout=10, metadata=bearer(serve.token)
        )
    tokens = list(waiting.seat_tokens)
    seen: dict[str, grpc.StatusCode | pb.Welcome | pb.Verdict] = {
        "an unknown token": _play(server, hello("nope")),
        "the first message is not a `Hello`": _play(server, pb.BotMessage(action=pb.Action(seq=1))),
        "`Hello.protocol` is neither 1 nor 0": _play(server, hello(tokens[0], protocol=2)),
        "the first message cannot be decoded": _play(server, b"\xff\xff\xff"),
        "no `Hello` within 5 s": _silent(server),
    }
    # a second stream while the first is alive
    done = threading.Event()
    with grpc.insecure_channel(server) as channel:
        first: Any = channel.stream_stream(
            "/arena.v1.Arena/Play",
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=pb.RefereeMessage.FromString,
        )(_hold(done, hello(tokens[1])), timeout=30)
        assert next(first).HasField("welcome")
        seen["this seat already has a live stream"] = _play(server, hello(tokens[1]))
        done.set()
        first.cancel()
    finished = _finished_match(serve)
    seen["the token's match is over"] = _play(server, hello(finished[0]))
    for phrase, got in seen.items():
        assert got == getattr(grpc.StatusCode, promised(title, phrase)), phrase

    title = "The Check dry run"
    assert _check(server, "nope") == getattr(grpc.StatusCode, promised(title, "unknown token"))
    pending = getattr(grpc.StatusCode, promised(title, "no decision of this seat is pending"))
    assert _check(server, tokens[2]) == pending  # the match has not started
    assert _check(server, finished[1]) == pending  # the match is over


def _hold(done: threading.Event, *messages: Any) -> Iterator[Any]:
    """Send ``messages``, then keep the stream open until ``done``."""
    yield from messages
    done.wait(30)


def _silent(target: str) -> grpc.StatusCode | pb.Welcome:
    """Open Play and send nothing, keeping the stream open."""
    done = threading.Event()
    try:
        with grpc.insecure_channel(target) as channel:
            call: Any = channel.stream_stream(
                "/arena.v1.Arena/Play",
                request_serializer=pb.BotMessage.SerializeToString,
                response_deserializer=pb.RefereeMessage.FromString,
            )(_hold(done), timeout=15)
            try:
                for _ in call:
                    pass
            except grpc.RpcError as exc:
                return exc.code()
    finally:
        done.set()
    raise AssertionError("the stream ended without a status")
