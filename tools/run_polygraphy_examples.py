#!/usr/bin/env python3
"""Measures poly's drop-in promise on the command line with Polygraphy's own CLI examples.

    tools/run_polygraphy_examples.py PATH/TO/Polygraphy/examples [--only run/04] [--json out.json]

Each example directory under ``examples/cli`` and ``examples/api`` (or those matching ``--only``) runs in
a temporary copy of the whole examples tree (never in this repository), so that paths into
neighbouring examples (``../../../api/...``) resolve. Its README's shell blocks are read in
order; each command runs in that copy, with ``polygraphy`` replaced by ``poly`` (the ``poly`` of
the Python running this tool), and every Python file of the copy has its ``polygraphy`` imports
rewritten to ``poly`` (so the example's own scripts use poly's API). Commands that are not
``polygraphy`` commands (``python3 generate_data.py``...) run too, since later steps read their
files; placeholders (``<model>``, ``...``) are skipped.

Each ``poly`` command, and each ``python`` command of an API example, gets one outcome:

- ``ok``: exit 0, or exit 1 with poly's ``FAILED |`` verdict (a comparison that ran);
- ``needs``: the command ended with one line naming what is missing here: a GPU or CUDA, full
  TensorRT, or TensorFlow (no traceback);
- ``usage``: a usage error ("No such option", "No such command", "Missing argument", ...);
- ``traceback``: a Python traceback reached the user (for an API example's script, only when
  its last line does not name a missing GPU or TensorRT: an exception is how a script ends);
- ``after-needs``: a file that an earlier ``needs`` step of the same example would have written
  is missing;
- ``error``: any other failure (the last line is shown).

Printed: one line per command, and the counts per outcome. ``--json`` writes the records.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_polygraphy_unit_tests import rewrite_imports  # noqa: E402  (a sibling tool, not a package)

_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_PLACEHOLDER = re.compile(r"<[\w.\-/ ]+>|\.\.\.|\[\s*\w+\s*\]\.\.\.")
_NEEDS = re.compile(r"GPU|CUDA|full TensorRT|TensorRT[^\n]*(is not installed|needs|requires|only)|TensorFlow|"
                    r"No module named '(tensorrt|torch|tensorflow)'", re.IGNORECASE)
_MISSING_FILE = re.compile(r"does not exist|No such file or directory")
_USAGE = re.compile(r"No such option|No such command|Missing argument|Missing option|Invalid value|"
                    r"Got unexpected extra argument|requires an argument|Usage:")


def shell_commands(readme: str) -> list[str]:
    """The commands of a README's ``bash``/``sh``/unlabelled shell blocks, in order, with line
    continuations joined and comments dropped."""
    commands, block, in_block, label = [], [], False, ""
    for line in readme.splitlines():
        fence = _FENCE.match(line)
        if fence:
            if in_block:
                if label in ("bash", "sh", "shell", ""):
                    commands.extend(_join_continuations(block))
                block, in_block = [], False
            else:
                in_block, label = True, fence.group(2).lower()
            continue
        if in_block:
            block.append(line.strip())
    return commands


def _join_continuations(lines: list[str]) -> list[str]:
    joined, current = [], ""
    for line in lines:
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(" ".join((current + line).split()))
        current = ""
    if current:
        joined.append(" ".join(current.split()))
    return joined


def classify(command: str, returncode: int, output: str, script: bool = False) -> str:
    """The outcome of one poly command, or of an API example's ``python`` command when
    ``script`` (see the module docstring)."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if "Traceback (most recent call last)" in output and not (script and _NEEDS.search(last)):
        return "traceback"
    if returncode == 0 or (returncode == 1 and "FAILED |" in output):
        return "ok"
    if _USAGE.search(output) and returncode == 2:
        return "usage"
    if _NEEDS.search(last):
        return "needs"
    return "error"


