"""
Deciding whether an iteration passed: ``CheckCommand`` runs a command and judges its exit
status and output (``--fail-code``, ``--ignore-fail-code``, ``--fail-regex``), and
``InteractiveCheck`` asks the user when there is no command.
"""

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from poly.core import G_LOGGER

__all__ = ["CheckResult", "CheckCommand", "InteractiveCheck", "make_check", "split_check_command",
           "quoted_command_problem"]


@dataclass
class CheckResult:
    """The verdict on one iteration."""

    success: bool
    returncode: int = None  # type: ignore[assignment]
    stdout: str = ""
    stderr: str = ""


def split_check_command(args: Any) -> Any:
    """
    The argv of a check command. A single argument that holds spaces and names no existing file
    (``--check "poly run model.onnx --onnxrt"``) is split like a shell would.
    """
    args = [os.fspath(a) for a in args or ()]
    if len(args) == 1 and " " in args[0].strip() and not os.path.exists(args[0]):
        return shlex.split(args[0])
    return args


def quoted_command_problem(args: Any) -> str | None:
    """
    Why a check command line cannot work when its first argument is a whole command in quotes
    followed by more arguments (``--check "python t.py" --artifacts log.txt``): everything after
    --check belongs to the check command, so the program would be the quoted string. None when
    that is not the case.
    """
    args = [os.fspath(a) for a in args or ()]
    if len(args) < 2:
        return None
    first = args[0]
    if not any(c.isspace() for c in first.strip()) or os.path.exists(first) or shutil.which(first):
        return None
    rest = shlex.join(args[1:])
    return (
        f"--check: {first!r} is a whole command in one quoted argument, followed by {rest!r}; everything after "
        f"--check belongs to the check command, so its program would be {first!r}. Put poly's own options "
        f"before --check and the check command last, unquoted (e.g. `... {rest} --check {first}`)"
    )


class CheckCommand:
    """
    Runs a command once per iteration and judges it.

    By default a zero exit status passes and anything else fails. ``fail_codes`` makes exactly
    those statuses fail; ``ignore_fail_codes`` makes those statuses pass; ``fail_regexes`` makes
    an iteration fail only when stdout or stderr matches one of them (and, with
    ``fail_codes``, the status is also one of those).
    """

    def __init__(
        self,
        command: Any,
        fail_codes: Any = None,
        ignore_fail_codes: Any = None,
        fail_regexes: Any = None,
        show_output: Any = None,
        hide_fail_output: Any = None,
        env: Any = None,
    ) -> None:
        """
        Args:
            command (Sequence[str]): The command and its arguments (see ``split_check_command``).
            fail_codes (Sequence[int]): Exit statuses that count as failures; any other passes.
            ignore_fail_codes (Sequence[int]): Exit statuses that count as passes.
            fail_regexes (Sequence[Union[str, re.Pattern]]): Patterns searched for in the output.
            show_output (bool): Show the command's output for passing iterations too.
            hide_fail_output (bool): Do not show the output of failing iterations.
            env (Dict[str, str]): Extra environment variables for the command.
        """
        self.command = split_check_command(command)
        if not self.command:
            G_LOGGER.critical("--check: no command given")
        problem = quoted_command_problem(self.command)
        if problem:
            G_LOGGER.critical(problem)
        if fail_codes and ignore_fail_codes:
            G_LOGGER.critical("--fail-code and --ignore-fail-code cannot be used together")
        if show_output and hide_fail_output:
            G_LOGGER.critical("--show-output and --hide-fail-output cannot be used together")
        self.fail_codes = [int(c) for c in fail_codes] if fail_codes else None
        self.ignore_fail_codes = [int(c) for c in ignore_fail_codes] if ignore_fail_codes else None
        self.fail_regexes: Any = None
        if fail_regexes:
            self.fail_regexes = []
            for pattern in fail_regexes:
                try:
                    self.fail_regexes.append(re.compile(pattern) if isinstance(pattern, str) else pattern)
                except re.error as err:
                    G_LOGGER.critical(f"--fail-regex: {pattern!r} is not a valid regular expression: {err}")
        self.show_output = bool(show_output)
        self.hide_fail_output = bool(hide_fail_output)
        self.env = env

    def judge(self, returncode: Any, output: Any) -> bool:
        """
        Whether a run with this exit status and combined stdout+stderr passes.

        Returns:
            bool
        """
        if self.ignore_fail_codes and returncode in self.ignore_fail_codes:
            return True
        matched = None
        if self.fail_regexes is not None:
            matched = any(regex.search(output) for regex in self.fail_regexes)
        if self.fail_codes is not None:
            failed = returncode in self.fail_codes and (matched is None or matched)
        elif matched is not None:
            failed = matched  # with a regex, only a match fails, whatever the status
        else:
            failed = returncode != 0
        return not failed

    def _executable(self) -> Any:
        exe = self.command[0]
        if os.sep in exe or (os.altsep and os.altsep in exe):
            return exe if os.path.exists(exe) else None
        return shutil.which(exe)

    def __call__(self, artifact_path: Any = None) -> Any:
        """
        Runs the command.

        Args:
            artifact_path (str): The iteration's artifact (only mentioned in logs).

        Returns:
            CheckResult
        """
        if self._executable() is None:
            G_LOGGER.critical(f"--check: command not found: {self.command[0]!r}")
        G_LOGGER.info(f"Running check command: {shlex.join(self.command)}")
        env = None
        if self.env:
            env = dict(os.environ)
            env.update(self.env)
        status = subprocess.run(self.command, capture_output=True, env=env)
        stdout = status.stdout.decode(errors="replace")
        stderr = status.stderr.decode(errors="replace")
        success = self.judge(status.returncode, stdout + stderr)
        if self.show_output or (not success and not self.hide_fail_output):
            # a stream the check left empty gets no header (not one empty section per iteration)
            if stdout.strip():
                G_LOGGER.info(f"========== CAPTURED STDOUT ==========\n{stdout}")
            if stderr.strip():
                G_LOGGER.log(
                    f"========== CAPTURED STDERR ==========\n{stderr}",
                    G_LOGGER.WARNING if success else G_LOGGER.ERROR,
                )
        return CheckResult(success, status.returncode, stdout, stderr)


class InteractiveCheck:
    """Asks the user whether the iteration passed ([p]ass or [f]ail)."""

    def __init__(self, prompt: Any = None) -> None:
        """
        Args:
            prompt (Callable[[str], str]): Reads one answer; defaults to ``input``.
        """
        self.prompt = prompt or input

    def __call__(self, artifact_path: Any = None) -> Any:
        what = f"'{artifact_path}'" if artifact_path else "this iteration"
        question = f"Did {what} [p]ass or [f]ail?"
        while True:
            try:
                answer = self.prompt(f">>> {question} ")
            except EOFError:
                G_LOGGER.critical(
                    "No --check command was given and there is no input to ask whether iterations pass"
                )
            answer = (answer or "").strip().lower()
            if answer[:1] in ("p", "f"):
                return CheckResult(answer[:1] == "p")
            question = "Please choose either: 'p' or 'f':"


def make_check(command: Any = None, **kwargs: Any) -> Any:
    """A ``CheckCommand`` for ``command``, or an ``InteractiveCheck`` when there is none."""
    if command:
        return CheckCommand(command, **kwargs)
    if any(kwargs.get(k) for k in ("fail_codes", "ignore_fail_codes", "fail_regexes")):
        G_LOGGER.warning("--fail-code, --ignore-fail-code and --fail-regex have no effect without --check")
    return InteractiveCheck()
