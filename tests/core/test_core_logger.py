import inspect
import io
import os
import re

import pytest

from poly.core import G_LOGGER, Logger, LogMode, PolyException
from poly.core.constants import TAB as TAB
from poly.core.logging.logger import SeverityTrie

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_severities_are_ordered_and_match_polygraphy():
    order = [
        "ULTRA_VERBOSE",
        "SUPER_VERBOSE",
        "EXTRA_VERBOSE",
        "VERBOSE",
        "INFO",
        "START",
        "FINISH",
        "WARNING",
        "ERROR",
        "CRITICAL",
    ]
    values = [getattr(Logger, name) for name in order]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert (Logger.VERBOSE, Logger.INFO, Logger.WARNING, Logger.ERROR, Logger.CRITICAL) == (
        10,
        20,
        30,
        40,
        50,
    )
    assert G_LOGGER.EXTRA_VERBOSE == 0 and G_LOGGER.ULTRA_VERBOSE == -20


@pytest.mark.parametrize(
    "method, prefix",
    [
        ("ultra_verbose", "[U] "),
        ("super_verbose", "[S] "),
        ("extra_verbose", "[X] "),
        ("verbose", "[V] "),
        ("info", "[I] "),
        ("start", "[I] "),
        ("finish", "[I] "),
        ("warning", "[W] "),
        ("error", "[E] "),
    ],
)
def test_prefixes_and_stdout(logger, capsys, method, prefix):
    logger.module_severity = Logger.ULTRA_VERBOSE
    getattr(logger, method)("hello")
    out, err = capsys.readouterr()
    assert out == f"{prefix}hello\n"
    assert err == ""


def test_critical_logs_to_stderr_and_raises(logger, capsys):
    with pytest.raises(PolyException, match="^boom$"):
        logger.critical("boom")
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "[!] boom\n"


def test_critical_custom_exception_type(logger, capsys):
    with pytest.raises(KeyError):
        logger.critical("bad key", ExceptionType=KeyError)


def test_filtering_by_default_severity(logger, capsys):
    logger.verbose("hidden")
    logger.info("shown")
    logger.module_severity = Logger.WARNING
    logger.info("hidden too")
    logger.finish("hidden three")
    logger.warning("warned")
    assert capsys.readouterr().out == "[I] shown\n[W] warned\n"


def test_callable_message_only_evaluated_when_enabled(logger, capsys):
    calls = []

    def message():
        calls.append(1)
        return "lazy"

    logger.verbose(message)
    assert calls == []
    logger.info(message)
    assert calls == [1]
    assert capsys.readouterr().out == "[I] lazy\n"


def test_failing_verbose_callable_is_tolerated(logger, capsys):
    logger.module_severity = Logger.VERBOSE
    logger.verbose(lambda: 1 / 0)
    assert "Error while logging this message" in capsys.readouterr().out
    with pytest.raises(ZeroDivisionError):
        logger.info(lambda: 1 / 0)


def test_verbosity_context_restores_previous_value(logger, capsys):
    logger.module_severity = {"": Logger.WARNING, "some/path": Logger.VERBOSE}
    before = logger.module_severity
    with logger.verbosity(Logger.VERBOSE):
        assert logger.module_severity.get() == Logger.VERBOSE
        logger.verbose("inside")
    assert logger.module_severity == before
    with pytest.raises(RuntimeError):
        with logger.verbosity():
            logger.error("silenced")
            raise RuntimeError()
    assert logger.module_severity == before
    logger.verbose("outside")
    assert capsys.readouterr().out == "[V] inside\n"


def test_verbosity_default_silences_all_but_critical(logger, capsys):
    with logger.verbosity():
        logger.error("nope")
        with pytest.raises(PolyException):
            logger.critical("yes")
    out, err = capsys.readouterr()
    assert out == "" and err == "[!] yes\n"


def test_severity_property(logger):
    logger.module_severity = {"": Logger.INFO, "a/b": Logger.ERROR}
    logger.severity = Logger.VERBOSE
    assert logger.severity == Logger.VERBOSE
    assert logger.module_severity.get("a/b/c.py") == Logger.ERROR


def test_dict_without_default_gets_info(logger):
    logger.module_severity = {"x/": Logger.VERBOSE}
    assert logger.module_severity.get() == Logger.INFO


def test_severity_trie_longest_prefix():
    trie = SeverityTrie({"": 20, "a": 30, "a/b/c": 10, "/abs/dir": 40})
    assert trie.get() == 20
    assert trie.get("x/y.py") == 20
    assert trie.get("a/z.py") == 30
    assert trie.get("a/b/x.py") == 30  # "a" is the longest prefix with a severity
    assert trie.get("a/b/c/d.py") == 10
    assert trie.get("a/b/c") == 10
    assert trie.get("ab/c") == 20  # prefixes match whole components only
    assert trie.get("/abs/dir/f.py") == 40
    assert trie.lowest == 10  # (below every path's severity a message is dropped without a lookup)
    with pytest.raises(ValueError):
        SeverityTrie({"a": 10})


