"""The competition's pure parts and its database: schedules, standings, keys, versions.

The database tests run on SQLite and on a real PostgreSQL cluster started for this
module (tests/pgkit.py; skipped, naming the package, where PostgreSQL is missing).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from pgkit import new_database

from arena.competition.database import HEAD, MIGRATIONS, database_url, shown
from arena.competition.schedule import check_seating, ladder_table, round_robin, swiss_round
from arena.competition.standings import render, standings
from arena.competition.store import FINISHED, key_hash, open_store
from arena.errors import ArenaError


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh competition database of each kind (its --database value)."""
    if request.param == "sqlite":
        return str(tmp_path / "c.sqlite3")
    return new_database(request.getfixturevalue("pg_socket"))


def test_round_robin_meets_every_two_disjoint_partnerships() -> None:
    four = round_robin(["a", "b", "c", "d"])
    assert len(four) == 6 and len(round_robin(["a", "b", "c", "d"], duplicate=False)) == 3
    assert len(round_robin([str(i) for i in range(6)], duplicate=False)) == 45
    for (seats, seed), (swapped, seed2) in zip(four[::2], four[1::2], strict=True):
        assert len(set(seats)) == 4
        assert seed == seed2 and swapped == (seats[3], seats[0], seats[1], seats[2])
    teams = {frozenset((s[0], s[2])) for s, _ in four}
    assert len(teams) == 6  # every partnership plays
    assert round_robin(["a", "b", "c", "d"], seed=1) == round_robin(["a", "b", "c", "d"], seed=1)
    with pytest.raises(ArenaError, match="at least 4"):
        round_robin(["a", "b", "c"])


def test_a_bot_takes_one_seat_unless_self_play() -> None:
    with pytest.raises(ArenaError, match="two seats"):
        check_seating(["a", "a", "b", "c"], self_play=False)
    check_seating(["a", "a", "b", "c"], self_play=True)


def test_keys_are_hashed_rotated_and_versions_checked(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = open_store(path)
    assert path.stat().st_mode & 0o077 == 0
    key = store.add_bot("alpha", "me")
    with pytest.raises(ArenaError, match="already registered"):
        store.add_bot("alpha", "you")
    with pytest.raises(ArenaError, match="bot name"):
        store.add_bot("no spaces", "me")
    assert key.encode() not in path.read_bytes()
    assert store.bot_by_key(key) is not None and store.bot_by_key("x") is None
    new = store.rotate_key("alpha")
    assert store.bot_by_key(key) is None and store.bot_by_key(new) is not None
    store.set_disabled("alpha", True)
    assert store.bot_by_key(new).disabled  # type: ignore[union-attr]
    assert not store.enabled("alpha")
    store.close()
    assert open_store(path).bot_by_key(new) is not None  # opened again: nothing migrates
    raw = sqlite3.connect(path)
    raw.execute("UPDATE alembic_version SET version_num = 'f00d'")
    raw.commit()
    raw.close()
    with pytest.raises(ArenaError, match="revision f00d, which this arena does not know"):
        open_store(path)
    assert key_hash("k") != "k"
    url = database_url("postgresql://u:secret@db.example/arena")
    assert url == "postgresql+psycopg://u:secret@db.example/arena"
    assert "secret" not in shown(url)
    assert database_url(None, "recs") == "sqlite:///recs/competition.sqlite3"


def test_head_is_the_newest_migration() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD


def test_a_database_of_the_first_schema_is_stamped_not_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    raw = sqlite3.connect(path)
    raw.executescript(
        "CREATE TABLE schema_version (version INTEGER NOT NULL);"
        "INSERT INTO schema_version VALUES (1);"
        "CREATE TABLE bots (name TEXT PRIMARY KEY, owner TEXT NOT NULL, key_sha256 TEXT NOT "
        "NULL UNIQUE, disabled INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL, rotated TEXT);"
        "CREATE TABLE events (name TEXT PRIMARY KEY, format TEXT NOT NULL, settings TEXT NOT "
        "NULL, state TEXT NOT NULL, created TEXT NOT NULL);"
        "CREATE TABLE event_matches (event TEXT NOT NULL REFERENCES events(name), idx INTEGER "
        "NOT NULL, seats TEXT NOT NULL, seed INTEGER NOT NULL, state TEXT NOT NULL, match_id "
        "TEXT, record TEXT, result TEXT, finished TEXT, PRIMARY KEY (event, idx));"
        f"INSERT INTO bots VALUES ('old', 'me', '{key_hash('bk-old')}', 0, 'then', NULL);"
    )
    raw.close()
    store = open_store(path)
    assert [b.name for b in store.bots()] == ["old"] and store.bot_by_key("bk-old") is not None
    store.close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE schema_version SET version = 2")
    raw.execute("DROP TABLE alembic_version")
    raw.commit()
    raw.close()
    with pytest.raises(ArenaError, match="schema version 2"):
        open_store(path)


def test_an_unreachable_postgresql_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ArenaError, match="cannot open the competition database") as caught:
        open_store(f"postgresql://arena:pw@/nope?host={tmp_path}")
    assert "pw" not in str(caught.value)


