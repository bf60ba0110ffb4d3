"""The committed `arena/v1/` package matches `proto/arena/v1/`, and the protocol reads well.

STYLE.md habit 14: generated code lives in one package, is rebuilt by `make proto`,
and this test fails while it is stale.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from arena.server import codegen
from arena.v1 import arena_pb2

COMMITTED = codegen.REPO_ROOT / codegen.PACKAGE


def _package_files(directory: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(directory.iterdir())
        if p.is_file() and p.suffix in {".py", ".pyi"}
    }


def test_generated_package_is_fresh(tmp_path: Path) -> None:
    codegen.generate(tmp_path)
    fresh, committed = _package_files(tmp_path), _package_files(COMMITTED)
    stale = sorted(
        name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name)
    )
    assert not stale, (
        f"{COMMITTED.relative_to(codegen.REPO_ROOT)}/ is stale or hand-edited "
        f"({', '.join(stale)} differ from proto/): run `make proto` and commit the result"
    )


def test_generation_is_deterministic(tmp_path: Path) -> None:
    codegen.generate(tmp_path / "a")
    codegen.generate(tmp_path / "b")
    assert _package_files(tmp_path / "a") == _package_files(tmp_path / "b")


def test_generate_removes_stale_modules_and_keeps_others(tmp_path: Path) -> None:
    (tmp_path / "old_pb2.py").write_text("# from a deleted .proto\n")
    (tmp_path / "notes.txt").write_text("not generated\n")
    codegen.generate(tmp_path)
    assert not (tmp_path / "old_pb2.py").exists()
    assert (tmp_path / "notes.txt").exists()
    assert (tmp_path / "arena_pb2.py").exists()


def test_version_pins_are_enforced(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text("grpcio-tools==0.0.1\nprotobuf==0.0.2\n")
    with pytest.raises(codegen.CodegenError, match=r"grpcio-tools .* pins 0\.0\.1"):
        codegen.check_tool_versions(lock)


# ----------------------------------------------------------------------------- contract


def test_card_enums_are_natural() -> None:
    """TWO = 2 … ACE = 14, then the jokers; suits in text-code order S, H, C, D."""
    names = [arena_pb2.Rank.Name(value) for value in range(2, 17)]  # type: ignore[arg-type]
    assert names == [
        "TWO",
        "THREE",
        "FOUR",
        "FIVE",
        "SIX",
        "SEVEN",
        "EIGHT",
        "NINE",
        "TEN",
        "JACK",
        "QUEEN",
        "KING",
        "ACE",
        "SMALL_JOKER",
        "BIG_JOKER",
    ]
    suits = [arena_pb2.Suit.Name(value) for value in range(1, 6)]  # type: ignore[arg-type]
    assert suits == ["SPADES", "HEARTS", "CLUBS", "DIAMONDS", "JOKER"]
    assert "".join(name[0] for name in suits[:4]) == "SHCD"


def test_services_have_the_designed_shapes() -> None:
    services = arena_pb2.DESCRIPTOR.services_by_name
    play = services["Arena"].methods_by_name["Play"]
    assert (play.client_streaming, play.server_streaming) == (True, True)
    assert services["Arena"].methods_by_name["Check"].output_type.name == "Verdict"
    assert set(services["Matches"].methods_by_name) == {
        "Create",
        "List",
        "Get",
        "Cancel",
        "Watch",
        "FetchRecord",
    }
    assert services["Matches"].methods_by_name["Watch"].server_streaming


def test_a_request_round_trips() -> None:
    ten_spades = arena_pb2.Card(suit=arena_pb2.SPADES, rank=arena_pb2.TEN)
    message = arena_pb2.RefereeMessage(
        request=arena_pb2.Request(
            seq=7,
            kind=arena_pb2.PLAY,
            view=arena_pb2.View(seat=2, dealer=-1, hand=[ten_spades, ten_spades]),
            events=[
                arena_pb2.Event(
                    index=3, cards_played=arena_pb2.CardsPlayed(seat=1, cards=[ten_spades])
                )
            ],
            fallback=arena_pb2.Action(seq=7, cards=[ten_spades]),
            deadline_ms=1000,
            count=1,
        )
    )
    parsed = arena_pb2.RefereeMessage.FromString(message.SerializeToString())
    assert parsed == message
    assert parsed.WhichOneof("kind") == "request"
    assert parsed.request.view.dealer == -1
    assert parsed.request.events[0].WhichOneof("kind") == "cards_played"


def _undocumented(proto: descriptor_pb2.FileDescriptorProto) -> list[str]:
    """Names of messages, fields, enums, enum values, services and methods without a comment."""
    commented = {
        tuple(loc.path)
        for loc in proto.source_code_info.location
        if loc.leading_comments.strip() or loc.trailing_comments.strip()
    }
    missing: list[str] = []

    def check(path: tuple[int, ...], name: str) -> None:
        if path not in commented:
            missing.append(name)

    def walk_enum(path: tuple[int, ...], enum: descriptor_pb2.EnumDescriptorProto) -> None:
        check(path, enum.name)
        for i, value in enumerate(enum.value):
            # an enum's zero value may go unexplained when it is *_UNSPECIFIED
            if not value.name.endswith("_UNSPECIFIED"):
                check((*path, 2, i), f"{enum.name}.{value.name}")

    def walk_message(path: tuple[int, ...], message: descriptor_pb2.DescriptorProto) -> None:
        check(path, message.name)
        for i, field in enumerate(message.field):
            check((*path, 2, i), f"{message.name}.{field.name}")
        for i, enum in enumerate(message.enum_type):
            walk_enum((*path, 4, i), enum)
        for i, nested in enumerate(message.nested_type):
            if not nested.options.map_entry:
                walk_message((*path, 3, i), nested)

    for i, message in enumerate(proto.message_type):
        walk_message((4, i), message)
    for i, enum in enumerate(proto.enum_type):
        walk_enum((5, i), enum)
    for i, service in enumerate(proto.service):
        check((6, i), service.name)
        for j, method in enumerate(service.method):
            check((6, i, 2, j), f"{service.name}.{method.name}")
    return missing


def test_every_name_in_the_protocol_is_documented() -> None:
    for proto in codegen.describe().file:
        missing = _undocumented(proto)
        assert not missing, f"{proto.name}: add a comment to {', '.join(missing)}"