def test_per_path_verbosity_for_calling_file(logger, capsys):
    this_dir = os.path.dirname(os.path.abspath(__file__))
    logger.module_severity = {"": Logger.ERROR, this_dir: Logger.VERBOSE}
    logger.verbose("from the test directory")
    logger.module_severity = {"": Logger.VERBOSE, os.path.abspath(__file__): Logger.WARNING}
    logger.info("suppressed for this file")
    logger.warning("but warnings pass")
    assert capsys.readouterr().out == "[V] from the test directory\n[W] but warnings pass\n"


def test_per_path_longest_prefix_across_files(logger, capsys):
    this_dir = os.path.dirname(os.path.abspath(__file__))
    logger.module_severity = {
        "": Logger.ERROR,
        this_dir: Logger.VERBOSE,
        os.path.abspath(__file__): Logger.WARNING,
    }
    logger.info("dropped: this file is WARNING")
    other_file = os.path.join(this_dir, "other_module.py")
    exec(compile("logger.verbose('from other file')", other_file, "exec"), {"logger": logger})
    exec(compile("logger.verbose('elsewhere')", "/nowhere/else.py", "exec"), {"logger": logger})
    assert capsys.readouterr().out == "[V] from other file\n"


def test_per_path_relative_to_poly_package(g_logger, capsys):
    from poly.core import BaseRunner

    runner = BaseRunner(name="r")
    g_logger.module_severity = {"": Logger.ERROR}
    runner.deactivate()  # warns from poly/core/backend/runner.py
    assert capsys.readouterr().out == ""
    g_logger.module_severity = {"": Logger.ERROR, "core/backend/runner.py": Logger.WARNING}
    runner.deactivate()
    assert "Not active" in capsys.readouterr().out
    g_logger.module_severity = {"": Logger.ERROR, "core": Logger.WARNING}
    runner.deactivate()
    assert "Not active" in capsys.readouterr().out


def test_module_path():
    import poly.core.backend.runner as runner_mod

    assert Logger.module_path(runner_mod.__file__) == os.path.join("core", "backend", "runner.py")
    assert Logger.module_path("/some/where/else.py") == "/some/where/else.py"


def test_indent(logger, capsys):
    with logger.indent():
        logger.info("one\ntwo")
        with logger.indent(2):
            logger.warning("three")
    logger.info("four")
    assert capsys.readouterr().out == "[I]     one\n        two\n[W]             three\n[I] four\n"


def test_log_format_timestamp_and_line_info(logger, capsys):
    logger.log_format = ["timestamp", "line-info"]
    assert logger.log_format == ["timestamp", "line-info"]
    line = inspect.currentframe().f_lineno + 1
    logger.info("msg")
    out = capsys.readouterr().out
    match = re.fullmatch(r"\[I\] \((\d\d:\d\d:\d\d)\) \[(.*):(\d+)\] msg\n", out)
    assert match, out
    # files under the working directory are shown relative to it, as Polygraphy shows them
    here = os.path.abspath(__file__)
    under_cwd = here.startswith(os.getcwd() + os.sep)
    assert match.group(2) == (os.path.relpath(here) if under_cwd else here)
    assert int(match.group(3)) == line
    with pytest.raises(ValueError):
        logger.log_format = ["sparkles"]


