"""``arena matches``: run a competition by hand against an ``arena serve`` (the organiser).

Each subcommand is one call of the ``arena.v1.Matches`` service, made with the organiser
token: ``--organiser-token-file``, else ``$ARENA_ORGANISER_TOKEN``, else the file that
``arena serve`` writes by default (so on the server's own machine nothing needs setting
up). ``--server`` defaults to ``$ARENA_SERVER``; ``--tls-ca`` (``$ARENA_TLS_CA``) trusts a
TLS server's certificate. docs/organiser.md walks through a competition.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from arena.cli.convention import UsageError
from arena.cli.options import add_rules, address, rules_of
from arena.errors import ArenaError, InvalidRules
from arena.server import channel_credentials, default_token_file, read_token_file
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

STATES = {name.lower(): value for name, value in pb.MatchState.items() if value}


def _common() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--server",
        default=os.environ.get("ARENA_SERVER", "127.0.0.1:50051"),
        type=address,
        metavar="HOST:PORT",
        help="the arena serve address (default $ARENA_SERVER or 127.0.0.1:50051)",
    )
    p.add_argument(
        "--organiser-token-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="the organiser token (default $ARENA_ORGANISER_TOKEN, else the file arena serve "
        "writes by default)",
    )
    p.add_argument(
        "--tls-ca",
        default=os.environ.get("ARENA_TLS_CA"),
        metavar="PEM",
        help="connect with TLS, trusting this CA (default $ARENA_TLS_CA; none: plaintext)",
    )
    p.add_argument(
        "--tls",
        action="store_true",
        help="connect with TLS, trusting the system's roots (implied by --tls-ca)",
    )
    p.add_argument("--tls-cert", metavar="PEM", help="client certificate (mutual TLS)")
    p.add_argument("--tls-key", metavar="PEM", help="the client certificate's key")
    p.add_argument("--timeout", type=float, default=10.0, metavar="S", help="per call (default 10)")
    return p


def register(sub: Any) -> None:
    p = sub.add_parser(
        "matches",
        help="the organiser's client: create, list, get, cancel, watch, fetch matches",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  arena matches create --deals 2 --seat-names a b c d\n"
        "  arena matches list --state running\n  arena matches watch m-0123456789ab\n"
        "  arena matches fetch m-0123456789ab -o m.jsonl",
    )
    verbs = p.add_subparsers(dest="verb_name", metavar="VERB", required=True)
    common = _common()

    create = verbs.add_parser("create", parents=[common], help="create a match: id + 4 tokens")
    create.add_argument("--seed", type=int, default=None, help="match seed (default: random)")
    add_rules(create)
    create.add_argument("--seat-names", nargs=4, default=[], metavar="NAME", help="4 names")
    create.add_argument(
        "--policy",
        choices=["lenient", "strict"],
        default="lenient",
        help="fault policy (default lenient; see arena serve)",
    )
    create.add_argument("--max-faults", type=int, default=0, help="lenient: 0 = server default")
    create.add_argument("--time-limit", type=int, default=0, metavar="MS", help="per decision")
    create.add_argument("--time-bank", type=int, default=0, metavar="MS", help="per seat")
    create.add_argument("--grace", type=int, default=0, metavar="MS", help="reconnect grace")
    create.add_argument("--json", action="store_true", help="print one JSON object")
    create.set_defaults(verb=_create)

    listing = verbs.add_parser("list", parents=[common], help="the server's matches")
    listing.add_argument(
        "--state", action="append", default=[], choices=sorted(STATES), help="only these states"
    )
    listing.add_argument("--json", action="store_true", help="one JSON object per match")
    listing.set_defaults(verb=_list)

    get = verbs.add_parser("get", parents=[common], help="one match's state")
    get.add_argument("match_id", metavar="MATCH")
    get.add_argument("--json", action="store_true", help="print one JSON object")
    get.set_defaults(verb=_get)

    cancel = verbs.add_parser("cancel", parents=[common], help="cancel a match")
    cancel.add_argument("match_id", metavar="MATCH")
    cancel.add_argument("--reason", default="cancelled by the organiser", help="recorded")
    cancel.add_argument("--json", action="store_true", help="print one JSON object")
    cancel.set_defaults(verb=_cancel)

    watch = verbs.add_parser("watch", parents=[common], help="follow the public events")
    watch.add_argument("match_id", metavar="MATCH")
    watch.add_argument("--from", dest="from_index", type=int, default=0, metavar="INDEX")
    shape = watch.add_mutually_exclusive_group()
    shape.add_argument(
        "--table", action="store_true", help="draw the table (the default on a terminal)"
    )
    shape.add_argument("--json", action="store_true", help="one JSON event per line (piped)")
    watch.set_defaults(verb=_watch, timeout=None)

    fetch = verbs.add_parser("fetch", parents=[common], help="the match record (JSON Lines)")
    fetch.add_argument("match_id", metavar="MATCH")
    fetch.add_argument(
        "--full",
        action="store_true",
        help="a running match's whole record, hidden cards included (default: the "
        "spectators' copy until the match ends)",
    )
    fetch.add_argument("-o", "--output", type=Path, default=None, metavar="FILE")
    fetch.set_defaults(verb=_fetch)
    p.set_defaults(func=run)


def organiser_token(args: argparse.Namespace) -> str:
    """The token to send: the file given, the environment, or the server's default file.
    "" when there is none (the server may be ``--open``)."""
    if args.organiser_token_file is not None:
        return read_token_file(args.organiser_token_file)
    if os.environ.get("ARENA_ORGANISER_TOKEN"):
        return os.environ["ARENA_ORGANISER_TOKEN"].strip()
    default = default_token_file()
    return read_token_file(default) if default.exists() else ""


def run(args: argparse.Namespace) -> int:
    try:
        token = organiser_token(args)
        if args.tls or args.tls_ca or args.tls_cert:
            credentials = channel_credentials(args.tls_ca, args.tls_cert, args.tls_key)
            channel = grpc.secure_channel(args.server, credentials)
        else:
            channel = grpc.insecure_channel(args.server)
    except ArenaError as exc:
        print(f"arena matches: {exc}", file=sys.stderr)
        return 2
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with channel:
        stub = pb_grpc.MatchesStub(channel)
        try:
            return int(args.verb(stub, args, metadata))
        except grpc.RpcError as exc:
            code = exc.code()
            print(f"arena matches {args.verb_name}: {code.name}: {exc.details()}", file=sys.stderr)
            return 1


Metadata = tuple[tuple[str, str], ...]


def _create(stub: pb_grpc.MatchesStub, args: argparse.Namespace, md: Metadata) -> int:
    try:
        chosen = rules_of(args)  # checked here: a bad variant is a usage error, not an RPC
    except InvalidRules as exc:
        raise UsageError(f"--rules: {exc}") from None
    rules = {k: json.dumps(v) for k, v in chosen.changes().items() if k != "deals"}
    request = pb.CreateMatchRequest(
        rules=rules,
        deals=chosen.deals or 0,
        seat_names=args.seat_names,
        policy=args.policy,
        max_faults=args.max_faults,
        time_control=pb.TimeControl(
            decision_ms=args.time_limit, bank_ms=args.time_bank, grace_ms=args.grace
        ),
    )
    if args.seed is not None:
        request.seed = args.seed
    created = stub.Create(request, metadata=md, timeout=args.timeout)
    if args.json:
        print(json.dumps(MessageToDict(created, preserving_proto_field_name=True)))
        return 0
    print(f"match {created.match_id}")
    if created.seat_address:  # arena serve --workers: the worker hosting the match
        print(f"address {created.seat_address}")
    for seat, token in enumerate(created.seat_tokens):
        print(f"seat {seat}  {token}")
    where = " and the address (ARENA_SERVER)" if created.seat_address else ""
    print(f"give each bot its seat's token (ARENA_TOKEN){where}; keep them secret",
          file=sys.stderr)  # fmt: skip
    return 0


def _list(stub: pb_grpc.MatchesStub, args: argparse.Namespace, md: Metadata) -> int:
    request = pb.ListMatchesRequest(states=[STATES[s] for s in args.state])
    _print_infos(stub.List(request, metadata=md, timeout=args.timeout).matches, args.json)
    return 0


def _get(stub: pb_grpc.MatchesStub, args: argparse.Namespace, md: Metadata) -> int:
    request = pb.GetMatchRequest(match_id=args.match_id)
    _print_infos([stub.Get(request, metadata=md, timeout=args.timeout)], args.json)
    return 0


def _cancel(stub: pb_grpc.MatchesStub, args: argparse.Namespace, md: Metadata) -> int:
    request = pb.CancelMatchRequest(match_id=args.match_id, reason=args.reason)
    _print_infos([stub.Cancel(request, metadata=md, timeout=args.timeout)], args.json)
    return 0


def _print_infos(infos: Iterable[pb.MatchInfo], as_json: bool) -> None:
    for info in infos:
        if as_json:
            print(json.dumps(MessageToDict(info, preserving_proto_field_name=True)))
            continue
        state = pb.MatchState.Name(info.state).lower()
        names = ", ".join(
            f"{n}{'' if up else ' (away)'}"
            for n, up in zip(info.seat_names, info.connected, strict=False)
        )
        line = f"{info.match_id}  {state:<9} deal {info.deal:<3} seats: {names or '-'}"
        if info.HasField("result"):
            winner = "draw" if info.result.winner_team < 0 else f"team {info.result.winner_team}"
            line += f"  result: {winner} ({info.result.reason})"
        if info.error:
            line += f"  error: {info.error}"
        print(line)


def _watch(stub: pb_grpc.MatchesStub, args: argparse.Namespace, md: Metadata) -> int:
    request = pb.WatchRequest(match_id=args.match_id, from_index=args.from_index)
    if args.table or (not args.json and sys.stdout.isatty()):
        from rich.console import Console

        from arena.cli.watch_table import draw

        info = stub.Get(pb.GetMatchRequest(match_id=args.match_id), metadata=md, timeout=10)
        events = stub.Watch(request, metadata=md, timeout=args.timeout)
        draw(events, list(info.seat_names), f"match {args.match_id}", Console())
        return 0
    for event in stub.Watch(request, metadata=md, timeout=args.timeout):
        print(json.dumps(MessageToDict(event, preserving_proto_field_name=True)), flush=True)
    return 0


def _fetch(stub: pb_grpc.MatchesStub, args: argparse.Namespace, md: Metadata) -> int:
    request = pb.FetchRecordRequest(match_id=args.match_id, full=args.full)
    lines = [c.line for c in stub.FetchRecord(request, metadata=md, timeout=args.timeout)]
    text = "".join(line + "\n" for line in lines)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
        print(f"{len(lines)} lines written to {args.output}", file=sys.stderr)
    return 0
