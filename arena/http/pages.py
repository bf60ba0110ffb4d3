"""The HTML of the pages: one table layout for the live page, the replay viewer and the
single file of ``arena show --html``.

Each page is self-contained: the stylesheet and the script (``static/``) are inlined and
the data rides along as JSON in ``<script type="application/json">``, so a page needs no
second request, no CDN and no font, and opens from ``file://`` offline. The data is only
what the caller passes: the live page holds no card at all (its cards arrive through the
public event stream), a replay holds the events of a finished match.
"""

from __future__ import annotations

import html
import json
from functools import cache
from importlib import resources
from typing import Any

from arena.rules import RuleSet, team_of


@cache
def _asset(name: str) -> str:
    return (resources.files("arena.http") / "static" / name).read_text(encoding="utf-8")


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element early."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def table_config(rules: RuleSet, seat_names: list[str]) -> dict[str, Any]:
    return {
        "seat_names": seat_names,
        "hand_size": rules.hand_size,
        "kitty_size": rules.kitty_size,
    }


def _shell(title: str, body: str, data: dict[str, Any] | None = None, script: bool = True) -> str:
    data_tag = (
        f'<script id="arena-data" type="application/json">{_json_for_script(data)}</script>\n'
        if data is not None
        else ""
    )
    js = f"<script>{_asset('table.js')}</script>\n" if script else ""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{_asset('table.css')}</style>\n"
        f"</head><body>\n{body}\n{data_tag}{js}</body></html>\n"
    )


def _seat(seat: int, name: str) -> str:
    return (
        f'<section class="seat" id="seat{seat}" aria-label="seat {seat}">'
        f"<h2>{html.escape(name)} <small>(seat {seat}, team {team_of(seat)})</small></h2>"
        '<div class="meta"><span class="level"></span><span class="role"></span>'
        '<span class="won"></span><span class="bank"></span><span class="faults"></span></div>'
        '<div class="hand"></div></section>'
    )


def _table(seat_names: list[str]) -> str:
    seats = "".join(
        _seat(i, seat_names[i] if i < len(seat_names) else f"seat {i}") for i in range(4)
    )
    slots = "".join(
        f'<div class="slot" id="play{i}" aria-label="seat {i} plays"></div>' for i in range(4)
    )
    return (
        f'<main class="table">{seats}<section class="center" aria-label="the trick">{slots}'
        '<div class="mid">trick <span id="trickno">—</span></div>'
        '<dl class="info"><div><dt>deal</dt><dd id="deal">—</dd></div>'
        '<div><dt>trump</dt><dd id="trump">—</dd></div>'
        '<div><dt>attackers\' points</dt><dd id="points">0</dd></div>'
        '<div><dt>levels (team 0 / 1)</dt><dd id="levels">2 / 2</dd></div>'
        '<div><dt>bids</dt><dd><ul id="bids"></ul></dd></div>'
        '<div><dt>kitty</dt><dd id="kitty">—</dd></div></dl></section></main>'
        '<div class="bottom"><ol id="log" aria-live="polite" aria-label="what happened"></ol>'
        '<p id="result" role="status"></p></div>'
    )


def live_page(match_id: str, config: dict[str, Any], events_url: str) -> str:
    """A running match, followed through ``events_url`` (its public event stream)."""
    data = {**config, "mode": "live", "match_id": match_id, "events_url": events_url}
    body = (
        f'<header><h1>Match {html.escape(match_id)}</h1><span id="state">connecting…</span>'
        '<a href="./">all matches</a></header>' + _table(config["seat_names"])
    )
    return _shell(f"arena — {match_id} (live)", body, data)


def replay_page(title: str, config: dict[str, Any], events: list[dict[str, Any]], back: str) -> str:
    """The replay viewer of a finished match: ``events`` are every event to show."""
    data = {**config, "mode": "replay", "events": events}
    seats = "".join(f'<option value="{i}">only what seat {i} saw</option>' for i in range(4))
    controls = (
        '<nav class="controls" aria-label="replay controls">'
        '<button id="first" title="first (Home)">|◀ first</button>'
        '<button id="prev" title="previous (←)">◀ prev</button>'
        '<button id="play" aria-pressed="false" title="play / pause (space)">▶ play</button>'
        '<button id="next" title="next (→)">next ▶</button>'
        '<button id="last" title="last (End)">last ▶|</button>'
        '<span id="step" aria-live="polite"></span>'
        '<label>jump to <select id="jump-deal" aria-label="jump to a deal"></select></label>'
        '<select id="jump-trick" aria-label="jump to a trick"></select>'
        '<label>hands <select id="seat-filter"><option value="all">all four face up</option>'
        f"{seats}</select></label>"
        '<span class="keys">keys: ← → step, ↑ ↓ trick, PgUp PgDn deal, space play</span></nav>'
    )
    body = (
        f'<header><h1>{html.escape(title)}</h1><span id="state">replay</span>{back}</header>'
        + controls
        + _table(config["seat_names"])
    )
    return _shell(f"arena — {title}", body, data)


def list_page(rows: list[dict[str, Any]]) -> str:
    """The match list: state, seats, levels, deal; each row links to its page."""
    body_rows = "".join(
        "<tr>"
        f'<td><a href="matches/{html.escape(r["id"])}">{html.escape(r["id"])}</a></td>'
        f"<td>{html.escape(r['state'])}</td><td>{r['deal'] or '—'}</td>"
        f"<td>{html.escape(' / '.join(r['levels'])) or '—'}</td>"
        f"<td>{html.escape(', '.join(r['seats']))}</td>"
        "</tr>"
        for r in rows
    )
    empty = "" if rows else '<p style="margin:1em">No matches yet.</p>'
    body = (
        '<header><h1>arena — matches</h1><span id="state">'
        f"{len(rows)} match{'es' if len(rows) != 1 else ''}</span></header>"
        '<table class="matches"><thead><tr><th>match</th><th>state</th><th>deal</th>'
        f"<th>levels</th><th>seats</th></tr></thead><tbody>{body_rows}</tbody></table>{empty}"
        # the list refreshes itself every few seconds (a plain reload: no script needed)
    )
    page = _shell("arena — matches", body, script=False)
    return page.replace("<head>", '<head><meta http-equiv="refresh" content="3">', 1)
