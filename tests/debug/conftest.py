"""Fixtures of the poly.debug tests: a fresh working directory and logger settings."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _workdir(tmp_path, monkeypatch):
    """Every test runs in its own directory: debug tools write to the current one."""
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture(autouse=True)
def _reset_logger():
    from poly.core import G_LOGGER

    yield
    G_LOGGER.module_severity = G_LOGGER.INFO
