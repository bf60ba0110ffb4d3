"""The Botzone process driver on real processes: mode detection, the input formats,
data/globaldata, and each verdict (NJ, NR, RE, TLE, OLE) — tiny bots under ``python -S``.

Also the bidding translation of the seat table: a bid the bot asked for on a deal
request is made at arena's next bid window if arena allows it, else passed and noted.
"""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

from arena.botzone.cards import face_of
from arena.botzone.process import BotProcess, TurnFailed
from arena.botzone.table import BotzoneTable, Game
from arena.rules import Card
from arena.server.convert import cards_from_pb, cards_to_pb
from arena.v1 import arena_pb2 as pb


def bot(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "bot.py"
    script.write_text("import json, sys, time\n" + textwrap.dedent(body))
    return [sys.executable, "-S", str(script)]


def game_of(*requests: dict[str, object]) -> Game:
    game = Game()
    for r in requests:
        game.requests.append(dict(r))
        game.responses.append([])
    return game


ECHO_DEFAULT = """
whole = json.loads(input())
print(json.dumps({"response": [len(whole["requests"]), len(whole["responses"])],
                  "data": "d%d" % len(whole["requests"]), "debug": "hi",
                  "globaldata": whole["globaldata"] + "g"}))
"""

ECHO_KEEP = """
whole = json.loads(input())
n = len(whole["requests"])
while True:
    print(json.dumps({"response": [n]}))
    print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
    json.loads(input())
    n += 1
"""


def test_default_mode_gets_the_game_so_far_and_carries_data(tmp_path: Path) -> None:
    log = io.StringIO()
    proc = BotProcess(bot(tmp_path, ECHO_DEFAULT), log=log)
    game = game_of({"stage": "deal"}, {"stage": "deal"}, {"stage": "deal"})
    assert proc.ask(game, 0, 10).response == [1, 0]  # never the turns queued after it
    reply = proc.ask(game, 1, 10)
    assert reply.response == [2, 1] and reply.fresh and not proc.keep_running
    assert game.data == "d2" and proc.globaldata == "gg"
    assert "botzone debug: hi" in log.getvalue()


def test_keep_running_is_detected_and_restarted_for_a_new_game(tmp_path: Path) -> None:
    proc = BotProcess(bot(tmp_path, ECHO_KEEP))
    game = game_of({"stage": "deal"}, {"stage": "deal"}, {"stage": "deal"})
    first = proc.ask(game, 0, 10)
    assert first.response == [1] and first.fresh and proc.keep_running
    second = proc.ask(game, 1, 10)
    assert second.response == [2] and not second.fresh
    other = game_of({"stage": "deal"})
    assert proc.ask(other, 0, 10).fresh  # a new deal: a new process
    proc.close()


def test_simplified_interaction(tmp_path: Path) -> None:
    body = """
    n = int(input())
    lines = [input() for _ in range(2 * n - 1)]
    data, globaldata = input(), input()
    print(json.dumps([n, len(lines)]))
    print("dbg")
    print("newdata")
    """
    proc = BotProcess(bot(tmp_path, body), simple=True)
    game = game_of({"stage": "deal"}, {"stage": "deal"})
    assert proc.ask(game, 1, 10).response == [2, 3]
    assert game.data == "newdata"


@pytest.mark.parametrize(
    ("body", "name"),
    [
        ("input(); print('seven of clubs')", "NJ"),
        ("input()", "NR"),
        ("input(); print(json.dumps({'debug': 1}))", "NR"),
        ("input(); sys.exit(2)", "RE"),
        ("input(); time.sleep(30)", "TLE"),
        ("input(); sys.stdout.write('x' * (2 << 20))", "OLE"),
    ],
)
def test_verdicts(tmp_path: Path, body: str, name: str) -> None:
    proc = BotProcess(bot(tmp_path, body))
    with pytest.raises(TurnFailed) as failed:
        proc.ask(game_of({"stage": "deal"}), 0, 1.5)
    assert failed.value.name == name
    assert failed.value.kind == (pb.TIMEOUT if name == "TLE" else pb.MALFORMED)
    proc.close()


def test_a_missing_program_is_re(tmp_path: Path) -> None:
    with pytest.raises(TurnFailed) as failed:
        BotProcess([str(tmp_path / "nope")]).ask(game_of({"stage": "deal"}), 0, 5)
    assert failed.value.name == "RE"


def bid_request(seq: int, legal: list[list[str]]) -> pb.Request:
    bids = [pb.Bid(seat=0, cards=cards_to_pb(Card.parse(c) for c in b)) for b in legal]
    return pb.Request(seq=seq, kind=pb.BID, legal_bids=bids)


def dealt(card: str) -> pb.Event:
    return pb.Event(card_dealt=pb.CardDealt(seat=0, card=cards_to_pb([Card.parse(card)])[0]))


def test_a_wanted_bid_waits_for_arena_and_an_illegal_one_is_a_pass() -> None:
    table = BotzoneTable(0)
    start = pb.Event(deal_started=pb.DealStarted(deal=1, dealer=-1, level=pb.TWO))
    table.absorb([start, dealt("2H"), dealt("5S")])
    turns = [table.next_turn(bid_request(1, [])) for _ in range(2)]
    assert [t.request["stage"] for t in turns if t] == ["deal", "deal"]
    assert turns[0] is not None and turns[0].request["playerpos"] == 0
    two_hearts = next(i for i in table.ids.hand if str(face_of(i)) == "2H")
    table.answer(turns[0], [])
    assert turns[1] is not None
    table.answer(turns[1], [two_hearts])  # wanted after a card that opens no window
    action = table.action(bid_request(1, [["2H"]]))
    assert [str(c) for c in cards_from_pb(action.cards)] == ["2H"]
    # a wish that arena's window does not allow: a pass, and a line for the seat log
    turn = table._queue("deal", {"stage": "deal"})
    table.queue.clear()
    table.answer(turn, [two_hearts])
    assert not table.action(bid_request(2, [["BJ", "BJ"]])).cards
    assert "not legal in arena now" in table.notes[-1]


def test_banking_follows_the_bids() -> None:
    table = BotzoneTable(1)
    table.absorb([pb.Event(deal_started=pb.DealStarted(deal=1, dealer=-1, level=pb.TWO))])
    two = cards_to_pb([Card.parse("2C")])
    jokers = cards_to_pb([Card.parse("SJ"), Card.parse("SJ")])
    table.absorb([pb.Event(bid_made=pb.BidMade(seat=3, cards=two))])
    assert table.banking == {"called": 3, "snatched": -1, "major": "c", "banker": -1}
    table.absorb([pb.Event(bid_made=pb.BidMade(seat=0, cards=jokers))])
    assert table.banking == {"called": 3, "snatched": 0, "major": "n", "banker": -1}
    assert json.dumps(table._global())  # JSON-ready


def test_botzone_commands_become_seat_commands() -> None:
    from arena.batch.runner import BotSpec
    from arena.botzone import is_botzone, seat_argv
    from arena.cli.main import main

    argv = seat_argv("botzone[globaldata=g.json,simple]:python3 my bot.py")
    assert argv[1:4] == ["-m", "arena.cli.main", "botzone-seat"]
    assert argv[4:] == ["--globaldata", "g.json", "--simple", "--", "python3", "my", "bot.py"]
    assert seat_argv("botzone:./bot")[-2:] == ["--", "./bot"]
    assert not is_botzone("python3 botzone.py")
    for bad in ("botzone:", "botzone[turbo]:./bot", "botzone[globaldata]:./bot"):
        with pytest.raises(ValueError):
            seat_argv(bad)
    spec = BotSpec.parse("botzone[globaldata=g.json]:python3 my_bot.py")
    assert spec.command.startswith("botzone[") and spec.name == "my_bot"
    assert BotSpec.parse("mine=botzone:./bot").name == "mine"
    with pytest.raises(ValueError):
        BotSpec.parse("botzone[nope]:./bot").check()
    assert main(["botzone-seat", "--token", "t"]) == 2  # no bot command


def test_a_request_sent_again_gets_the_same_answer_without_asking_again(tmp_path: Path) -> None:
    from arena.botzone.seat import BotzoneSeat, SeatOptions

    log = io.StringIO()
    seat = BotzoneSeat(SeatOptions(bot(tmp_path, ECHO_KEEP)), log=log)
    seat.table.seat = 0
    start = pb.Event(deal_started=pb.DealStarted(deal=1, dealer=-1, level=pb.TWO))
    request = bid_request(1, [["2H"]])
    request.events.extend([start, dealt("2H"), dealt("5S")])
    request.deadline_ms, request.time_bank_ms = 5000, 5000
    first = seat.decide(request)
    assert seat.turns == 2
    assert seat.decide(request) == first and seat.turns == 2  # a re-send after a reconnection
    seat.process.close()


def test_a_bot_that_closes_stdout_and_lingers_is_tle(tmp_path: Path) -> None:
    proc = BotProcess(bot(tmp_path, "input(); sys.stdout.close(); time.sleep(30)"))
    with pytest.raises(TurnFailed) as failed:
        proc.ask(game_of({"stage": "deal"}), 0, 1.0)
    assert failed.value.name == "TLE"
