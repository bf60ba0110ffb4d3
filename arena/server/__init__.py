"""The arena server's front door: what the layers above it (batch, cli, http,
competition, botzone) use, so that they never reach into its modules.

Two threads, one direction each (docs/architecture.md): the referee and the match host
run in trio (:class:`MatchHost`, domain values only, no protobuf); the gRPC services run
on grpc.aio in their own thread and are the one place where wire messages are built and
read (:mod:`arena.server.wire`, :mod:`arena.server.convert`). :func:`open_arena_server`
runs both.

Names are loaded on first use (PEP 562), so ``import arena.server`` stays cheap for a
command that needs only, say, :class:`Limits`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers
    from arena.server.access import (
        Access,
        Refusal,
        Role,
        default_token_file,
        load_or_create_token,
        loose_permissions,
        read_token_file,
    )
    from arena.server.app import ArenaServer, Extension, Plugin, open_arena_server
    from arena.server.archive import live_info
    from arena.server.bridge import AsyncioOutbox, call_in_trio_nowait, run_in_trio
    from arena.server.convert import (
        cards_from_pb,
        cards_to_pb,
        event_to_pb,
        rules_from_pb,
        rules_to_pb,
        time_control_from_pb,
        time_control_to_pb,
    )
    from arena.server.host import (
        PROTOCOL,
        HostedMatch,
        MatchHost,
        MatchSpec,
        MatchState,
        RecorderFactory,
        token_hash,
    )
    from arena.server.limits import (
        LimitExceeded,
        Limits,
        add_limit_options,
        limits_of,
        records_problem,
    )
    from arena.server.recording import record_factory
    from arena.server.spectate import DelayedFeed, SpectatorDelay
    from arena.server.tls import ServerTls, channel_credentials
    from arena.server.workers.pool import die_with_parent
    from arena.server.workers.run import WorkersServer, open_workers_server

# name -> the module that defines it
_FRONT: dict[str, str] = {
    "Access": "access",
    "Refusal": "access",
    "Role": "access",
    "default_token_file": "access",
    "load_or_create_token": "access",
    "loose_permissions": "access",
    "read_token_file": "access",
    "ArenaServer": "app",
    "Extension": "app",
    "Plugin": "app",
    "open_arena_server": "app",
    "live_info": "archive",
    "AsyncioOutbox": "bridge",
    "call_in_trio_nowait": "bridge",
    "run_in_trio": "bridge",
    "cards_from_pb": "convert",
    "cards_to_pb": "convert",
    "event_to_pb": "convert",
    "rules_from_pb": "convert",
    "rules_to_pb": "convert",
    "time_control_from_pb": "convert",
    "time_control_to_pb": "convert",
    "PROTOCOL": "host",
    "HostedMatch": "host",
    "MatchHost": "host",
    "MatchSpec": "host",
    "MatchState": "host",
    "RecorderFactory": "host",
    "token_hash": "host",
    "LimitExceeded": "limits",
    "Limits": "limits",
    "add_limit_options": "limits",
    "limits_of": "limits",
    "records_problem": "limits",
    "record_factory": "recording",
    "DelayedFeed": "spectate",
    "SpectatorDelay": "spectate",
    "ServerTls": "tls",
    "channel_credentials": "tls",
    "die_with_parent": "workers.pool",
    "WorkersServer": "workers.run",
    "open_workers_server": "workers.run",
}

__all__ = [
    "PROTOCOL",
    "Access",
    "ArenaServer",
    "AsyncioOutbox",
    "DelayedFeed",
    "Extension",
    "HostedMatch",
    "LimitExceeded",
    "Limits",
    "MatchHost",
    "MatchSpec",
    "MatchState",
    "Plugin",
    "RecorderFactory",
    "Refusal",
    "Role",
    "ServerTls",
    "SpectatorDelay",
    "WorkersServer",
    "add_limit_options",
    "call_in_trio_nowait",
    "cards_from_pb",
    "cards_to_pb",
    "channel_credentials",
    "default_token_file",
    "die_with_parent",
    "event_to_pb",
    "limits_of",
    "live_info",
    "load_or_create_token",
    "loose_permissions",
    "open_arena_server",
    "open_workers_server",
    "read_token_file",
    "record_factory",
    "records_problem",
    "rules_from_pb",
    "rules_to_pb",
    "run_in_trio",
    "time_control_from_pb",
    "time_control_to_pb",
    "token_hash",
]


def __getattr__(name: str) -> Any:
    module = _FRONT.get(name)
    if module is None:  # a submodule (``from arena.server import convert``) or a typo
        raise AttributeError(f"module 'arena.server' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"arena.server.{module}"), name)
    globals()[name] = value
    return value
