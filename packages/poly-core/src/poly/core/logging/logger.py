"""
The global logger ``G_LOGGER``.

Behaves like Polygraphy's logger: numeric severities from ULTRA_VERBOSE to CRITICAL, one-letter
prefixes (``[V]``, ``[I]``, ``[W]``, ``[E]``, ``[!]``...), per-path verbosity, indentation,
optional timestamps and file/line information, a log file, and ``critical()`` that logs and
then raises ``PolyException``. Messages below CRITICAL go to stdout, CRITICAL to stderr.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import poly.core.constants as constants
from poly.core import config
from poly.core.logging.exception import PolyException, PolyInternalException

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Mapping, Sequence
    from types import ModuleType, TracebackType
    from typing import TypeAlias

    #: A message: the text, or a callable returning it (called only when the severity is enabled).
    Message: TypeAlias = str | Callable[..., str]
    #: What ``module_severity`` accepts: a severity, or path prefix to severity.
    SeverityValue: TypeAlias = int | Mapping[str, int] | set[str | int] | frozenset[str | int]

_F = TypeVar("_F", bound="Callable[..., Any]")
_TrieNode = dict[str, Any]

__all__ = ["Logger", "LogMode", "SeverityTrie", "G_LOGGER", "printable", "LoggerIndent", "LoggerVerbosity",
           "has_colors"]

_THIS_FILE = os.path.normcase(os.path.abspath(__file__))
# the `poly/` package directory this file lies in (poly/core/logging/logger.py)
_POLY_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_ANSI_RESET = "\033[0m"


class LogMode(enum.IntEnum):
    """How often a message is logged."""

    EACH = 0
    """Log the message every time."""
    ONCE = 1
    """Log the message only the first time; later identical messages are dropped."""


def printable(text: str) -> str:
    """
    ``text`` with what UTF-8 cannot encode (lone surrogates, as a damaged file's JSON can hold:
    ``"\\udcff"``) written as backslash escapes, so printing it cannot fail.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _print(text: str, stream: IO[str], flush: bool) -> None:
    try:
        print(text, file=stream, flush=flush)
    except UnicodeEncodeError:  # a stream whose encoding lacks some of the characters
        encoding = getattr(stream, "encoding", None) or "ascii"
        print(text.encode(encoding, "backslashreplace").decode(encoding), file=stream, flush=flush)


def _split_path(path: str | None) -> list[str]:
    # Leading, trailing and doubled separators create empty components, which carry no meaning.
    parts = os.path.normpath(path).replace("\\", "/").split("/") if path else []
    return [part for part in parts if part and part != "."]


class _Indent(contextlib.ContextDecorator):
    """``Logger.indent``'s context manager (also a decorator, as the generator-based one it
    replaces was): a class, since comparisons enter several an output and a generator's context
    manager costs a few microseconds each."""

    def __init__(self, logger: Logger, level: int) -> None:
        self.logger, self.level = logger, level

    def _recreate_cm(self) -> _Indent:  # (a decorated function's calls may nest: each its own)
        return _Indent(self.logger, self.level)

    def __enter__(self) -> Logger:
        self.old = self.logger.logging_indent
        self.logger.logging_indent = self.old + self.level
        return self.logger

    def __exit__(self, *exc: object) -> None:
        self.logger.logging_indent = self.old


class SeverityTrie:
    """
    Per-path severities: the severity for a file is the one whose key is the longest prefix,
    component by component, of the file's path; the key ``""`` holds the default.

    Paths of poly's own files are relative to the ``poly/`` package directory (``core/backend/runner.py``,
    ``onnx/``); other files use their absolute path.
    """

    def __init__(self, severity_dict: Mapping[str, int]) -> None:
        """
        Args:
            severity_dict (Dict[str, int]): Path prefix to severity; must contain ``""``.
        """
        if "" not in severity_dict:
            raise ValueError("severity_dict must include the default severity under the key ''")
        self._dict = dict(severity_dict)
        self._trie: _TrieNode = {}
        for path, severity in severity_dict.items():
            node = self._trie
            for component in _split_path(path):
                node = node.setdefault(component, {})
            node[""] = severity
        self.has_non_default_entries = len(self._trie) > 1
        #: The lowest severity of any path: a message below it is logged nowhere.
        self.lowest: int = min(self._dict.values())

    def get(self, path: str | None = None) -> int:
        """
        Returns the severity that applies to ``path`` (the default when ``path`` is None).

        Args:
            path (str): A path as produced by ``Logger.module_path``.

        Returns:
            int: The severity.
        """
        severity: int = self._trie[""]
        if path is None or not self.has_non_default_entries:
            return severity
        node = self._trie
        for component in _split_path(path):
            child: _TrieNode | None = node.get(component)
            if child is None:
                break
            node = child
            severity = node.get("", severity)
        return severity

    def to_dict(self) -> dict[str, int]:
        """Returns the path-to-severity dictionary this trie was built from."""
        return dict(self._dict)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SeverityTrie) and self._dict == other._dict

    def __repr__(self) -> str:
        return f"SeverityTrie({self._dict!r})"