def test_no_colors_when_not_a_tty(logger, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    logger.warning("plain")
    assert capsys.readouterr().out == "[W] plain\n"


def test_colors_on_a_tty_unless_disabled(logger, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = FakeTTY()
    monkeypatch.setattr("sys.stdout", tty)
    logger.warning("yellow")
    logger.info("uncoloured")
    assert tty.getvalue() == "\x1b[93m[W] yellow\x1b[0m\n[I] uncoloured\n"

    tty.truncate(0)
    tty.seek(0)
    logger.log_format = ["no-colors"]
    logger.warning("plain")
    assert tty.getvalue() == "[W] plain\n"

    tty.truncate(0)
    tty.seek(0)
    logger.log_format = []
    monkeypatch.setenv("NO_COLOR", "1")
    logger.warning("plain again")
    assert tty.getvalue() == "[W] plain again\n"


def test_log_file_gets_messages_without_colors(logger, tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr("sys.stdout", FakeTTY())
    monkeypatch.setattr("sys.stderr", FakeTTY())
    path = tmp_path / "logs" / "poly.log"
    path.parent.mkdir()
    path.write_text("stale\n")
    logger.log_file = str(path)
    assert logger.log_file == str(path)
    logger.verbose("filtered")
    logger.warning("first")
    with logger.indent():
        logger.info("second")
    with pytest.raises(PolyException):
        logger.critical("third")
    text = path.read_text()
    assert text == "[W] first\n[I]     second\n[!] third\n"
    assert not ANSI.search(text)
    logger.log_file = None
    logger.info("after")
    assert path.read_text() == text


def test_log_file_creates_parent_dirs(logger, tmp_path, capsys):
    path = tmp_path / "a" / "b" / "log.txt"
    logger.log_file = path
    logger.info("x")
    assert path.read_text() == "[I] x\n"


def test_log_mode_once(logger, capsys):
    for _ in range(3):
        logger.warning("once", mode=LogMode.ONCE)
        logger.warning("each")
    logger.info(lambda: "lazy once", mode=LogMode.ONCE)
    logger.info(lambda: "lazy once", mode=LogMode.ONCE)
    assert capsys.readouterr().out == "[W] once\n[W] each\n[W] each\n[W] each\n[I] lazy once\n"


def test_once_suppressed_message_is_logged_when_enabled_later(logger, capsys):
    logger.verbose("later", mode=LogMode.ONCE)
    logger.module_severity = Logger.VERBOSE
    logger.verbose("later", mode=LogMode.ONCE)
    assert capsys.readouterr().out == "[V] later\n"


def test_register_callback(logger):
    seen = []
    logger.register_callback(lambda trie: seen.append(trie.get()))
    logger.module_severity = Logger.ERROR
    assert seen == [Logger.INFO, Logger.ERROR]


def test_severity_from_name():
    assert Logger.severity_from_name("verbose") == Logger.VERBOSE
    assert Logger.severity_from_name("extra-verbose") == Logger.EXTRA_VERBOSE
    assert Logger.severity_from_name("ULTRA_VERBOSE") == Logger.ULTRA_VERBOSE
    with pytest.raises(ValueError):
        Logger.severity_from_name("loud")


def test_invalid_severity_type(logger):
    with pytest.raises(TypeError):
        logger.module_severity = "verbose"
    with pytest.raises(TypeError):
        logger.module_severity = {"", "verbose"}


def test_severity_set_of_one_path_and_one_severity_is_a_dict(logger, capsys):
    seen = []
    logger.register_callback(lambda trie: seen.append(trie.get()))
    logger.module_severity = {"", Logger.WARNING}  # Polygraphy accepts this spelling
    assert seen == [Logger.INFO, Logger.WARNING]
    logger.info("dropped")
    logger.warning("kept")
    assert capsys.readouterr().out == "[W] kept\n"


def test_line_info_of_a_file_under_the_working_directory_is_relative(logger, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    logger.line_info = True
    script = tmp_path / "tests" / "test_x.py"
    exec(compile("\n\nlogger.info('Hello')", str(script), "exec"), {"logger": logger})
    assert capsys.readouterr().out == f"[I] [{os.path.join('tests', 'test_x.py')}:3] Hello\n"


def test_log_exception_decorator(logger, capsys):
    @logger.log_exception
    def fails():
        raise KeyError("k")

    with pytest.raises(KeyError):
        fails()
    assert capsys.readouterr().out == "[E] 'k'\n"


def test_polygraphys_logger_context_manager_classes(logger, capsys):
    from poly.logger.logger import LoggerIndent, LoggerVerbosity, has_colors

    assert has_colors() is True
    with LoggerIndent(logger, 2):
        logger.info("deep")
    with LoggerVerbosity(logger, Logger.ERROR):
        logger.warning("dropped")
    logger.warning("back")
    assert capsys.readouterr().out == "[I] " + TAB * 2 + "deep\n[W] back\n"


@pytest.mark.parametrize("message, lines", [
    ("one line", ["one line"]),
    ("", [""]),
    ("tab\tinside", ["tab\tinside"]),
    ("two\nlines", ["two", "lines"]),
    ("crlf\r\nand\rcr", ["crlf", "and", "cr"]),
    ("form\x0cfeed and\u2028separator", ["form", "feed and", "separator"]),
])
def test_every_line_break_continues_under_the_prefix_and_indent(logger, capsys, message, lines):
    """A message is split where str.splitlines splits it (a one-line message is written as it is),
    each further line aligned under the first line's text."""
    with logger.indent():
        logger.info(message)
    out, _ = capsys.readouterr()
    lead = "[I] " + TAB
    want = lead + ("\n" + TAB + " " * len("[I] ")).join(lines) + "\n"
    assert out == want
