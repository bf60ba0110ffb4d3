"""A throw-away PostgreSQL cluster for the competition tests: ``initdb`` into a fresh
folder, ``pg_ctl start`` on a Unix socket in it (no TCP port: nothing to clash with),
trust authentication, fsync off; stopped and removed afterwards.

PostgreSQL refuses to run as root: as root (CI) the cluster runs as ``nobody`` (through
``runuser``) in a folder that user owns; the tests connect as the cluster's superuser
``postgres`` through the socket. Without the server binaries (Debian's package
``postgresql`` puts them in /usr/lib/postgresql/N/bin) the tests skip, naming it.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NEEDED = ("initdb", "pg_ctl", "postgres")


def postgres_bin() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres (PATH first, then Debian's)."""
    on_path = [shutil.which(n) for n in NEEDED]
    if all(on_path):
        return Path(os.path.realpath(on_path[0] or "")).parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all((Path(folder) / n).exists() for n in NEEDED):
            return Path(folder)
    return None


def _as_owner(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("PostgreSQL cannot run as root and runuser (util-linux) is missing")
    return [runuser, "-u", "nobody", "--", *argv]


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """A running cluster; yields the socket folder (``host=`` of a URL)."""
    binaries = postgres_bin()
    if binaries is None:
        pytest.skip("PostgreSQL server binaries not found: install the package postgresql")
    # as root, under /tmp itself: nobody must reach it (a private $TMPDIR would not do)
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-", dir="/tmp" if os.geteuid() == 0 else None))
    data = folder / "data"
    data.mkdir(mode=0o700)
    if os.geteuid() == 0:
        for path in (folder, data):
            os.chown(path, 65534, 65534)  # nobody
    try:
        subprocess.run(
            _as_owner([str(binaries / "initdb"), "-D", str(data), "-U", "postgres",
                       "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"]),
            check=True, capture_output=True, timeout=120, cwd=folder,
        )  # fmt: skip
        options = f"-k {folder} -c listen_addresses='' -F"
        subprocess.run(
            _as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"),
                       "-w", "-t", "60", "-o", options, "start"]),
            check=True, capture_output=True, timeout=90, cwd=folder,
        )  # fmt: skip
    except subprocess.CalledProcessError as exc:
        log = folder / "log"
        shutil.rmtree(folder, ignore_errors=True)
        raise AssertionError(
            f"PostgreSQL did not start: {exc.stderr!r} {log.read_text() if log.exists() else ''}"
        ) from None
    try:
        yield str(folder)
    finally:
        subprocess.run(
            _as_owner([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True, timeout=60, cwd=folder,
        )  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)


def new_database(socket_folder: str) -> str:
    """A fresh, empty database in the cluster; its ``postgresql://`` URL."""
    import psycopg

    name = "arena_" + uuid.uuid4().hex[:12]
    with psycopg.connect(
        f"host={socket_folder} user=postgres dbname=postgres", autocommit=True
    ) as db:
        db.execute(f"CREATE DATABASE {name}")
    return f"postgresql://postgres@/{name}?host={socket_folder}"
