"""The HTTP side of a real ``arena serve --http`` with real bots over gRPC (no browser):
metrics that move during a match, a spectator's page data and event stream that carry no
hidden card before the deal ends (checked against the dealt hands of the record), who
may open the pages, and ``arena show --html``'s single file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from webkit import ROOT, SPECTATOR_TOKEN, EventStream, Web, start_match, start_web

from arena.records import EventLine, read_record

pytestmark = pytest.mark.slow
CARD = re.compile(r'"([2-9TJQKA][SHCD]|SJ|BJ)"')


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    server = start_web(tmp_path_factory.mktemp("web"), "--spectator-delay", "1 trick")
    try:
        yield server
    finally:
        server.serve.stop()


def scrape(web: Web) -> dict[str, float]:
    status, text = web.get("/metrics", token=None)
    assert status == 200
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[sample.name + (f"{{{labels}}}" if labels else "")] = sample.value
    return values


def test_metrics_move_during_a_match(web: Web) -> None:
    assert web.get("/healthz", token=None) == (200, "ok\n")
    before = scrape(web)
    match = start_match(web, think_ms=5)
    try:
        deadline = time.monotonic() + 60
        during = scrape(web)
        while during["arena_decisions_total{kind=play}"] < 20 and time.monotonic() < deadline:
            time.sleep(0.3)
            during = scrape(web)
        assert during["arena_matches{state=running}"] >= 1
        assert during["arena_connected_seats"] == 4
        match.wait()
    finally:
        match.stop()
    time.sleep(0.5)
    after = scrape(web)
    for name in (
        "arena_decisions_total{kind=play}",
        "arena_decisions_total{kind=bury}",
        "arena_decision_latency_seconds_count",
        "arena_referee_overhead_seconds_count",
        "arena_record_write_seconds_count",
        "arena_grpc_received_bytes_total",
        "arena_grpc_sent_bytes_total",
    ):
        assert before.get(name, 0) < during[name] < after[name] or (
            name.endswith("bury}") and after[name] > before.get(name, 0)
        ), name
    assert after["arena_matches{state=finished}"] >= 1
    assert after["arena_connected_seats"] == 0
    assert after["arena_faults_total{kind=timeout}"] == 0


def _public_cards(event: dict[str, Any]) -> list[str]:
    """The cards the rules show everyone when this event happens (RULES.md §6, §7)."""
    kind = event["type"]
    if kind in ("bid_made", "cards_played"):
        return list(event["cards"])
    if kind == "throw_failed":
        return [*event["attempted"], *event["played"], *event["returned"]]
    if kind == "trump_declared":
        return list(event["revealed"])
    if kind == "deal_revealed":  # after the deal's end
        return [*(card for hand in event["hands"] for card in hand), *event["kitty"]]
    return []


def test_a_spectator_page_holds_no_hidden_card_before_the_deal_ends(web: Web) -> None:
    match = start_match(web, think_ms=40, seed=5)
    try:
        stream = EventStream(web, match.id)
        status, page = web.get(f"/matches/{match.id}")
        seen: list[dict[str, Any]] = []
        statuses = []
        for name, data in stream.messages():
            if name == "status":
                statuses.append(data)
            elif name == "message":
                seen.append(data)
                tricks = [e for e in seen if e["type"] == "trick_won"]
                if len(tricks) >= 3 or data["type"] == "deal_ended":
                    break
        stream.close()
        # the record is written as the match goes: the deal's hands are there already
        record = read_record(web.serve.records / f"{match.id}.jsonl")
    finally:
        match.stop()
    assert status == 200
    data = re.search(r'<script id="arena-data" type="application/json">(.*?)</script>', page)
    assert data is not None
    assert not CARD.findall(data.group(1)), "the live page's data holds cards"
    assert "deal_ended" not in [e["type"] for e in seen], "the deal ended too soon to check"
    assert statuses and statuses[0]["delay"].startswith("1 trick")

    # Against the truth: the record's dealt hands and kitty.
    full = [line.item.event.to_dict() for line in record.lines if isinstance(line.item, EventLine)]
    hands: dict[int, Counter[str]] = {s: Counter() for s in range(4)}
    for event in full:
        if event["type"] == "card_dealt":
            hands[event["seat"]][event["card"]] += 1
    kitty = next(e["cards"] for e in full if e["type"] == "kitty_buried")
    taken = next(e for e in full if e["type"] == "kitty_taken")
    hands[taken["seat"]] += Counter(taken["cards"])  # the dealer's hand after pickup

    assert not [e for e in seen if e["type"] == "card_dealt"]
    assert all(e["cards"] == [] for e in seen if e["type"] in ("kitty_taken", "kitty_buried"))
    shown = Counter(card for event in seen for card in _public_cards(event))
    in_stream = Counter(CARD.findall(stream.raw))
    assert in_stream == shown, f"cards in the stream beyond those shown: {in_stream - shown}"
    unplayed = sum(hands.values(), Counter()) - shown
    assert sum(unplayed.values()) > 60 and kitty, "nothing hidden left to leak: test too late"
    for event in seen:  # what the stream says a seat played, it did hold
        if event["type"] == "cards_played":
            assert not Counter(event["cards"]) - hands[event["seat"]]


def test_who_may_open_the_pages(web: Web) -> None:
    assert web.get("/", token=None)[0] == 401
    assert web.get("/", token="not-a-token")[0] == 401
    assert web.get("/api/matches")[0] == 200
    assert web.get("/", token=web.serve.token)[0] == 200
    assert web.get("/matches/m-nosuchmatch")[0] == 404
    match = start_match(web, think_ms=20)
    try:
        status, text = web.get("/", token=match.tokens[0])  # a seat token is no page pass
        assert status == 403, text
        rows = json.loads(web.get("/api/matches")[1])
        assert match.id in [r["id"] for r in rows]
    finally:
        match.stop()


def test_show_html_writes_one_self_contained_file(tmp_path: Path) -> None:
    record = tmp_path / "m.jsonl"
    out = tmp_path / "m.html"
    subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "match", "--seed", "3", "--deals", "1",
         "--record", str(record), *["--bot", "builtin:random"] * 4],
        check=True, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "show", str(record), "--html", str(out),
         "--seat", "2"],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", text), "the file fetches something"
    assert "@import" not in text and "url(" not in text
    data = json.loads(
        re.search(r'<script id="arena-data" type="application/json">(.*?)</script>', text).group(1)  # type: ignore[union-attr]
    )
    dealt = {e["seat"] for e in data["events"] if e["type"] == "card_dealt"}
    assert dealt == {2}, "--seat 2 shows only seat 2's hand"
    assert SPECTATOR_TOKEN not in text


def test_matches_watch_draws_the_table_in_a_terminal(web: Web) -> None:
    match = start_match(web, think_ms=1, seed=9)
    try:
        match.wait()
    finally:
        match.stop()
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "matches", "watch", match.id, "--table",
         "--server", web.serve.target, "--organiser-token-file", str(web.serve.token_file)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
        env={**os.environ, "COLUMNS": "120"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"match {match.id}" in out and "ann (0)" in out and "dan (3)" in out
    assert "match over:" in out and "trump" in out
    assert re.search(r"(10|[2-9JQKA])[♠♥♣♦]", out), "no card drawn"
