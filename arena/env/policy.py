"""A policy trained against arena.env, seated in the arena with no code change.

A *policy* is a function ``act(observation) -> action`` taking the environment's
observation dict (``observation``: ``float32[OBS_SIZE]``, ``action_mask``: ``int8[55]``)
and returning an action (a card face 0–53 or ``STOP``). :class:`PolicyBot` wraps one as an
in-process arena bot (the :class:`~arena.game.Bot` interface): for each request it keeps
the seat's memory, encodes the view exactly as the environment does, and asks the policy
one card at a time until the answer is complete. So ``arena match``, ``arena batch`` and
``arena tournament`` seat it as ``policy:MODULE:FUNCTION`` (MODULE a module name or a
``.py`` file), and ``sample_bots/policy_bot.py`` plays it over gRPC.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.env.actions import ACTION_SIZE, Choice
from arena.env.encoding import SeatMemory, encode, with_chosen
from arena.game import Action, Decision, Event, Request, SeatView
from arena.rules import Card, CardOrder, RuleSet, card_order

Policy = Callable[[dict[str, Any]], int]


def load_policy(target: str) -> Policy:
    """``MODULE:FUNCTION`` → the function; MODULE is an importable module or a ``.py`` file.

    Raises:
        ValueError: naming what could not be found.
    """
    module_name, sep, function = target.rpartition(":")
    if not sep or not module_name or not function:
        raise ValueError(f"a policy is MODULE:FUNCTION, not {target!r}")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            spec = importlib.util.spec_from_file_location(f"arena_policy_{path.stem}", path)
            if spec is None or spec.loader is None or not path.is_file():
                raise ValueError(f"no policy file {module_name}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:
                sys.path.append(str(Path.cwd()))  # a module beside the caller, as python -m does
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import policy module {module_name!r}: {exc}") from None
    act = getattr(module, function, None)
    if not callable(act):
        raise ValueError(f"{module_name} has no function {function!r}")
    return act  # type: ignore[no-any-return]


class PolicyBot:
    """An arena bot that answers with an arena.env policy, card by card."""

    def __init__(self, policy: Policy, name: str = "policy") -> None:
        self.policy = policy
        self.name = name
        self.memory: SeatMemory | None = None

    def decide(self, request: Request) -> Action:
        """The policy's answer; if the policy raises, one line on stderr and the referee's
        fallback (as ``sample_bots/botkit.py`` does for a remote bot's bug)."""
        order = _order(request.view, request.rules)
        try:
            return self.answer(request.decision, request.view, request.events, request.rules, order)
        except Exception as exc:
            note = f"{self.name}: the policy failed ({exc!r}); playing the fallback"
            print(note, file=sys.stderr)
            return request.fallback

    def answer(
        self,
        decision: Decision,
        view: SeatView,
        events: Sequence[Event],
        rules: RuleSet,
        order: CardOrder | None,
    ) -> Action:
        """The policy's answer to ``decision``, given the view and the events since the
        seat's last request (what both a local seat and the wire provide)."""
        if self.memory is None or self.memory.seat != view.seat:
            self.memory = SeatMemory(view.seat)
        self.memory.absorb(events)
        choice = Choice(decision, view.hand, order)
        base = encode(view, self.memory, rules, choice.kind, decision.count)
        while True:
            mask = np.zeros(ACTION_SIZE, dtype=np.int8)
            mask[choice.allowed_actions()] = 1
            obs = with_chosen(base, choice.chosen) if choice.chosen else base
            action = int(self.policy({"observation": obs, "action_mask": mask}))
            try:
                answer = choice.take(action)
            except ValueError:  # a masked-out action: send it, and take the fault
                bad: tuple[Card, ...] = (Card.from_index(action),) if 0 <= action < 54 else ()
                return (*choice.chosen, *bad)
            if answer is not None:
                return answer


def _order(view: SeatView, rules: RuleSet) -> CardOrder | None:
    trump = view.trump
    return None if trump is None else card_order(trump, rules)


def policy_bot(target: str, name: str | None = None) -> PolicyBot:
    """The bot of ``policy:MODULE:FUNCTION`` (``target`` without the ``policy:``)."""
    return PolicyBot(load_policy(target), name or f"policy:{target}")


__all__ = ["Policy", "PolicyBot", "load_policy", "policy_bot"]
