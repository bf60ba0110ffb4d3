"""Command-line options that several commands share, and what they build."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from arena.botzone.preset import split_presets
from arena.game import FaultPolicy, TimeControl
from arena.rules import RuleSet

if TYPE_CHECKING:
    from arena.batch import BotSpec
    from arena.batch.sandbox import SandboxLimits

# arena.batch (grpc, trio, the server) is imported only by the options that need it, so
# that a command without workers or a sandbox (selfplay, replay...) starts without it


def add_rules(
    p: Any, deals_help: str = "deals per match (default: play until a team wins at A)"
) -> None:
    p.add_argument("--deals", type=DEALS, default=None, metavar="K", help=deals_help)
    p.add_argument(
        "--rules",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="rule variants, e.g. throw_penalty=none (every key and value: below), or a "
        "preset: botzone (docs/botzone.md)",
    )


def rules_of(args: argparse.Namespace) -> RuleSet:
    """The rule set of ``--rules`` and ``--deals``. Raises ``InvalidRules``."""
    base, pairs = split_presets(args.rules)  # a preset name: --rules botzone
    rules = RuleSet.from_pairs(pairs, base)
    if args.deals is not None:
        rules = RuleSet.from_mapping({"deals": args.deals}, rules)
    return rules


def add_clock(
    p: Any, bank: int = 30_000, bank_help: str | None = None, grace: int | None = None
) -> None:
    """``--time-limit``, ``--time-bank`` and, given its default, ``--grace`` (all ms)."""
    p.add_argument(
        "--time-limit",
        type=whole(1, "a time in ms, at least 1"),
        default=1000,
        metavar="MS",
        help="per-decision limit in ms (default 1000)",
    )
    p.add_argument(
        "--time-bank",
        type=whole(0, "a time in ms, 0 or more"),
        default=bank,
        metavar="MS",
        help=bank_help or f"per-seat time bank in ms (default {bank})",
    )
    if grace is None:
        p.set_defaults(grace=None)  # the clock's own default (clock_of)
    else:
        p.add_argument(
            "--grace",
            type=whole(0, "a time in ms, 0 or more"),
            default=grace,
            metavar="MS",
            help=f"how long a disconnected bot may take to come back (default {grace})",
        )


def clock_of(args: argparse.Namespace) -> TimeControl:
    """The :class:`TimeControl` of :func:`add_clock`'s options."""
    if args.grace is None:
        return TimeControl(args.time_limit, args.time_bank)
    return TimeControl(args.time_limit, args.time_bank, args.grace)


def add_policy(p: Any, details: bool = False) -> None:
    """``--policy`` and, with ``details``, ``--max-faults`` and ``--penalty`` (else the
    policy's defaults)."""
    p.add_argument(
        "--policy",
        choices=["lenient", "strict"],
        default="lenient",
        help="fault policy: lenient (penalty points, forfeit after --max-faults) or "
        "strict (the first fault forfeits); default lenient",
    )
    if not details:
        defaults = FaultPolicy()
        p.set_defaults(max_faults=defaults.max_faults, penalty=defaults.penalty_points)
    else:
        p.add_argument(
            "--max-faults",
            type=whole(1, "a number of faults, at least 1"),
            default=10,
            help="lenient: a team's faults before it forfeits (default 10)",
        )
        p.add_argument(
            "--penalty",
            type=whole(0, "points, 0 or more"),
            default=10,
            help="lenient: points charged per fault (default 10)",
        )


def policy_of(args: argparse.Namespace) -> FaultPolicy:
    """The :class:`FaultPolicy` of :func:`add_policy`'s options."""
    return FaultPolicy.parse(args.policy, args.penalty, args.max_faults)


def add_workers(p: Any) -> None:
    from arena.batch import default_parallel

    p.add_argument(
        "--parallel",
        type=whole(1, "a number of processes, at least 1"),
        default=None,
        help=f"worker processes (default: one per core, here {default_parallel()})",
    )
    p.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="run each match as a Ray task: 'local' (starts one here), 'auto' "
        "(RAY_ADDRESS or this node's cluster), HOST:6379 or ray://HOST:10001; "
        "see docs/batch.md",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object, nothing else")


# -- value types: a bad value is one line naming it and what is allowed (exit 2) ----------


def whole(minimum: int, allowed: str) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number of at least ``minimum``; ``allowed`` says
    what to give instead, e.g. ``"a time in ms, at least 1"``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a whole number: give {allowed}"
            ) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is not allowed: give {allowed}")
        return value

    return parse


DEALS = whole(1, "a positive number of deals (or leave --deals out to play until a team wins at A)")


