"""The plumbing every Python bot needs: connect, say hello, answer requests.

Copy this folder beside your bot (``sample_bots/random_bot.py`` is the template). A bot
is one function, ``decide(turn, table) -> list of cards`` (empty = pass a bid):

- ``turn`` (:class:`Turn`) is the referee's request with its cards ready:
  ``turn.hand``, ``turn.lead``, ``turn.plays`` (the trick so far), ``turn.bids`` (legal
  bids), ``turn.fallback_cards``, and ``turn.order`` for what depends on trump
  (``is_trump``, ``lane_of`` — the effective suit —, ``key_of``, ``sort``). The wire
  fields are there too (``turn.kind``, ``turn.count``, ``turn.view``, ``turn.events``,
  ``turn.request``), so a ``decide(request, table)`` written for the raw ``pb.Request``
  runs unchanged.
- a card is an ``arena.rules.Card``: one of 54 interned, immutable faces with ``suit``,
  ``rank``, ``points``, ``code`` (``TS``, ``SJ``) — what the referee's own rules library
  (``arena.rules``: ``legal_follow``, ``check_follow``, ``trick_winner``) reads, so a
  move can be checked before it is sent. Cards come off the wire by table lookup.
- ``table`` (:class:`Table`) is what the bot knows between requests: its seat, the
  match's rules, its fault count.

:func:`run` connects to the referee (``--server``/``ARENA_SERVER``) with the seat token
(``--token``/``ARENA_TOKEN``), answers every request with the same sequence number, and
returns when the match ends. Two clients, the same behaviour:

- **asyncio** (the default): grpc.aio on one event loop, the least CPU per decision.
- **sync** (``--client sync``, ``ARENA_BOT_CLIENT=sync``, or :func:`run_sync`): blocking
  gRPC, the simple option; ``decide`` may block.

Both ask the referee for a Verdict only on a fault (an accepted answer's
acknowledgement rides on the next message; ``--verdicts every`` asks for one per
answer). With a registered bot's key (``--bot-key``/``ARENA_BOT_KEY``,
docs/competition.md) the bot waits in the server's lobby instead and plays every match
it is seated in, ``--parallel`` at once. Against a TLS server it trusts
``--tls-ca``/``ARENA_TLS_CA`` (``--tls`` alone: the system's roots) and, for mutual TLS,
presents ``--tls-cert``/``--tls-key`` (``ARENA_TLS_CERT``/``ARENA_TLS_KEY``).
"""

from __future__ import annotations

import asyncio
import sys

from botkit.aio import lobby_async, play_async
from botkit.cards import FROM_WIRE, TO_WIRE, Table, Turn, card_from_pb, card_to_pb, cards, to_pb
from botkit.options import TlsFiles, parse_args, settings
from botkit.seat import Decide, Lobby, Seat
from botkit.sync import play_lobby_sync, run_sync


def run(
    decide: Decide,
    name: str,
    server: str,
    token: str,
    version: str = "1.0",
    reconnect_for: float = 30.0,
) -> int:
    """Play one match; returns 0 when it ended normally.

    If the connection drops (the referee restarted, the network blinked), it connects
    again with the same token for up to ``reconnect_for`` seconds: the referee re-sends
    the pending request, and every request carries the whole view, so nothing is lost.
    The client is the one ``parse_args`` chose (``--client``; asyncio by default).
    """
    if not token and settings.lobby is not None:
        bot_key, parallel = settings.lobby
        return play_lobby(decide, name, server, bot_key, parallel, version, reconnect_for)
    if not token:
        print(f"{name}: no seat token (--token or ARENA_TOKEN)", file=sys.stderr)
        return 2
    if settings.client == "sync":
        return run_sync(decide, name, server, token, version, reconnect_for)
    return asyncio.run(play_async(decide, name, server, token, version, reconnect_for))


def play_lobby(
    decide: Decide,
    name: str,
    server: str,
    bot_key: str,
    parallel: int = 1,
    version: str = "1.0",
    reconnect_for: float = 30.0,
) -> int:
    """Wait in the server's lobby with a bot key and play every seat it offers, until
    the lobby is gone for longer than ``reconnect_for`` seconds (a server restart is
    shorter) or the key is refused (returns 1).

    A seat offered again (after a restart, or after this bot rejoined) while it is
    still being played is not played twice.
    """
    lobby = Lobby(name, server, bot_key, parallel, version, reconnect_for)
    if settings.client == "sync":
        return play_lobby_sync(decide, lobby)
    return asyncio.run(lobby_async(decide, lobby))


__all__ = [
    "FROM_WIRE",
    "TO_WIRE",
    "Decide",
    "Seat",
    "Table",
    "TlsFiles",
    "Turn",
    "card_from_pb",
    "card_to_pb",
    "cards",
    "parse_args",
    "play_async",
    "play_lobby",
    "run",
    "run_sync",
    "settings",
    "to_pb",
]