def rewrite_python_files(directory: Path) -> None:
    """``polygraphy`` -> ``poly`` in the imports of every ``.py`` file under ``directory``."""
    for path in directory.rglob("*.py"):
        text = path.read_text(errors="replace")
        rewritten = rewrite_imports(text)
        if rewritten != text:
            path.write_text(rewritten)


def example_dirs(examples: Path, only: list[str]) -> list[Path]:
    """The example directories (those whose README has no example below it) under ``cli/`` and
    ``api/`` of ``examples``, filtered by ``only``."""
    found = []
    for top in ("cli", "api"):
        root = examples / top
        if root.is_dir():
            found += sorted(readme.parent for readme in root.rglob("README.md") if readme.parent != root)
    found = [d for d in found if not any(child.is_dir() and (child / "README.md").exists() for child in d.iterdir())]
    if only:
        found = [d for d in found if any(o in str(d.relative_to(examples)) for o in only)]
    return found


def run_example(directory: Path, name: str, poly: str, timeout: float, examples: Path | None = None) -> list[dict]:
    """Runs the README's commands in a rewritten copy of ``directory``; the records of the poly
    commands (and of the python commands of an API example)."""
    api = name.startswith("api/")
    records = []
    examples = examples or directory
    with tempfile.TemporaryDirectory(prefix="poly-example-") as tmp:
        shutil.copytree(examples, Path(tmp) / "examples")
        work = Path(tmp) / "examples" / directory.relative_to(examples)
        rewrite_python_files(Path(tmp) / "examples")
        env = dict(os.environ, PYTHONPATH=str(work) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        for command in shell_commands((directory / "README.md").read_text()):
            words = command.split()
            if not words or _PLACEHOLDER.search(command):
                continue
            is_poly = words[0] == "polygraphy"
            runnable = command
            if is_poly:
                runnable = poly + command[len("polygraphy"):]
            elif words[0] not in ("python", "python3", "cp", "mkdir", "mv", "rm", "cat", "ls", "echo", "touch"):
                continue
            runnable = re.sub(r"^python3? ", shlex.quote(sys.executable) + " ", runnable)
            try:
                proc = subprocess.run(runnable, shell=True, cwd=work, env=env, capture_output=True, text=True,
                                      timeout=timeout)
                returncode, output = proc.returncode, proc.stdout + proc.stderr
            except subprocess.TimeoutExpired:
                returncode, output = -1, f"timed out after {timeout:.0f} s"
            if not is_poly and not (api and words[0].startswith("python")):
                continue
            outcome = classify(command, returncode, output, script=not is_poly)
            if outcome != "ok" and _MISSING_FILE.search(output) and any(r["outcome"] == "needs" for r in records):
                outcome = "after-needs"
            lines = [line for line in output.strip().splitlines() if line.strip()]
            records.append({"example": name, "command": command, "returncode": returncode, "outcome": outcome,
                            "last_line": lines[-1][:200] if lines else ""})
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("examples", type=Path, help="Polygraphy's examples directory (holding cli/ and api/).")
    parser.add_argument("--only", nargs="+", default=[], help="Run only examples whose path contains one of these.")
    parser.add_argument("--json", type=Path, help="Write every command's record here.")
    parser.add_argument("--timeout", type=float, default=300.0, help="Seconds per command.")
    args = parser.parse_args(argv)

    poly = shutil.which("poly", path=str(Path(sys.executable).parent)) or "poly"
    records = []
    for directory in example_dirs(args.examples, args.only):
        name = str(directory.relative_to(args.examples))
        for record in run_example(directory, name, shlex.quote(poly), args.timeout, args.examples):
            records.append(record)
            print(f"{record['outcome']:<9} {name}: {record['command'][:110]}")
            if record["outcome"] != "ok":
                print(f"{'':<9}   -> {record['last_line']}")
    counts = {}
    for record in records:
        counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    print(f"\n{len(records)} commands: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if args.json:
        args.json.write_text(json.dumps(records, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
