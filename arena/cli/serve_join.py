"""``arena serve --join FRONT``: a worker on another host joins a running front.

The worker listens on ``--listen`` (its own address for bots, and the one the front
calls it on), opens ``Workers.Join`` to the front with the organiser's token
(``--organiser-token-file``: the front's file, copied), takes the front's access
settings and limits from the stream, and serves the matches the front gives it: the
same worker as a local one (:mod:`arena.cli.serve_worker`), its stdin and stdout
replaced by the stream (docs/workers.md, :mod:`arena.server.workers.join`). It stops
when the stream ends (the front stopped or is gone) or on Ctrl-C; its records stay in
its own ``--records``.

TLS: the worker and the front speak TLS together or not at all. A worker with
``--tls-cert``/``--tls-key`` serves its bots (and the front's calls) with them and dials
the front with TLS, trusting ``--join-ca`` (default: the system's roots) and presenting
its own certificate when the front asks for one (a front with ``--tls-client-ca``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import queue
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import grpc
import trio

from arena.cli.serve_worker import obey, work, worker_limits
from arena.cli.serve_workers import advertised
from arena.errors import ArenaError
from arena.server import Access, Limits, MatchHost, ServerTls, SpectatorDelay
from arena.server.tls import channel_credentials
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc


class Upstream(io.TextIOBase):
    """The worker's report "file": each line written becomes a ``WorkerLine`` up the
    stream (and the ``ready`` line is also shown on stderr, with the address)."""

    def __init__(self, up: queue.SimpleQueue[pb.WorkerLine | None]) -> None:
        self.up = up
        self.buffer_ = ""

    def write(self, text: str) -> int:
        self.buffer_ += text
        *lines, self.buffer_ = self.buffer_.split("\n")
        for line in lines:
            if line.startswith('{"ready"'):
                address = json.loads(line)["ready"]
                print(f"arena serve: a worker of the front, serving on {address}",
                      file=sys.stderr, flush=True)  # fmt: skip
            self.up.put(pb.WorkerLine(json=line))
        return len(text)


# said after a refusal for want of TLS trust (the gRPC detail names only the handshake)
TLS_HINT = (
    " (with TLS: --join-ca must be the CA that signed the front's certificate, and a "
    "front with --tls-client-ca must trust this worker's --tls-cert)"
)


PLAIN_HINT = " (a TLS front needs a worker with --tls-cert, --tls-key and --join-ca)"
FIRST_ANSWER_S = 10.0  # a front answers a Join at once (it sends the shared settings)


def run_join(args: argparse.Namespace, access: Access, tls: ServerTls | None) -> int:
    if not access.organiser_token:
        print("arena serve: --join needs the front's organiser token (--organiser-token-file)",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.join_ca and tls is None:
        print("arena serve: --join-ca: a worker of a TLS front serves TLS too: give it "
              "--tls-cert and --tls-key (a certificate for its --advertise name)",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        with contextlib.suppress(KeyboardInterrupt):
            trio.run(_join, args, access.organiser_token, tls)
    except ArenaError as exc:
        print(f"arena serve: {exc}", file=sys.stderr)
        return 1
    return 0


async def _join(args: argparse.Namespace, token: str, tls: ServerTls | None) -> None:
    up: queue.SimpleQueue[pb.WorkerLine | None] = queue.SimpleQueue()

    def lines() -> Iterator[pb.WorkerLine]:
        while (line := up.get()) is not None:
            yield line

    # its own certificate is its client certificate, if the front asks for one
    channel = (
        grpc.secure_channel(
            args.join, channel_credentials(args.join_ca, args.tls_cert, args.tls_key)
        )
        if tls is not None
        else grpc.insecure_channel(args.join)
    )
    call = pb_grpc.WorkersStub(channel).Join(
        lines(), metadata=(("authorization", f"Bearer {token}"),)
    )
    hint = TLS_HINT if tls is not None else PLAIN_HINT
    first: pb.WorkerLine | None = None
    try:
        # a deadline on the first answer only (the stream lives as long as the worker):
        # a plaintext client of a TLS front would otherwise wait for ever
        with trio.move_on_after(FIRST_ANSWER_S):
            first = await trio.to_thread.run_sync(lambda: next(iter(call)), abandon_on_cancel=True)
    except grpc.RpcError as exc:
        up.put(None)
        channel.close()
        code = exc.code()
        raise ArenaError(
            f"the front at {args.join} did not take this worker: "
            f"{code.name}: {exc.details()}" + (hint if code.name == "UNAVAILABLE" else "")
        ) from None
    if first is None:
        up.put(None)
        call.cancel()  # type: ignore[no-untyped-call]
        channel.close()
        raise ArenaError(
            f"the front at {args.join} did not take this worker: no answer in "
            f"{FIRST_ANSWER_S:g} s" + hint
        )
    shared: dict[str, Any] = json.loads(first.json)["settings"]
    access = Access(
        tuple(shared["organiser_tokens"]),
        tuple(shared["spectator_tokens"]),
        shared["open"],
        SpectatorDelay(*shared["spectator_delay"]),
    )
    limits = worker_limits(Limits(**shared["limits"]))
    settings = {
        "listen": args.listen,
        "records": args.records,
        "resume": [],  # its matches die with it: the front cannot resume them elsewhere
        "http": None,
        "control": None,
        "advertise": advertised(args.listen.rsplit(":", 1)[0], args.advertise),
        "cpu_pinning": args.cpu_pinning,  # this host's: a joined worker is its first
    }
    Path(args.records).mkdir(parents=True, exist_ok=True)

    refused: list[str] = []  # the front ended the stream on purpose (it cannot call us)

    async def orders(scope: trio.CancelScope, host: MatchHost, report: IO[str]) -> None:
        def pump() -> None:
            try:
                for line in call:
                    trio.from_thread.run_sync(obey, host, report, line.json.encode())
            except grpc.RpcError as exc:
                if exc.code() is grpc.StatusCode.FAILED_PRECONDITION:
                    refused.append(f"{exc.code().name}: {exc.details()}")

        await trio.to_thread.run_sync(pump, abandon_on_cancel=True)
        if not refused:
            print(f"arena serve: the front at {args.join} is gone; stopping", file=sys.stderr)
        scope.cancel()

    try:
        await work(settings, access, tls, limits, cast(IO[str], Upstream(up)), orders)
    finally:
        up.put(None)
        call.cancel()  # type: ignore[no-untyped-call]
        channel.close()
    if refused:
        raise ArenaError(f"the front at {args.join} did not take this worker: {refused[0]}")


__all__ = ["run_join"]
