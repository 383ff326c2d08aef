"""Fixtures for the poly.core tests."""

import pytest

from poly.core import G_LOGGER, Logger


@pytest.fixture
def logger():
    """A fresh logger, so that tests do not depend on G_LOGGER's state."""
    log = Logger()
    yield log
    log.log_file = None


@pytest.fixture
def g_logger():
    """G_LOGGER, with its configuration restored after the test."""
    saved = (
        G_LOGGER.module_severity,
        G_LOGGER.log_format,
        G_LOGGER.logging_indent,
        set(G_LOGGER.once_logged),
    )
    yield G_LOGGER
    G_LOGGER.log_file = None
    G_LOGGER.module_severity, G_LOGGER.log_format, G_LOGGER.logging_indent = saved[:3]
    G_LOGGER.once_logged = saved[3]
