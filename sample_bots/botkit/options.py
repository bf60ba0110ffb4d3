"""The command line every botkit bot shares, TLS channels and the ``--transcript`` file.

:func:`parse_args` remembers what :func:`botkit.run` needs beyond its arguments (TLS,
the lobby's bot key, the transcript, which client) in :data:`settings`, so a bot's
``main`` stays three lines.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import grpc.aio
from google.protobuf import text_format
from google.protobuf.message import Message

from arena.v1 import arena_pb2 as pb

CLIENTS = ("asyncio", "sync")
# No bandwidth-delay pings: the referee dates an answer by the connection's latest data,
# and a ping gRPC sends after an answer would date it, and so the time charged, late
# (docs/protocol.md, "Time per decision"). Answers are small: the window never matters.
CHANNEL_OPTIONS = (("grpc.http2.bdp_probe", 0),)


@dataclass(frozen=True)
class TlsFiles:
    """How to reach the referee: plaintext, or TLS trusting ``ca`` (None: the system's
    roots) and presenting ``cert``/``key`` when the server asks for a client certificate."""

    enabled: bool = False
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    def _credentials(self) -> grpc.ChannelCredentials:
        def read(path: str | None) -> bytes | None:
            return None if path is None else Path(path).read_bytes()

        return grpc.ssl_channel_credentials(read(self.ca), read(self.key), read(self.cert))

    def channel(self, server: str) -> grpc.Channel:
        """A blocking channel (the sync client)."""
        if not self.enabled:
            return grpc.insecure_channel(server, CHANNEL_OPTIONS)
        return grpc.secure_channel(server, self._credentials(), CHANNEL_OPTIONS)

    def aio_channel(self, server: str) -> grpc.aio.Channel:
        """An asyncio channel (the asyncio client); call in a running event loop."""
        if not self.enabled:
            return grpc.aio.insecure_channel(server, CHANNEL_OPTIONS)
        return grpc.aio.secure_channel(server, self._credentials(), CHANNEL_OPTIONS)


def _env_tls() -> TlsFiles:
    on = os.environ.get("ARENA_TLS", "") not in ("", "0")  # ARENA_TLS=1: TLS, system roots
    return TlsFiles(
        on or bool(os.environ.get("ARENA_TLS_CA")),
        os.environ.get("ARENA_TLS_CA") or None,
        os.environ.get("ARENA_TLS_CERT") or None,
        os.environ.get("ARENA_TLS_KEY") or None,
    )


@dataclass
class Settings:
    """What ``parse_args`` read for ``run`` (or the environment, without it)."""

    tls: TlsFiles = field(default_factory=_env_tls)
    transcript: str | None = None  # --transcript FILE
    lobby: tuple[str, int] | None = None  # --bot-key and --parallel
    client: str = os.environ.get("ARENA_BOT_CLIENT", "asyncio")  # --client
    verdicts: str = "faults"  # --verdicts: "faults" (acks ride along) or "every" answer


settings = Settings()


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    add = parser.add_argument
    add(
        "--server",
        default=os.environ.get("ARENA_SERVER", "127.0.0.1:50051"),
        help="referee address host:port (default $ARENA_SERVER)",
    )
    add(
        "--token",
        default=os.environ.get("ARENA_TOKEN", ""),
        help="this seat's token (default $ARENA_TOKEN)",
    )
    add(
        "--bot-key",
        default=os.environ.get("ARENA_BOT_KEY", ""),
        help="a registered bot's key (default $ARENA_BOT_KEY): wait in the server's lobby and "
        "play every match it is seated in, instead of one match with --token",
    )
    add(
        "--parallel",
        type=int,
        default=1,
        metavar="N",
        help="with --bot-key: matches to play at once (default 1)",
    )
    add("--name", default=None, help="the name shown in results")
    add("--seed", type=int, default=None, help="seed for the bot's own choices")
    add(
        "--transcript",
        default=os.environ.get("ARENA_TRANSCRIPT"),
        metavar="FILE",
        help="append every message received and sent to FILE, in protobuf text format",
    )
    add(
        "--client",
        choices=CLIENTS,
        default=settings.client,
        help="asyncio (default, $ARENA_BOT_CLIENT): grpc.aio on one event loop, the least "
        "CPU per decision; sync: the simple blocking client (grpcio threads), decide may "
        "block",
    )
    add(
        "--verdicts",
        choices=("faults", "every"),
        default="faults",
        help="faults (default): a Verdict only for a fault, an accepted answer's "
        "acknowledgement rides on the next message; every: a Verdict for every answer "
        "(protocol 1's first behaviour)",
    )
    add(
        "--tls",
        action="store_true",
        default=settings.tls.enabled,
        help="connect with TLS (implied by --tls-ca; default $ARENA_TLS)",
    )
    add(
        "--tls-ca",
        default=os.environ.get("ARENA_TLS_CA") or None,
        metavar="PEM",
        help="trust the server certificates this CA signed (default $ARENA_TLS_CA)",
    )
    add(
        "--tls-cert",
        default=os.environ.get("ARENA_TLS_CERT") or None,
        metavar="PEM",
        help="this bot's client certificate, for mutual TLS (default $ARENA_TLS_CERT)",
    )
    add(
        "--tls-key",
        default=os.environ.get("ARENA_TLS_KEY") or None,
        metavar="PEM",
        help="the client certificate's key (default $ARENA_TLS_KEY)",
    )
    add(
        "--reconnect",
        type=float,
        default=30.0,
        metavar="S",
        help="keep reconnecting this long after a lost connection (default 30)",
    )
    args = parser.parse_args()
    settings.transcript = args.transcript
    lobby = args.bot_key and not args.token
    settings.lobby = (args.bot_key, max(1, args.parallel)) if lobby else None
    settings.tls = TlsFiles(
        args.tls or bool(args.tls_ca or args.tls_cert), args.tls_ca, args.tls_cert, args.tls_key
    )
    settings.client = args.client
    settings.verdicts = args.verdicts
    return args  # fmt: skip


def log_message(arrow: str, message: Message) -> None:
    """Append one message to the transcript (the seat token in a Hello is masked)."""
    if settings.transcript is None:
        return
    if isinstance(message, pb.BotMessage) and message.HasField("hello"):
        masked = pb.BotMessage()
        masked.CopyFrom(message)
        masked.hello.token = "<seat token>"
        message = masked
    stamp = time.strftime("%H:%M:%S") + f".{int(time.time() * 1000) % 1000:03d}"
    with open(settings.transcript, "a", encoding="utf-8") as out:
        out.write(f"# {stamp} {arrow} {type(message).__name__}\n")
        text = text_format.MessageToString(message, as_utf8=True)
        out.write(_ONE_LINE_CARD.sub(r"{ suit: \1 rank: \2 }", text))


# A Card block (four lines in text format) rewritten on one line, still valid text format.
_ONE_LINE_CARD = re.compile(r"\{\n\s*suit: (\w+)\n\s*rank: (\w+)\n\s*\}")
