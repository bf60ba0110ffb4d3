"""``arena check-bot``: the CI harness for one bot, over real gRPC.

The bot under test runs as a subprocess (``ARENA_SERVER``/``ARENA_TOKEN``, as in
``arena match``) against in-process opponents, in a list of scenarios
(:mod:`~arena.batch.checkbot.scenarios`):

- *stacked* positions (deal 1 dealt from a stacked deck) built so that the bot must
  answer bid windows, bury from 33 cards, be void and trump, follow tractors and throws,
  lead after a failed throw and play the last trick; the opponents are the built-in
  ``greedy`` bot, scripted where a position needs a particular bid or lead;
- *random* matches (shuffled deals) against ``greedy`` or ``random`` opponents, with the
  bot in seat 0 or seat 1.

Every fault the referee charges to the bot (timeout, illegal action, malformed message,
unknown sequence number, disconnection or crash) is reported with its position, read
back from the match record (:mod:`~arena.batch.checkbot.positions`): the deal and trick,
what the bot was asked, its hand, the trick so far, what it sent and what was played
instead. The situations each scenario aims at are checked against the record too
(``reached``/``missed``): the bot's own choices decide some of them (it must win the bid
to bury, it must throw to see its own throw fail). :func:`check_bot` plays the
scenarios (:mod:`~arena.batch.checkbot.play`); :func:`render`, :func:`junit_xml` and
:meth:`CheckReport.to_dict` present the outcome.
"""

from arena.batch.checkbot.play import check_bot, play_scenario, run_scenario
from arena.batch.checkbot.positions import Position, read_positions
from arena.batch.checkbot.present import junit_xml, render, scenario_table
from arena.batch.checkbot.results import (
    CheckOptions,
    CheckReport,
    FaultReport,
    ScenarioResult,
    latency_summary,
    percentile,
)
from arena.batch.checkbot.scenarios import (
    AFTER_FAILED,
    BID,
    BURY,
    FOLLOW_THROW,
    LAST,
    OWN_FAILED,
    SITUATIONS,
    TRACTOR_HELD,
    TRACTOR_PAIRS,
    VOID,
    Plan,
    Scenario,
    ScriptedBot,
    random_scenarios,
    stacked_scenarios,
)

__all__ = [
    "AFTER_FAILED",
    "BID",
    "BURY",
    "FOLLOW_THROW",
    "LAST",
    "OWN_FAILED",
    "SITUATIONS",
    "TRACTOR_HELD",
    "TRACTOR_PAIRS",
    "VOID",
    "CheckOptions",
    "CheckReport",
    "FaultReport",
    "Plan",
    "Position",
    "Scenario",
    "ScenarioResult",
    "ScriptedBot",
    "check_bot",
    "junit_xml",
    "latency_summary",
    "percentile",
    "play_scenario",
    "random_scenarios",
    "read_positions",
    "render",
    "run_scenario",
    "scenario_table",
    "stacked_scenarios",
]
