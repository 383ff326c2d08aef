"""Errors of the `poly` command: the exit statuses, the one red `[!]` line an error is reported
as, and ``handle_errors``, which turns what a subcommand raises into that line and a status."""

from __future__ import annotations

import functools
import sys
from typing import Any

import click

from poly.cli.args.logging import show_traceback

EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
"""Exit statuses, one per kind of outcome, the same in every command:

- ``EXIT_PASS`` (0): everything passed;
- ``EXIT_FAIL`` (1): a comparison or check failed, or poly could not do what was asked (a bad
  model or data file, a backend error, a feature the installed TensorRT lacks, e.g. tactic
  replays or --fp16 with TensorRT-RTX: one line naming the feature and full TensorRT);
- ``EXIT_USAGE`` (2): the command line is wrong (an unknown flag, a bad value, a file named on
  the command line that does not exist, options in an order that cannot work)."""


def _print_traceback() -> None:
    """The traceback of the exception being handled, on stderr (-v): traceback is imported here, not
    by every command."""
    import traceback

    traceback.print_exc()


def _red(text: str, stream: Any) -> str:
    return f"\033[91m{text}\033[0m" if getattr(stream, "isatty", lambda: False)() else text


def error_line(message: str) -> None:
    """Prints one red `[!]` line on stderr (characters UTF-8 cannot encode escaped)."""
    from poly.core.logging.logger import printable

    print(_red(f"[!] {printable(message)}", sys.stderr), file=sys.stderr, flush=True)


class _CriticalRecorder:
    """Remembers messages G_LOGGER.critical already printed, so they are not printed twice."""

    def __init__(self) -> None:
        self.messages: set[Any] = set()

    def __enter__(self) -> Any:
        from poly.core import G_LOGGER

        original = G_LOGGER.critical

        def critical(message: Any, ExceptionType: Any = None) -> Any:
            text = message() if callable(message) else str(message)
            self.messages.add(text)
            return original(text, ExceptionType)

        G_LOGGER.critical = critical  # type: ignore[method-assign]
        self._logger = G_LOGGER
        return self

    def __exit__(self, *exc: Any) -> bool:  # type: ignore[exit-return]
        self._logger.__dict__.pop("critical", None)
        return False


def handle_errors(func: Any) -> Any:
    """
    Wraps a command callback: poly errors become one red line and exit 1, as do files that cannot
    be accessed (the line names the file); unexpected errors the same (with the traceback under -v);
    the callback's integer result is the exit status.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from poly.core import PolyException, PolyUsageError

        with _CriticalRecorder() as recorder:
            try:
                return func(*args, **kwargs)
            except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
                raise
            except PolyException as exc:
                if show_traceback():
                    _print_traceback()
                if str(exc) not in recorder.messages:
                    error_line(str(exc))
                return EXIT_USAGE if isinstance(exc, PolyUsageError) else EXIT_FAIL
            except FileNotFoundError as exc:
                if show_traceback():
                    _print_traceback()
                error_line(f"No such file: {exc.filename or exc}")
                return EXIT_USAGE
            except OSError as exc:
                if show_traceback():
                    _print_traceback()
                if exc.filename is None:
                    error_line(f"{type(exc).__name__}: {exc}" + ("" if show_traceback() else " (run with -v for details)"))
                else:  # a file that cannot be read or written: a directory, no permission, ...
                    error_line(f"Cannot access '{exc.filename}': {exc.strerror or exc}")
                return EXIT_FAIL
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # a backend error: report it without a traceback
                if show_traceback():
                    _print_traceback()
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                error_line(f"{type(exc).__name__}: {first}" + ("" if show_traceback() else " (run with -v for details)"))
                return EXIT_FAIL

    return wrapper
