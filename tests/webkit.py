"""A real ``arena serve --http`` with real bots, its event stream, and a real Chromium.

:func:`start_web` runs the command a user would (spectator token, organiser token file,
``--http`` on a free port); :func:`start_match` creates a match over gRPC and starts
four ``tests/slow_bot.py`` processes (random bots that think a little, so a trick can be
seen while it is played); :class:`EventStream` reads ``/matches/ID/events`` as a browser
would. :func:`chromium` launches Debian's Chromium through Playwright (never a
downloaded browser) or skips naming the package. Screenshots go to
``artifacts/screenshots/`` (README, "Screenshots"; git-ignored, kept by CI).
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from servekit import ROOT, Serve, bearer, free_port, start_serve

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

SPECTATOR_TOKEN = "spectator-token-for-the-web-tests"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclasses.dataclass
class Web:
    serve: Serve
    http: str  # "http://127.0.0.1:PORT"

    def get(self, path: str, token: str | None = SPECTATOR_TOKEN) -> tuple[int, str]:
        request = urllib.request.Request(self.http + path)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, response.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode("utf-8")

    def stub(self) -> pb_grpc.MatchesStub:
        return pb_grpc.MatchesStub(grpc.insecure_channel(self.serve.target))


def start_web(folder: Path, *options: str) -> Web:
    spectator = folder / "spectator.token"
    folder.mkdir(parents=True, exist_ok=True)
    spectator.write_text(SPECTATOR_TOKEN + "\n")
    spectator.chmod(0o600)
    port = free_port()
    serve = start_serve(
        folder, "--http", f"127.0.0.1:{port}", "--spectator-token-file", str(spectator), *options
    )
    web = Web(serve, f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the gRPC port opens first; then the HTTP one
        try:
            if web.get("/healthz", None)[0] == 200:
                return web
        except OSError:
            time.sleep(0.1)
    serve.stop()
    raise AssertionError("the HTTP side did not start")


@dataclasses.dataclass
class Match:
    id: str
    bots: list[subprocess.Popen[bytes]]
    tokens: list[str]

    def wait(self, timeout: float = 120) -> None:
        for bot in self.bots:
            bot.wait(timeout=timeout)

    def stop(self) -> None:
        for bot in self.bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()


def start_match(web: Web, deals: int = 1, seed: int = 11, think_ms: int = 40) -> Match:
    """A match over gRPC, created by the organiser, played by four slow random bots."""
    created = web.stub().Create(
        pb.CreateMatchRequest(deals=deals, seed=seed, seat_names=["ann", "bob", "cat", "dan"]),
        metadata=bearer(web.serve.token),
        timeout=20,
    )
    env = {**os.environ, "ARENA_THINK_MS": str(think_ms)}
    bot = [sys.executable, str(ROOT / "tests" / "slow_bot.py"), "--server", web.serve.target]
    bots = [
        subprocess.Popen(
            [*bot, "--token", token, "--seed", str(i)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for i, token in enumerate(created.seat_tokens)
    ]
    return Match(created.match_id, bots, list(created.seat_tokens))


class EventStream:
    """``/matches/ID/events`` read line by line (Server-Sent Events), keeping every byte."""

    def __init__(self, web: Web, match_id: str, token: str = SPECTATOR_TOKEN) -> None:
        host = web.http.removeprefix("http://")
        self.conn = http.client.HTTPConnection(host, timeout=60)
        self.conn.request(
            "GET", f"/matches/{match_id}/events", headers={"Authorization": f"Bearer {token}"}
        )
        self.response = self.conn.getresponse()
        self.raw = ""

    def messages(self) -> Iterator[tuple[str, Any]]:
        """``(event name, data)`` pairs: ``message`` for a match event, ``status``, ``end``."""
        name, data = "message", ""
        while True:
            line = self.response.fp.readline().decode("utf-8")
            if not line:
                return
            self.raw += line
            line = line.rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif not line and data:
                yield name, json.loads(data)
                name, data = "message", ""

    def close(self) -> None:
        self.conn.close()


def chromium_path() -> str:
    """Debian's Chromium, or a skip naming the package."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("Chromium is not installed (Debian package chromium; .ci/run installs it)")


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
