"""Shared test set-up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _fresh_logging() -> Iterator[None]:
    """Every test starts and ends with structlog's defaults: a test that configures
    logging (through the CLI) must not leave it writing to a stream that is gone."""
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()
    yield
    structlog.reset_defaults()
