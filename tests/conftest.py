"""Shared test set-up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """End-to-end tests (marked slow) run real servers and bot processes against real
    clocks; on a shared 2-core machine one can lose a race with the scheduler. They get
    one rerun, reported as such in the summary — never more, so a real failure still
    fails."""
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=1))


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Every test starts and ends with structlog's defaults: a test that configures
    logging (through the CLI) must not leave it writing to a stream that is gone."""
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="session")
def pg_socket() -> Iterator[str]:
    """One throw-away PostgreSQL cluster for the whole run (:mod:`pgkit`: skips, naming
    the ``postgresql`` package, where it is not installed); each test that wants one
    takes a fresh database in it with ``pgkit.new_database``."""
    from pgkit import postgres_cluster

    with postgres_cluster() as folder:
        yield folder