def seconds(text: str) -> float:
    """An argparse ``type`` for a positive duration in seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"{text} is not allowed: give a positive number of seconds"
        )
    return value


def address(text: str, any_port: bool = False) -> str:
    """``HOST:PORT`` with a host and a port 1-65535 (or 0, "any free port", when
    ``any_port``); ``[::1]:PORT`` for IPv6. grpc itself would read port 99999 as
    34463 and a missing port as 443, so nothing else reaches it."""
    host, sep, port = text.strip().rpartition(":")
    example = "e.g. 127.0.0.1:50051"
    if not sep or not host or host in ("[", "[]"):
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT ({example})")
    if host.startswith("[") != host.endswith("]") or (":" in host and not host.startswith("[")):
        raise argparse.ArgumentTypeError(
            f"{text!r}: write an IPv6 host in brackets, e.g. [::1]:50051"
        )
    low = 0 if any_port else 1
    allowed = f"{low}-65535" + (" (0: any free port)" if any_port else "")
    if not port.isdigit() or not low <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: the port must be {allowed}")
    return f"{host}:{int(port)}"


def listen_address(text: str) -> str:
    """:func:`address` for a server's own address, where port 0 means any free port."""
    return address(text, any_port=True)


def add_sandbox(p: Any) -> None:
    """``--sandbox`` and the sandbox's limits (docs/sandbox.md)."""
    from arena.batch.sandbox import SandboxLimits, format_size, parse_size

    d = SandboxLimits()
    g = p.add_argument_group(
        "sandbox", "untrusted bot commands in a bubblewrap sandbox: see docs/sandbox.md"
    )
    g.add_argument(
        "--sandbox",
        action="store_true",
        help="run every command bot in the sandbox: no network (a Unix socket to the "
        "referee), read-only files, no view of the records, limits below; to sandbox "
        "only some bots, give them as --bot 'sandbox:CMD' instead",
    )
    g.add_argument("--sandbox-cpu", type=int, default=d.cpu_seconds, metavar="S",
                   help=f"CPU seconds per bot process per match (default {d.cpu_seconds})")
    g.add_argument("--sandbox-memory", type=parse_size, default=d.memory_bytes, metavar="SIZE",
                   help=f"memory per bot process (default {format_size(d.memory_bytes)})")
    g.add_argument("--sandbox-processes", type=int, default=d.processes, metavar="N",
                   help=f"processes and threads per bot (default {d.processes})")
    g.add_argument("--sandbox-files", type=int, default=d.open_files, metavar="N",
                   help=f"open files per bot process (default {d.open_files})")
    g.add_argument("--sandbox-output", type=parse_size, default=d.output_bytes, metavar="SIZE",
                   help="bytes a bot may write to stdout/stderr; the seat log stops there "
                   f"and the bot is stopped (default {format_size(d.output_bytes)})")
    g.add_argument("--sandbox-tmp", type=parse_size, default=d.tmp_bytes, metavar="SIZE",
                   help=f"size of the bot's private /tmp (default {format_size(d.tmp_bytes)})")
    g.add_argument("--sandbox-ro", action="append", default=[], metavar="PATH",
                   help="another host path the sandboxed bots may read (repeatable)")  # fmt: skip


def sandbox_of(args: argparse.Namespace) -> SandboxLimits:
    """The limits of ``--sandbox-*``. Raises ``ValueError`` for an impossible one."""
    from arena.batch.sandbox import SandboxLimits

    limits = SandboxLimits(
        cpu_seconds=args.sandbox_cpu,
        memory_bytes=args.sandbox_memory,
        processes=args.sandbox_processes,
        open_files=args.sandbox_files,
        output_bytes=args.sandbox_output,
        tmp_bytes=args.sandbox_tmp,
        read_only=tuple(os.path.abspath(p) for p in args.sandbox_ro),
    )
    limits.check()
    missing = [p for p in limits.read_only if not os.path.exists(p)]
    if missing:
        raise ValueError(f"--sandbox-ro: no such path: {missing[0]}")
    return limits


def sandboxed_bots(bots: Sequence[BotSpec], args: argparse.Namespace) -> list[BotSpec]:
    """``bots`` with every command bot sandboxed under ``--sandbox``. Raises
    ``SandboxUnavailable`` (one line: why) when a bot is to be sandboxed and cannot be."""
    out = [
        dataclasses.replace(b, sandboxed=True) if args.sandbox and not b.builtin else b
        for b in bots
    ]
    if any(b.sandboxed and not b.builtin for b in out):
        from arena.batch.sandbox import require

        require()
    return out
