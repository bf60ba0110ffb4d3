"""The access rules on their own: every RPC has a role, tokens and their files.

The attacks against a real server are in tests/test_security.py; this checks the table
and the token files directly, where a mistake is cheapest to see.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from arena.errors import ArenaError
from arena.server.access import (
    REQUIRED,
    Access,
    Refusal,
    Role,
    load_or_create_token,
    loose_permissions,
)
from arena.v1 import arena_pb2 as pb


def test_every_rpc_of_the_protocol_has_its_roles() -> None:
    methods = {
        f"/{service.full_name}/{method.name}"
        for service in pb.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    }
    assert methods <= set(REQUIRED), methods - set(REQUIRED)  # none left to default deny
    access = Access(organiser_tokens=("o",), spectator_tokens=("s",))
    for method, roles in REQUIRED.items():
        if method.startswith("/arena.v1.Matches/"):
            assert Role.SEAT not in roles and Role.ANONYMOUS not in roles
            assert access.check(method, [("authorization", "Bearer o")]) is Role.ORGANISER
    with pytest.raises(Refusal) as unknown:
        access.check("/arena.v1.Matches/Rename", [("authorization", "Bearer o")])
    assert unknown.value.code == grpc.StatusCode.PERMISSION_DENIED  # default deny


def test_a_seat_token_and_a_spectator_token_stay_in_their_roles() -> None:
    access = Access(("o",), ("s",), is_seat_token=lambda token: token == "seat")
    cancel = "/arena.v1.Matches/Cancel"
    for token, code, words in (
        ("seat", grpc.StatusCode.PERMISSION_DENIED, "a seat token is good only for"),
        ("s", grpc.StatusCode.PERMISSION_DENIED, "this token is a spectator's"),
        ("x", grpc.StatusCode.UNAUTHENTICATED, "unknown token"),
    ):
        with pytest.raises(Refusal) as refused:
            access.check(cancel, [("authorization", f"Bearer {token}")])
        assert refused.value.code == code and words in refused.value.message
    assert access.check("/arena.v1.Matches/Watch", [("authorization", "bearer s")]) is (
        Role.SPECTATOR
    )
    assert Access(open=True).role_of([]) is Role.ORGANISER


def test_a_token_file_is_made_private_once_then_read(tmp_path: Path) -> None:
    path = tmp_path / "new" / "organiser.token"
    token, created = load_or_create_token(path)
    assert created and len(token) >= 40
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert load_or_create_token(path) == (token, False)
    assert not loose_permissions(path)
    path.chmod(0o644)
    assert loose_permissions(path)
    path.write_text("\n\n")
    with pytest.raises(ArenaError, match="is empty"):
        load_or_create_token(path)
