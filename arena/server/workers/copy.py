"""A joined worker's record, copied into the front's ``--records`` (a thread of the front).

A worker that joined from another host (``arena serve --join``) writes its records on
its own host. The front's lobby reads an event match's result from its record, as it
does for a local worker's match in the shared folder, so when an event match ends on a
joined worker the front fetches the record with ``Matches.FetchRecord`` (the organiser's
token, the worker's TLS credentials: the same call the front forwards for organisers)
and keeps a copy in its own folder. The copy is written beside its final name and
renamed when whole, so a reader (the lobby, ``arena replay``, a restart's resume scan)
never sees half of it; a record already there and complete (shared storage) is kept.
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


def complete(path: Path) -> bool:
    try:
        return path.is_file() and read_record(path).complete
    except (RecordError, OSError):
        return False


def copy_record(address: str, credentials: Any, token: str, match_id: str, folder: Path) -> Path:
    """(blocking) The record of ``match_id`` from the worker at ``address`` (TLS with
    ``credentials``, else plaintext), written to ``folder``; its path there.

    Raises:
        ArenaError: the worker did not give a complete record (it died, or is cut off).
    """
    if not is_match_id(match_id):
        raise ArenaError(f"not a match id: {match_id!r}")
    target = folder / f"{match_id}.jsonl"
    if complete(target):  # the worker writes into the front's folder (shared storage)
        return target
    part = folder / f".{match_id}.jsonl.part"  # not *.jsonl: no resume scan picks it up
    channel = (
        grpc.secure_channel(address, credentials)
        if credentials is not None
        else grpc.insecure_channel(address)
    )
    request = pb.FetchRecordRequest(match_id=match_id, full=True)
    metadata = (("authorization", f"Bearer {token}"),)
    problem = "an incomplete record"
    with channel:
        stub = pb_grpc.MatchesStub(channel)
        for attempt in range(TRIES):
            try:
                with part.open("w", encoding="utf-8") as out:
                    for chunk in stub.FetchRecord(request, metadata=metadata, timeout=60):
                        out.write(chunk.line + "\n")
            except grpc.RpcError as exc:
                problem = f"{exc.code().name}: {exc.details()}"
                if exc.code() is grpc.StatusCode.NOT_FOUND:
                    break  # no record on disk (it never started)
            else:
                if complete(part):
                    os.replace(part, target)
                    return target
            time.sleep(0.2 * (attempt + 1))
    part.unlink(missing_ok=True)
    raise ArenaError(f"the record of {match_id} from {address}: {problem}")


__all__ = ["copy_record"]
