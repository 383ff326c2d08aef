"""CheckCommand and InteractiveCheck: exit-status, --fail-code, --ignore-fail-code and
--fail-regex semantics, output display, and the interactive prompt."""

from __future__ import annotations

import sys

import pytest

from poly.core import PolyException
from poly.debug import CheckCommand, InteractiveCheck, split_check_command


def script(code: str, out: str = "", err: str = "") -> list[str]:
    """A command printing `out` / `err` (upper-cased, so the command line itself never matches
    what it prints) and exiting with `code`."""
    code_text = f"import sys; print({out.lower()!r}.upper()); print({err.lower()!r}.upper(), file=sys.stderr); sys.exit({code})"
    return [sys.executable, "-c", code_text]


@pytest.mark.parametrize(
    "code, kwargs, out, passed",
    [
        (0, {}, "", True),
        (1, {}, "", False),
        (3, {}, "", False),
        # --fail-code: exactly those statuses fail
        (3, {"fail_codes": [3]}, "", False),
        (1, {"fail_codes": [3]}, "", True),
        (0, {"fail_codes": [0]}, "", False),
        # --ignore-fail-code: those statuses pass, others keep the default
        (2, {"ignore_fail_codes": [2]}, "", True),
        (1, {"ignore_fail_codes": [2]}, "", False),
        # --fail-regex alone: only a match fails, whatever the status
        (1, {"fail_regexes": ["CUDA ERROR"]}, "some other error", True),
        (0, {"fail_regexes": ["CUDA ERROR"]}, "CUDA ERROR: BAD", False),
        (1, {"fail_regexes": ["NAN", "CUDA ERROR"]}, "CUDA ERROR: BAD", False),
        # --fail-regex with --fail-code: both must hold
        (3, {"fail_codes": [3], "fail_regexes": ["BOOM"]}, "quiet", True),
        (3, {"fail_codes": [3], "fail_regexes": ["BOOM"]}, "BOOM", False),
        (1, {"fail_codes": [3], "fail_regexes": ["BOOM"]}, "BOOM", True),
        # --ignore-fail-code wins over a matching regex
        (2, {"ignore_fail_codes": [2], "fail_regexes": ["BOOM"]}, "BOOM", True),
    ],
)
def test_verdicts(code, kwargs, out, passed):
    result = CheckCommand(script(code, out=out), **kwargs)()
    assert result.success is passed
    assert result.returncode == code


def test_regex_searches_stderr_too():
    check = CheckCommand(script(0, err="segmentation fault"), fail_regexes=[r"SEGMENTATION\s+FAULT"])
    assert check().success is False


def test_output_shown_for_failures_only_by_default(capsys):
    CheckCommand(script(0, out="PASSING-OUTPUT"))()
    CheckCommand(script(1, out="FAILING-OUTPUT"))()
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "FAILING-OUTPUT" in text and "PASSING-OUTPUT" not in text


def test_show_output_and_hide_fail_output(capsys):
    CheckCommand(script(0, out="PASSING-OUTPUT"), show_output=True)()
    CheckCommand(script(1, out="FAILING-OUTPUT"), hide_fail_output=True)()
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "PASSING-OUTPUT" in text and "FAILING-OUTPUT" not in text


def test_conflicting_options_and_bad_regex_are_one_line_errors():
    with pytest.raises(PolyException, match="--fail-code and --ignore-fail-code"):
        CheckCommand(script(0), fail_codes=[1], ignore_fail_codes=[2])
    with pytest.raises(PolyException, match="--fail-regex.*not a valid regular expression"):
        CheckCommand(script(0), fail_regexes=["("])
    with pytest.raises(PolyException, match="command not found: 'no-such-command-xyz'"):
        CheckCommand(["no-such-command-xyz"])()


def test_single_quoted_command_is_split():
    assert split_check_command(["poly run model.onnx --onnxrt"]) == ["poly", "run", "model.onnx", "--onnxrt"]
    assert split_check_command(["python", "check.py", "a b"]) == ["python", "check.py", "a b"]


def test_interactive_prompt_repeats_until_pass_or_fail():
    answers = iter(["", "maybe", "F"])
    asked = []

    def prompt(question):
        asked.append(question)
        return next(answers)

    result = InteractiveCheck(prompt)("polygraphy_debug.onnx")
    assert result.success is False and result.returncode is None
    assert len(asked) == 3 and "polygraphy_debug.onnx" in asked[0] and "'p' or 'f'" in asked[1]
    assert InteractiveCheck(lambda q: "pass")().success is True


def test_a_stream_the_check_left_empty_gets_no_header(capsys):
    # a failing check that printed only to stdout: its output is shown, with no empty stderr section
    CheckCommand(script(1, out="ONLY-STDOUT"))()
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "CAPTURED STDOUT" in text and "ONLY-STDOUT" in text
    assert "CAPTURED STDERR" not in text
    CheckCommand(script(1))()  # nothing printed at all: no section
    shown = capsys.readouterr()
    assert "CAPTURED" not in shown.out + shown.err
