"""The pages in a real headless Chromium (Debian's, driven by Playwright; no browser is
downloaded): the match list shows a running match, the live page shows a trick's cards as
real bots play them over gRPC (checked against the record), the replay viewer steps and
jumps, and ``arena show --html``'s file works from ``file://`` with networking off.
Screenshots land in ``artifacts/screenshots/``. Skips, naming the package, without
Chromium or Playwright."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webkit import (
    CHROMIUM_FLAGS,
    ROOT,
    SPECTATOR_TOKEN,
    Web,
    chromium_path,
    screenshot,
    start_match,
    start_web,
)

from arena.records import EventLine, read_record

pytestmark = pytest.mark.slow
# Sums Chromium's layout-shift entries (the Cumulative Layout Shift of web.dev) as they come.
# The trick on the table, read at one instant, once it holds at least two plays.
SNAPSHOT = """() => {
  const plays = {};
  for (const s of [0, 1, 2, 3])
    plays[s] = [...document.querySelectorAll(`#play${s} .c`)].map(c => c.dataset.card);
  const n = Object.values(plays).filter(p => p.length).length;
  return n >= 2 ? { trick: document.querySelector("#trickno").textContent, plays } : null;
}"""
CLS_PROBE = """
window.__shift = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shift += e.value;
}).observe({ type: "layout-shift", buffered: true });
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the Python package playwright is not installed"
    )
    # Playwright gives every launch a fresh temporary profile (its --user-data-dir).
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Web]:
    server = start_web(tmp_path_factory.mktemp("webb"))
    try:
        yield server
    finally:
        server.serve.stop()


def test_list_and_live_page_follow_a_match_played_by_real_bots(browser: Any, web: Web) -> None:
    match = start_match(web, think_ms=60, seed=21)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script(CLS_PROBE)
    try:
        page.goto(f"{web.http}/?token={SPECTATOR_TOKEN}")  # kept in a cookie from now on
        assert "token=" not in page.url
        row = page.locator("tr", has_text=match.id)
        row.filter(has_text="running").wait_for(timeout=30_000)  # the list reloads itself
        screenshot(page, "match-list")

        page.goto(f"{web.http}/matches/{match.id}")
        seen = page.wait_for_function(SNAPSHOT, timeout=30_000).json_value()  # one instant
        trick, shown = int(seen["trick"]), {int(k): v for k, v in seen["plays"].items()}
        screenshot(page, "live-table")
        assert page.get_attribute(".slot .c", "aria-label")  # "10 of hearts", read aloud

        page.wait_for_timeout(1500)  # more cards played
        # no layout shift as cards are played: Chromium's own measure (CLS; < 0.1 is "good")
        assert page.evaluate("window.__shift") < 0.05
        page.wait_for_selector("text=finished", timeout=90_000)  # the stream's end
        # the deal is over: the hands as dealt, face up
        page.wait_for_function(
            "[0,1,2,3].every(s => document.querySelectorAll(`#seat${s} .hand .c`).length == 25)"
        )
        screenshot(page, "live-deal-over")
        match.wait()
        page.reload()  # a finished match: the replay viewer
        page.wait_for_selector("#next")
        assert page.inner_text("#step").startswith("step 1 /")
        for _ in range(5):
            page.click("#next")
        page.click("#prev")
        assert page.inner_text("#step").startswith("step 5 /")
    finally:
        page.close()
        match.stop()
    record = read_record(web.serve.records / f"{match.id}.jsonl")
    played = {
        (e.seat, tuple(c.code for c in e.cards))
        for line in record.lines
        if isinstance(line.item, EventLine)
        and (e := line.item.event).type == "cards_played"
        and getattr(e, "trick", None) == trick
    }
    shown_plays = {(seat, tuple(cards)) for seat, cards in shown.items() if cards}
    assert len(shown_plays) >= 2 and shown_plays <= played, (shown_plays, played)


def test_single_file_replay_works_offline_and_steps_and_jumps(browser: Any, tmp_path: Path) -> None:
    record, out = tmp_path / "m.jsonl", tmp_path / "m.html"
    subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "match", "--seed", "7", "--deals", "2",
         "--record", str(record), *["--bot", "builtin:greedy"] * 4],
        check=True, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "show", str(record), "--html", str(out)],
        check=True, capture_output=True, cwd=ROOT,
    )  # fmt: skip
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(out.as_uri())
        page.wait_for_selector("#next")
        assert page.inner_text("#deal") == "1"
        assert page.locator("#seat0 .hand .c").count() > 0  # all four hands face up
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        assert page.inner_text("#step").startswith("step 2 /")
        page.select_option("#jump-deal", label="deal 2")
        assert page.inner_text("#deal") == "2"
        page.keyboard.press("ArrowDown")  # the next trick
        page.keyboard.press("ArrowDown")
        assert page.inner_text("#trickno") in ("1", "2")
        page.select_option("#seat-filter", value="1")  # only what seat 1 saw
        assert page.locator("#seat0 .hand .c").count() == 0
        assert page.locator("#seat1 .hand .c").count() > 0
        screenshot(page, "replay-file")
        page.click("h1")  # the keys are the page's, not a focused list's
        page.keyboard.press("PageUp")  # back to this deal's start, then to the one before
        page.keyboard.press("PageUp")
        assert page.inner_text("#deal") == "1"
    finally:
        context.close()
    assert not errors
    assert all(url.startswith("file:") for url in requests), requests
