"""Leads, the throw check and failed throws (RULES.md §7, Lead, Throw check, Failed throw)."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.rules import RuleSet, Trump, card_order, check_lead, codes, parse_cards

P = parse_cards


def order(level: str = "2", suit: str | None = "S", **rules: object):
    return card_order(Trump.parse(level, suit), RuleSet.from_mapping(rules))


def lead(hands: list[str], play: str, leader: int = 0, dealer: int = 0, **rules: object):
    return check_lead(leader, [P(h) for h in hands], P(play), order(**rules), dealer)


def same(cards, text: str) -> bool:
    return Counter(codes(cards)) == Counter(text.split())


# -- single units are always legal; cards must be one effective suit ---------------------------


@pytest.mark.parametrize(
    "play",
    ["3H", "AH AH", "5H 5H 6H 6H", "BJ", "2D 2D", "AS AS 2H 2H"],
)
def test_one_unit_is_always_a_legal_lead(play: str) -> None:
    hands = ["3H AH AH 5H 5H 6H 6H BJ 2D 2D AS AS 2H 2H", "KH KH QH QH 7H 7H 8H 8H SJ SJ", "", ""]
    verdict = lead(hands, play)
    assert verdict.legal and not verdict.throw and not verdict.failed
    assert same(verdict.played, play) and verdict.returned == ()
    assert verdict.blocker is None and verdict.penalty == 0


@pytest.mark.parametrize(
    ("play", "reason"),
    [
        ("3H 3S", "a lead must be one effective suit, not hearts and trumps: 3H 3S"),
        ("AH AC", "a lead must be one effective suit, not clubs and hearts: AH AC"),
        ("QH", "not in hand: QH"),
        ("3H 3H", "not in hand: 3H"),
        ("", "a lead needs at least one card"),
    ],
)
def test_illegal_leads(play: str, reason: str) -> None:
    verdict = lead(["3H 3S AH AC", "", "", ""], play)
    assert not verdict.legal and verdict.reason == reason


# -- the throw check -----------------------------------------------------------------------------


def test_judge_format_example_l1() -> None:
    verdict = lead(["AH QH 3C", "KH 2D", "9H 4C", "TH 5D"], "AH QH", dealer=1)
    assert verdict.legal and verdict.throw and verdict.failed
    assert codes(verdict.played) == ["QH"] and codes(verdict.returned) == ["AH"]
    assert verdict.blocker == 1 and verdict.penalty == -10


@pytest.mark.parametrize(
    ("others", "failed"),
    [
        (["8H 7H", "3H", "2H 4C"], False),  # no higher single (2H is a trump)
        (["KH", "", ""], True),  # a higher single beats a single
        (["", "", "KH"], True),  # the partner counts too
        (["", "AS AS 3S", "BJ"], False),  # a void seat's trumps never block
    ],
)
def test_singles_throw(others: list[str], failed: bool) -> None:
    verdict = lead(["AH QH 9H", *others], "AH QH 9H")
    assert verdict.legal and verdict.throw
    assert verdict.failed is failed


@pytest.mark.parametrize(
    ("throw", "holder", "failed"),
    [
        ("5H 5H 6H 6H AH", "KH KH", False),  # a mere higher pair does not beat a tractor
        ("5H 5H 6H 6H AH", "8H 8H 9H 9H", True),  # same length, starting higher
        ("5H 5H 6H 6H AH", "3H 3H 4H 4H", False),  # same length, starting lower
        ("5H 5H 6H 6H AH", "7H 7H 8H 8H 9H 9H", True),  # longer, starting higher
        ("5H 5H 6H 6H AH", "4H 4H 7H 7H", False),  # two pairs, not adjacent
        ("6H 6H 7H 7H AH", "3H 3H 4H 4H 5H 5H", False),  # longer, but starting lower
        ("5H 5H 6H 6H AH", "3H 3H 4H 4H 7H 7H 8H 8H", True),
    ],
)
def test_tractor_in_a_throw(throw: str, holder: str, failed: bool) -> None:
    verdict = lead([throw, holder, "", ""], throw)
    assert verdict.legal and verdict.throw
    assert verdict.failed is failed
    if failed:
        assert len(verdict.played) == 4 and codes(verdict.returned) == ["AH"]
        assert verdict.blocker == 1


@pytest.mark.parametrize(
    ("holder", "failed"),
    [
        ("9H 9H TH TH", False),  # a shorter tractor does not beat a 3-pair tractor
        ("9H 9H TH TH JH JH", True),
        ("KH KH", False),
    ],
)
def test_longer_tractor_in_a_throw(holder: str, failed: bool) -> None:
    verdict = lead(["5H 5H 6H 6H 7H 7H AH", holder, "", ""], "5H 5H 6H 6H 7H 7H AH")
    assert verdict.failed is failed


def test_pairs_beat_pairs_not_singles() -> None:
    # throw AH AH + QH QH: a KH single does not beat the pair, a KH pair does
    assert not lead(["AH AH QH QH", "KH 3H", "", ""], "AH AH QH QH").failed
    verdict = lead(["AH AH QH QH", "", "KH KH", ""], "AH AH QH QH")
    assert verdict.failed and same(verdict.played, "QH QH") and verdict.blocker == 2


def test_trump_throw_with_equal_level_cards() -> None:
    # L = 2, T = ♠: 2H and 2D are equal trumps; only a higher trump beats a single
    assert not lead(["2H 2D", "2C", "AS", ""], "2H 2D").failed
    verdict = lead(["2H 2D", "2C", "AS", "2S"], "2H 2D")
    assert verdict.failed and verdict.blocker == 3 and len(verdict.played) == 1


def test_equal_cards_never_beat() -> None:
    # the second copy of KH does not beat the thrown KH
    assert not lead(["AH KH", "KH", "", ""], "AH KH").failed


# -- the forced unit --------------------------------------------------------------------------


def test_forced_unit_is_the_smallest_then_lowest() -> None:
    # throw QH QH 9H 4H; seat 1 beats everything: the fewest cards, lowest rank: 4H
    verdict = lead(["QH QH 9H 4H", "KH KH TH", "", ""], "QH QH 9H 4H")
    assert verdict.failed
    assert codes(verdict.played) == ["4H"] and same(verdict.returned, "QH QH 9H")


def test_forced_unit_prefers_a_single_over_a_lower_pair() -> None:
    verdict = lead(["3H 3H KH", "4H 4H AH", "", ""], "3H 3H KH")
    assert codes(verdict.played) == ["KH"] and verdict.blocker == 1


@pytest.mark.parametrize(
    ("rule", "played", "blocker"),
    [
        ("fewest_then_lowest", "KH", 2),
        ("first_blocker", "9H 9H", 1),
    ],
)
def test_forced_unit_variants(rule: str, played: str, blocker: int) -> None:
    # throw KH + 9H 9H: seat 1 beats only the pair, seat 2 only the single
    hands = ["KH 9H 9H", "TH TH", "AH 3C", ""]
    verdict = lead(hands, "KH 9H 9H", forced_unit=rule)
    assert verdict.failed
    assert same(verdict.played, played) and verdict.blocker == blocker


def test_blocker_is_the_first_seat_after_the_leader() -> None:
    # leader 2: play order 3, 0, 1; seats 0 and 1 both beat the 9H
    verdict = lead(["KH", "AH", "JH QH 9H", "3C"], "JH QH 9H", leader=2, dealer=2)
    assert verdict.failed and codes(verdict.played) == ["9H"]
    assert verdict.blocker == 0


# -- the penalty ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("leader", "dealer", "rule", "penalty"),
    [
        (0, 0, "per_throw", 10),  # a dealer-team seat failed: attackers +10
        (2, 0, "per_throw", 10),
        (1, 0, "per_throw", -10),  # an attacker failed: attackers -10
        (1, 3, "per_throw", 10),
        (0, 1, "per_card", -30),  # 10 per card in the attempted throw
        (0, 0, "per_card", 30),
        (0, 0, "none", 0),
        (1, 0, "none", 0),
    ],
)
def test_penalty(leader: int, dealer: int, rule: str, penalty: int) -> None:
    hands = ["", "", "", ""]
    hands[leader] = "AH QH 3H"
    hands[(leader + 1) % 4] = "KH"
    verdict = lead(hands, "AH QH 3H", leader=leader, dealer=dealer, throw_penalty=rule)
    assert verdict.failed and verdict.penalty == penalty
    # and a valid throw costs nothing
    hands[(leader + 1) % 4] = "2C"
    assert lead(hands, "AH QH 3H", leader=leader, dealer=dealer, throw_penalty=rule).penalty == 0


def test_failed_throw_verdict_carries_the_forced_unit() -> None:
    verdict = lead(["AH QH", "KH", "", ""], "AH QH")
    assert [u.kind for u in verdict.units] == ["single"]
    assert verdict.reason == "throw failed: seat 1 beats QH"
