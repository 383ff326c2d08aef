"""Shared pytest configuration of the poly test suite."""

import signal


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: slow tests (e.g. building and installing wheels into a fresh venv); "
        "run by default, deselect with -m 'not slow'",
    )
    # Started in the background of a non-interactive shell (`.ci/run &`), the test process
    # inherits SIGINT ignored, and every `poly` it starts would too (an ignored signal stays
    # ignored across exec): the tests that press Ctrl-C on a `poly` need it heard as a terminal
    # would deliver it. A handler, unlike an ignored signal, is reset to the default in children.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