def test_the_store_on_both_databases(database: str) -> None:
    """Keys, events, a Swiss round and a 64-bit seed: the same answers on each kind."""
    store = open_store(database)
    key = store.add_bot("alpha", "me")
    with pytest.raises(ArenaError, match="already registered"):
        store.add_bot("alpha", "you")
    for name in "bcd":
        store.add_bot(name, "me")
    assert store.bot_by_key(key).name == "alpha"  # type: ignore[union-attr]
    new = store.rotate_key("alpha")
    assert store.bot_by_key(key) is None and store.bot_by_key(new) is not None
    store.set_disabled("b", True)
    assert store.enabled_bots() == {"alpha", "c", "d"}
    settings = {"format": "swiss", "round": 1, "rounds": 2}
    first = [(("alpha", "b", "c", "d"), 2**63 - 1)]
    store.create_event("sw", "swiss", settings, first)
    with pytest.raises(ArenaError, match="already exists"):
        store.create_event("sw", "swiss", settings, first)
    assert store.matches("sw")[0].seed == 2**63 - 1
    store.mark_running("sw", 0, "m-1")
    assert [m.match_id for m in store.matches("sw", "running")] == ["m-1"]
    store.mark_finished("sw", 0, FINISHED, "r", {"winner": 0, "order": 1})
    assert store.event("sw").state == "running"
    store.add_round("sw", 2, [(("d", "c", "b", "alpha"), 5)])
    store.add_round("sw", 2, [(("d", "c", "b", "alpha"), 5)])  # idempotent
    store.mark_finished("sw", 1, FINISHED, "r", {"winner": 1, "order": 2})
    assert store.event("sw").state == FINISHED
    assert standings(store.matches("sw"))["finished"] == 2
    store.create_event("ladder", "ladder", {"format": "ladder", "matches": 0}, [])
    store.add_matches("ladder", [(("alpha", "b", "c", "d"), 1), (("d", "alpha", "b", "c"), 1)])
    store.mark_finished("ladder", 0, FINISHED, "r", {"winner": 0})
    store.finish_event("ladder")  # a continuous ladder ends only when told
    assert [m.index for m in store.matches("ladder")] == [0]  # the unplayed one dropped
    assert sorted(e.name for e in store.events(FINISHED)) == ["ladder", "sw"]
    store.close()


