"""Shared pytest configuration of the poly test suite."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: slow tests (e.g. building and installing wheels into a fresh venv); "
        "run by default, deselect with -m 'not slow'",
    )