def _display_path(path: str | None) -> str | None:
    """The path shown by line information: ``module_path``'s, with files outside poly that lie
    under the working directory shown relative to it (``tests/test_x.py``, as Polygraphy shows
    its own tests)."""
    if not path or not os.path.isabs(path):
        return path
    try:
        cwd = os.getcwd()
    except OSError:  # a deleted working directory
        return path
    return os.path.relpath(path, cwd) if path.startswith(cwd + os.sep) else path


def _path_severity_pair(value: object) -> dict[str, int] | None:
    """``{path: severity}`` for a set holding one path and one int severity, else None."""
    if not isinstance(value, (set, frozenset)) or len(value) != 2:
        return None
    paths = [item for item in value if isinstance(item, str)]
    severities = [item for item in value if isinstance(item, int) and not isinstance(item, bool)]
    return {paths[0]: severities[0]} if len(paths) == 1 and len(severities) == 1 else None


class Logger:
    """
    Global logging interface. Do not construct one; use ``G_LOGGER``.
    """

    ULTRA_VERBOSE = -20
    """Enable unreasonably verbose messages and above."""
    SUPER_VERBOSE = -10
    """Enable extremely verbose messages and above."""
    EXTRA_VERBOSE = 0
    """Enable extra verbose messages and above."""
    VERBOSE = 10
    """Enable verbose messages and above."""
    INFO = 20
    """Enable informative messages and above."""
    START = 22
    """Enable messages marking the start of a task and above."""
    FINISH = 28
    """Enable messages marking the end of a task and above."""
    WARNING = 30
    """Enable warnings and above."""
    ERROR = 40
    """Enable errors and above."""
    CRITICAL = 50
    """Enable only critical errors."""

    SEVERITY_LETTER_MAPPING = {
        ULTRA_VERBOSE: "[U]",
        SUPER_VERBOSE: "[S]",
        EXTRA_VERBOSE: "[X]",
        VERBOSE: "[V]",
        INFO: "[I]",
        START: "[I]",
        FINISH: "[I]",
        WARNING: "[W]",
        ERROR: "[E]",
        CRITICAL: "[!]",
    }
    """The prefix of each severity (START and FINISH share INFO's letter, as in Polygraphy)."""

    SEVERITY_COLOR_MAPPING = {
        ULTRA_VERBOSE: "\033[90m",  # dark gray
        SUPER_VERBOSE: "\033[38;5;126m",  # medium violet red
        EXTRA_VERBOSE: "\033[38;5;104m",  # medium purple
        VERBOSE: "\033[95m",  # light magenta
        INFO: None,
        START: "\033[96m",  # light cyan
        FINISH: "\033[92m",  # light green
        WARNING: "\033[93m",  # light yellow
        ERROR: "\033[91m",  # light red
        CRITICAL: "\033[91m",  # light red
    }
    """The ANSI colour of each severity; None leaves the terminal's colour."""

    SEVERITY_NAMES = {
        "ULTRA_VERBOSE": ULTRA_VERBOSE,
        "SUPER_VERBOSE": SUPER_VERBOSE,
        "EXTRA_VERBOSE": EXTRA_VERBOSE,
        "VERBOSE": VERBOSE,
        "INFO": INFO,
        "START": START,
        "FINISH": FINISH,
        "WARNING": WARNING,
        "ERROR": ERROR,
        "CRITICAL": CRITICAL,
    }
    """Severity by name."""

    LOG_FORMATS = ("timestamp", "line-info", "no-colors")
    """The values ``log_format`` accepts."""

    def __init__(self, severity: SeverityValue = INFO, colors: bool = True, letter: bool = True, timestamp: bool = False, line_info: bool = False) -> None:
        """
        Args:
            severity (Union[int, Dict[str, int]]):
                    Severity below which messages are dropped, or a dictionary of path prefix to
                    severity with ``""`` as the default (see ``module_severity``).
            colors (bool): Whether to colour messages written to a terminal.
            letter (bool): Whether to prefix messages with their severity letter.
            timestamp (bool): Whether to prefix messages with the time.
            line_info (bool): Whether to prefix messages with the calling file and line.
        """
        self._lock = threading.RLock()
        self.logging_indent = 0
        self._tty_of: tuple[IO[str], bool] | None = None  # the last stream printed to, and whether it is a terminal
        self.once_logged: set[str] = set()
        self.colors = colors
        self.letter = letter
        self.timestamp = timestamp
        self.line_info = line_info
        self.logger_callbacks: list[Callable[[SeverityTrie], object]] = []
        self._log_path: str | None = None
        self._log_file: IO[str] | None = None
        self._module_severity: SeverityTrie
        self.module_severity = severity
        self._python_logger: logging.Logger | None = None

    #: Python ``logging`` has no negative levels: poly's lowest severities go to these levels.
    PYTHON_LOGGING_LEVELS = {ULTRA_VERBOSE: 2, SUPER_VERBOSE: 4, EXTRA_VERBOSE: 6}

    #: The name of the ``logging`` logger used when ``use_python_logging_system`` is set
    #: (Polygraphy's, so handlers configured for Polygraphy receive poly's messages).
    PYTHON_LOGGER_NAME = "Polygraphy"

    # -- configuration -------------------------------------------------------------------------

    @property
    def module_severity(self) -> SeverityTrie:
        """
        The ``SeverityTrie`` of severities below which messages are dropped.

        Assign a severity, or a dictionary of path prefix to severity where ``""`` is the
        default (INFO when absent). Paths of poly's files are relative to the ``poly/`` package
        directory, e.g. ``{"": G_LOGGER.INFO, "onnx/": G_LOGGER.VERBOSE}``; other files are
        matched by absolute path. A set of one path and one severity, such as
        ``{"", G_LOGGER.INFO}``, is read as that one-entry dictionary (Polygraphy accepts it too).
        """
        return self._module_severity

    @module_severity.setter
    def module_severity(self, value: SeverityValue | SeverityTrie) -> None:
        if not isinstance(value, SeverityTrie):
            given: object = _path_severity_pair(value) or value
            entries: dict[str, object] = dict(given) if isinstance(given, dict) else {"": given}
            entries.setdefault("", Logger.INFO)
            for key, severity in entries.items():
                if isinstance(severity, bool) or not isinstance(severity, int):
                    raise TypeError(f"Severity for {key!r} must be an int, not {severity!r}")
            value = SeverityTrie(cast("dict[str, int]", entries))
        self._module_severity = value
        for callback in self.logger_callbacks:
            callback(self._module_severity)

    @property
    def severity(self) -> int:
        """The default severity (the ``""`` entry of ``module_severity``); assignable."""
        return self._module_severity.get()

    @severity.setter
    def severity(self, value: int) -> None:
        entries = self._module_severity.to_dict() if self._module_severity else {}
        entries[""] = value
        self.module_severity = entries

    @property
    def log_format(self) -> list[str]:
        """
        The active formats, a list drawn from ``"timestamp"``, ``"line-info"`` and ``"no-colors"``.
        Assigning sets ``timestamp``, ``line_info`` and ``colors`` accordingly.
        """
        formats = []
        if self.timestamp:
            formats.append("timestamp")
        if self.line_info:
            formats.append("line-info")
        if not self.colors:
            formats.append("no-colors")
        return formats

    @log_format.setter
    def log_format(self, formats: str | Sequence[str] | None) -> None:
        formats = [formats] if isinstance(formats, str) else list(formats or [])
        unknown = [fmt for fmt in formats if fmt not in Logger.LOG_FORMATS]
        if unknown:
            raise ValueError(f"Unknown log format(s): {unknown}; choose from {list(Logger.LOG_FORMATS)}")
        self.timestamp = "timestamp" in formats
        self.line_info = "line-info" in formats
        self.colors = "no-colors" not in formats

    @property
    def log_file(self) -> str | None:
        """
        Path of a file that receives every logged message, without colours, or None.

        Assigning a path creates its parent directories and truncates the file (as Polygraphy's
        ``--log-file`` does); messages are then appended as they are logged.
        """
        return self._log_path

    @log_file.setter
    def log_file(self, value: str | os.PathLike[str] | None) -> None:
        with self._lock:
            if self._log_file is not None:
                self._log_file.close()
            self._log_path = None
            self._log_file = None
            if value:
                value = os.fspath(value)
                dir_path = os.path.dirname(value)
                if dir_path:
                    os.makedirs(dir_path, exist_ok=True)
                self._log_file = open(value, "w", encoding="utf-8")
                self._log_path = value

    @property
    def use_python_logging_system(self) -> bool:
        """
        Whether messages go to Python's ``logging`` (logger ``"Polygraphy"``, the message with its
        severity letter, at the severity's value as level; the three levels below VERBOSE at
        ``PYTHON_LOGGING_LEVELS``) instead of stdout/stderr. ``log_file`` still receives them.
        """
        return self._python_logger is not None

    @use_python_logging_system.setter
    def use_python_logging_system(self, value: bool) -> None:
        import logging  # here: Python's logging system (with traceback, string...) only for who asks for it

        self._python_logger = logging.getLogger(Logger.PYTHON_LOGGER_NAME) if value else None

    def register_callback(self, callback: Callable[[SeverityTrie], object]) -> None:
        """
        Registers ``callback(severity_trie)``, called now and whenever ``module_severity`` changes.

        Args:
            callback (Callable[[SeverityTrie], None]): The callback.
        """
        callback(self._module_severity)
        self.logger_callbacks.append(callback)

    @classmethod
    def severity_from_name(cls, name: str) -> int:
        """
        Returns the severity called ``name`` (case-insensitive; ``-`` may replace ``_``).

        Args:
            name (str): e.g. ``"verbose"``, ``"EXTRA_VERBOSE"``, ``"extra-verbose"``.

        Returns:
            int: The severity.
        """
        key = name.strip().upper().replace("-", "_")
        if key not in cls.SEVERITY_NAMES:
            raise ValueError(f"Unknown severity: {name!r}; choose from {list(cls.SEVERITY_NAMES)}")
        return cls.SEVERITY_NAMES[key]

    # -- context managers ----------------------------------------------------------------------

    def indent(self, level: int = 1) -> _Indent:
        """
        Context manager that indents messages logged inside it by ``level`` more tabs (and gives
        the logger to ``as``).

        Args:
            level (int): Extra indentation levels.
        """
        return _Indent(self, level)

    @contextlib.contextmanager
    def verbosity(self, severity: SeverityValue | SeverityTrie = CRITICAL) -> Iterator[Logger]:
        """
        Context manager that sets ``module_severity`` for its duration and restores the previous
        value afterwards.

        Args:
            severity (Union[int, Dict[str, int]]):
                    As for ``module_severity``. Defaults to CRITICAL, which silences everything
                    but critical errors.
        """
        old = self._module_severity
        self.module_severity = severity
        try:
            yield self
        finally:
            self.module_severity = old

    # -- paths ---------------------------------------------------------------------------------

    @staticmethod
    def module_path(path: str | os.PathLike[str]) -> str:
        """
        Returns ``path`` relative to the ``poly/`` package directory that contains it, or the
        absolute path for files outside poly.

        Args:
            path (str): A source file path.

        Returns:
            str: The path used for per-path severities and line information.
        """
        abs_path = os.path.abspath(path)
        poly_pkg = sys.modules.get("poly")
        roots = list(getattr(poly_pkg, "__path__", [])) or [_POLY_DIR]
        for root in roots:
            root = os.path.abspath(root)
            if abs_path.startswith(root + os.sep):
                return os.path.relpath(abs_path, root)
        return abs_path

    @staticmethod
    def _caller(stack_depth: int | None = None) -> tuple[str | None, int | None]:
        frame = inspect.currentframe()  # this helper's own frame
        if stack_depth is not None:
            # Polygraphy's convention, kept for callers ported from it: frame 0 is this helper,
            # 1 is log(), 2 is log()'s caller.
            for _ in range(stack_depth):
                frame = frame.f_back if frame is not None else None
            if frame is None:
                raise ValueError("call stack is not deep enough")  # as sys._getframe(stack_depth)
        else:
            # The first frame outside this file is the caller, however the call was routed.
            frame = frame.f_back if frame is not None else None
            while frame is not None and os.path.normcase(frame.f_code.co_filename) == _THIS_FILE:
                frame = frame.f_back
            if frame is None:
                return None, None
        return frame.f_code.co_filename, frame.f_lineno

    # -- logging -------------------------------------------------------------------------------

    def is_enabled(self, severity: int, path: str | None = None) -> bool:
        """
        Whether a message of ``severity`` from the file ``path`` would be logged.

        Args:
            severity (int): The severity.
            path (str): A path as produced by ``module_path``; None for the default.
        """
        return severity >= self._module_severity.get(path)

    def _format(self, message: str, severity: int, file_path: str | None, line_no: int | None) -> str:
        prefix = ""
        if self.letter:
            prefix += Logger.SEVERITY_LETTER_MAPPING.get(severity, f"[{severity}]") + " "
        if self.timestamp:
            prefix += f"({time.strftime('%X')}) "
        if self.line_info:
            prefix += f"[{_display_path(file_path)}:{line_no}] "
        tab = constants.TAB * self.logging_indent
        if message.isprintable():  # one line (every line break str.splitlines knows is unprintable)
            return prefix + tab + message
        continuation = "\n" + tab + " " * len(prefix)
        return prefix + tab + continuation.join(message.splitlines())

    def _use_colors(self, stream: IO[str]) -> bool:
        if not self.colors:
            return False
        known = self._tty_of
        if known is not None and known[0] is stream:  # (a system call per line otherwise)
            tty = known[1]
        else:
            try:
                tty = bool(stream.isatty())
            except Exception:
                tty = False
            self._tty_of = (stream, tty)
        return tty and not os.environ.get("NO_COLOR")

    def log(self, message: Message, severity: int, mode: LogMode = LogMode.EACH, stack_depth: int | None = None, error_ok: bool = False) -> None:
        """
        Logs ``message`` at ``severity``.

        Args:
            message (Union[str, Callable[[], str]]):
                    The message, or a callable returning it; a callable is only called when the
                    severity is enabled.
            severity (int): The severity.
            mode (LogMode): ``LogMode.ONCE`` drops messages that were logged before.
            stack_depth (int):
                    Which frame to attribute the message to, counted as Polygraphy does (2 is
                    the caller of ``log``). By default, the first frame outside this module.
            error_ok (bool):
                    When the message callable raises, log a placeholder instead of raising.
        """
        if severity < self._module_severity.lowest:  # (no path logs it: nothing to look up)
            return
        file_path, line_no = None, None
        if self.line_info or self._module_severity.has_non_default_entries:
            raw_path, line_no = self._caller(stack_depth)
            file_path = self.module_path(raw_path) if raw_path else None

        if not self.is_enabled(severity, file_path):
            return

        if callable(message):
            try:
                message = message()
            except Exception as err:
                if not error_ok:
                    raise
                message = f"<Error while logging this message: {err}>"
        message = printable(str(message))

        with self._lock:
            if mode == LogMode.ONCE:
                if message in self.once_logged:
                    return
                self.once_logged.add(message)

            text = self._format(message, severity, file_path, line_no)
            if self._log_file is not None:
                self._log_file.write(text + "\n")
                self._log_file.flush()

            if self._python_logger is not None:
                level = severity if severity > 0 else Logger.PYTHON_LOGGING_LEVELS.get(severity, 1)
                self._python_logger.log(level, text)
                return

            stream = sys.stdout if severity < Logger.CRITICAL else sys.stderr
            color = Logger.SEVERITY_COLOR_MAPPING.get(severity)
            if color and self._use_colors(stream):
                text = f"{color}{text}{_ANSI_RESET}"
            _print(text, stream, flush=severity >= Logger.WARNING)

    def ultra_verbose(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` (a string or a callable returning one) at ULTRA_VERBOSE severity."""
        self.log(message, Logger.ULTRA_VERBOSE, mode=mode, error_ok=True)

    def super_verbose(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` (a string or a callable returning one) at SUPER_VERBOSE severity."""
        self.log(message, Logger.SUPER_VERBOSE, mode=mode, error_ok=True)

    def extra_verbose(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` (a string or a callable returning one) at EXTRA_VERBOSE severity."""
        self.log(message, Logger.EXTRA_VERBOSE, mode=mode, error_ok=True)

    def verbose(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` (a string or a callable returning one) at VERBOSE severity."""
        self.log(message, Logger.VERBOSE, mode=mode, error_ok=True)

    def info(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` (a string or a callable returning one) at INFO severity."""
        self.log(message, Logger.INFO, mode=mode)

    def start(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` at START severity: the start of a task."""
        self.log(message, Logger.START, mode=mode)

    def finish(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` at FINISH severity: the successful end of a task."""
        self.log(message, Logger.FINISH, mode=mode)

    def warning(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` (a string or a callable returning one) at WARNING severity."""
        self.log(message, Logger.WARNING, mode=mode)

    def error(self, message: Message, mode: LogMode = LogMode.EACH) -> None:
        """Logs ``message`` (a string or a callable returning one) at ERROR severity."""
        self.log(message, Logger.ERROR, mode=mode)

    def internal_error(self, message: Message) -> None:
        """
        Reports a broken internal invariant when ``poly.core.config.INTERNAL_CORRECTNESS_CHECKS``
        is set: logs ``message`` at CRITICAL and raises ``PolyInternalException``. Does nothing
        otherwise.
        """
        if not config.INTERNAL_CORRECTNESS_CHECKS:
            return
        if callable(message):
            message = message()
        self.log(str(message), Logger.CRITICAL)
        raise PolyInternalException(str(message))

    def critical(self, message: Message, ExceptionType: type[BaseException] | None = None) -> NoReturn:
        """
        Logs ``message`` at CRITICAL severity, then raises it.

        Args:
            message (Union[str, Callable[[], str]]): The message.
            ExceptionType (type): The exception to raise. Defaults to ``PolyException``.

        Raises:
            ExceptionType: Always.
        """
        if callable(message):
            message = message()
        message = str(message)
        self.log(message, Logger.CRITICAL)
        raise (ExceptionType or PolyException)(message) from None

    def module_info(self, module: ModuleType, name: str | None = None, severity: int = VERBOSE) -> None:
        """
        Logs, once, the name, version and location of an imported module.

        Args:
            module (module): The module.
            name (str): A display name. Defaults to the module's name.
            severity (int): The severity. Defaults to VERBOSE.
        """

        def describe() -> str:
            text = name or f"Loaded Module: {module.__name__}"
            version = getattr(module, "__version__", None)
            if version is not None:
                text += f" | Version: {version}"
            paths = getattr(module, "__path__", None)
            if paths is not None:
                text += f" | Path: {[os.path.realpath(p) for p in paths]}"
            return text

        self.log(describe, severity, mode=LogMode.ONCE, error_ok=True)

    def log_exception(self, func: _F) -> _F:
        """
        Decorator that logs exceptions escaping ``func`` (other than ``PolyException``, which
        ``critical`` already logged) before re-raising them.
        """

        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except PolyException:
                raise
            except Exception as err:
                self.error(str(err))
                raise

        return cast("_F", wrapped)


G_LOGGER = Logger()


def has_colors() -> bool:
    """Whether the logger can color its messages: always, poly writes the terminal's color codes
    itself (Polygraphy needs the ``colored`` module); ``Logger.colors`` and ``NO_COLOR`` decide."""
    return True


class LoggerIndent:
    """Context manager that sets a logger's indentation (absolute, in tabs) for its duration."""

    def __init__(self, logger: Logger, indent: int) -> None:
        self.logger = logger
        self.indent = indent
        self.old_indent = logger.logging_indent

    def __enter__(self) -> LoggerIndent:
        self.old_indent = self.logger.logging_indent
        self.logger.logging_indent = self.indent
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.logger.logging_indent = self.old_indent


class LoggerVerbosity:
    """Context manager that sets a logger's ``module_severity`` for its duration (what
    ``Logger.verbosity()`` does)."""

    def __init__(self, logger: Logger, severity: SeverityValue | SeverityTrie) -> None:
        self.logger = logger
        self.module_severity = severity
        self.old_severity = logger.module_severity

    def __enter__(self) -> LoggerVerbosity:
        self.old_severity = self.logger.module_severity
        self.logger.module_severity = self.module_severity
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.logger.module_severity = self.old_severity
"""The global logger."""