def test_the_last_two_matches_ending_at_once_end_the_event(database: str) -> None:
    """The lobby's match watchers write each result from a thread of their own, so the
    last two matches of a ladder's table (played side by side) can finish at the same
    moment: each transaction must still see the other's, or neither ends the event (seen
    on PostgreSQL: the event stayed running with every match finished)."""
    store = open_store(database)
    for name in "abcd":
        store.add_bot(name, "me")
    for race in range(12):
        name = f"cup{race}"
        store.create_event(name, "round-robin", {}, round_robin(list("abcd"), duplicate=False))
        matches = store.matches(name)
        for m in matches:
            store.mark_running(name, m.index, f"m-{race}-{m.index}")
        store.mark_finished(name, matches[0].index, FINISHED, "r", {"winner": 0})
        together = threading.Barrier(2)

        def finish(index: int, name: str = name, together: threading.Barrier = together) -> None:
            together.wait()
            store.mark_finished(name, index, FINISHED, "r", {"winner": 1})

        threads = [threading.Thread(target=finish, args=(m.index,)) for m in matches[1:]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert store.event(name).state == FINISHED, race
    store.close()


def test_an_event_ends_with_its_last_match_and_is_rated(tmp_path: Path) -> None:
    store = open_store(tmp_path / "c.sqlite3")
    for name in "abcd":
        store.add_bot(name, "me")
    with pytest.raises(ArenaError, match="not registered"):
        store.create_event("x", "round-robin", {}, round_robin(["a", "b", "c", "e"]))
    store.create_event("cup", "round-robin", {}, round_robin(list("abcd"), duplicate=False))
    with pytest.raises(ArenaError, match="already exists"):
        store.create_event("cup", "round-robin", {}, [])
    result = {"winner": 0, "faults": [1, 0, 0, 0], "decisions": [10] * 4,
              "answers": [9, 10, 10, 10], "latency_sum_ms": [9.0, 20.0, 20.0, 20.0]}  # fmt: skip
    for m in store.matches("cup"):
        assert store.event("cup").state == "running"
        store.mark_running("cup", m.index, f"m-{m.index}")
        store.mark_finished("cup", m.index, FINISHED, "r", {**result, "order": m.index})
    assert store.event("cup").state == FINISHED
    data = standings(store.matches("cup"))
    assert data["finished"] == 3 and data["left"] == 0
    rows = {r["bot"]: r for r in data["bots"]}
    assert sum(r["won"] for r in rows.values()) == 6  # two winners a match
    assert all(m.seats[0] == "a" for m in store.matches("cup"))  # seat 0 made the faults
    assert rows["a"]["faults"] == 3 and rows["a"]["fault_rate"] == pytest.approx(0.1)
    assert rows["b"]["faults"] == 0
    assert rows["a"]["mean_latency_ms"] == 1.0
    assert data["bots"][0]["ordinal"] >= data["bots"][-1]["ordinal"]
    assert "3 of 3 matches finished" in render(data)


def test_swiss_rounds_pair_by_ranking_and_the_event_waits_for_its_last(tmp_path: Path) -> None:
    first = swiss_round(list("abcdefgh"), 1, seed=3)
    assert len(first) == 4 and sorted(n for s, _ in first[::2] for n in s) == list("abcdefgh")
    later = swiss_round(list("abcdefgh"), 2, duplicate=False)
    assert later[0][0] == ("a", "b", "d", "c")  # 1st and 4th against 2nd and 3rd
    with pytest.raises(ArenaError, match="multiple of 4"):
        swiss_round(list("abcde"), 1)
    store = open_store(tmp_path / "c.sqlite3")
    for name in "abcd":
        store.add_bot(name, "me")
    settings = {"format": "swiss", "round": 1, "rounds": 2}
    store.create_event("sw", "swiss", settings, swiss_round(list("abcd"), 1, duplicate=False))
    store.mark_finished("sw", 0, FINISHED, "r", {"winner": 1})
    assert store.event("sw").state == "running"  # a round is still to come
    store.add_round("sw", 2, swiss_round(list("dcba"), 2, duplicate=False))
    store.add_round("sw", 2, swiss_round(list("dcba"), 2, duplicate=False))  # idempotent
    assert [m.index for m in store.matches("sw")] == [0, 1]
    store.mark_finished("sw", 1, FINISHED, "r", {"winner": 0})
    assert store.event("sw").state == FINISHED


def test_ladder_seats_the_least_certain_bot_with_its_nearest(tmp_path: Path) -> None:
    ratings = {"a": (10.0, 2.0), "b": (9.0, 2.0), "c": (1.0, 6.0), "d": (0.0, 2.0),
               "e": (-1.0, 2.0), "f": (-20.0, 2.0)}  # fmt: skip
    assert ladder_table(["a", "b", "c"], ratings) is None
    seats = ladder_table(list(ratings), ratings)
    assert seats is not None and "c" in seats and "f" not in seats
    assert set(seats) == {"b", "c", "d", "e"}
    assert seats == ("b", "c", "e", "d")  # best and worst (b, e) against the middle two
    store = open_store(tmp_path / "c.sqlite3")
    for name in "abcd":
        store.add_bot(name, "me")
    store.create_event("ld", "ladder", {"format": "ladder", "matches": 2}, [])
    store.add_matches("ld", [(("a", "b", "c", "d"), 1)])
    store.mark_finished("ld", 0, FINISHED, "r", {"winner": 0})
    assert store.event("ld").state == "running"  # one match still to pair
    store.add_matches("ld", [(("d", "a", "b", "c"), 1)])
    store.mark_finished("ld", 1, FINISHED, "r", {"winner": 1})
    assert store.event("ld").state == FINISHED


def test_a_listing_never_makes_a_database_where_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in --database (or --records) is said, not answered with an empty new one."""
    from arena.cli.main import main

    typo = tmp_path / "no" / "such.sqlite3"
    assert main(["bots", "list", "--database", str(typo)]) == 1
    assert main(["events", "standings", "cup", "--records", str(tmp_path / "r")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        f"arena bots list: no competition database at {typo} (`arena bots add` or "
        "`arena events create` makes one; check --database / --records)"
    )
    assert err[1].startswith("arena events standings: no competition database at ")
    assert not typo.parent.exists() and not (tmp_path / "r").exists()
    assert main(["bots", "add", "solo", "--owner", "me", "--database", str(tmp_path / "c.db")]) == 0
