"""A joined worker's record, copied into the front's ``--records`` (a thread of the front).

A worker that joined from another host (``arena serve --join``) writes its records on
its own host. The front's lobby reads an event match's result from its record, as it
does for a local worker's match in the shared folder, so when an event match ends on a
joined worker the front fetches the record with ``Matches.FetchRecord`` (the organiser's
token, the worker's TLS credentials: the same call the front forwards for organisers)
and keeps a copy in its own folder. The copy is written beside its final name and
renamed when whole, so a reader (the lobby, ``arena replay``, a restart's resume scan)
never sees half of it; a record already there and complete (shared storage) is kept.
The copy must be the match's own (its header names it) and no bigger than
``MAX_RECORD_BYTES``: a confused or hostile worker cannot fill the front's disk or
hand it another match's record.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import grpc

from arena.errors import ArenaError
from arena.records import RecordError, read_record
from arena.server.limits import is_match_id
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

TRIES = 5  # a finished match's record is whole; a few tries cover a slow disk
FETCH_S = 20.0  # per try: a worker that does not send a record in that time is stuck
MAX_RECORD_BYTES = 64 << 20  # a whole match to A is well under a megabyte


def complete(path: Path, match_id: str = "") -> bool:
    """Whether ``path`` holds a complete record (of ``match_id``, if given)."""
    try:
        if not path.is_file():
            return False
        record = read_record(path)
    except (RecordError, OSError):
        return False
    named = record.header.match_id if record.header is not None else None
    return record.complete and (not match_id or named == match_id)


def copy_record(address: str, credentials: Any, token: str, match_id: str, folder: Path) -> Path:
    """(blocking) The record of ``match_id`` from the worker at ``address`` (TLS with
    ``credentials``, else plaintext), written to ``folder``; its path there.

    Raises:
        ArenaError: the worker did not give a complete record (it died, or is cut off).
    """
    if not is_match_id(match_id):
        raise ArenaError(f"not a match id: {match_id!r}")
    target = folder / f"{match_id}.jsonl"
    if complete(target, match_id):  # written into the front's folder (shared storage)
        return target
    part = folder / f".{match_id}.jsonl.part"  # not *.jsonl: no resume scan picks it up
    try:
        problem = _fetch(address, credentials, token, match_id, part)
        if not problem:
            os.replace(part, target)
            return target
    finally:
        part.unlink(missing_ok=True)
    raise ArenaError(f"the record of {match_id} from {address}: {problem}")


def _fetch(address: str, credentials: Any, token: str, match_id: str, part: Path) -> str:
    """Write the worker's record of ``match_id`` to ``part``; "" or why it could not."""
    channel = (
        grpc.secure_channel(address, credentials)
        if credentials is not None
        else grpc.insecure_channel(address)
    )
    request = pb.FetchRecordRequest(match_id=match_id, full=True)
    metadata = (("authorization", f"Bearer {token}"),)
    problem = "an incomplete record, or another match's"
    with channel:
        stub = pb_grpc.MatchesStub(channel)
        for attempt in range(TRIES):
            size = 0
            try:
                with part.open("w", encoding="utf-8") as out:
                    for chunk in stub.FetchRecord(request, metadata=metadata, timeout=FETCH_S):
                        size += len(chunk.line) + 1
                        if size > MAX_RECORD_BYTES:
                            return f"over {MAX_RECORD_BYTES >> 20} MiB"
                        out.write(chunk.line + "\n")
            except grpc.RpcError as exc:
                problem = f"{exc.code().name}: {exc.details()}"
                if exc.code() is grpc.StatusCode.NOT_FOUND:
                    return problem  # no record on disk (it never started)
            else:
                if complete(part, match_id):
                    return ""
            time.sleep(0.2 * (attempt + 1))
    return problem


__all__ = ["copy_record"]
