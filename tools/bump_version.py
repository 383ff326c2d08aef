#!/usr/bin/env python3
"""Set, or check, the one version that every poly distribution carries.

    python tools/bump_version.py 0.2.0            # bump everywhere, then `uv lock`
    python tools/bump_version.py 0.2.0 --no-lock  # bump everywhere, leave uv.lock alone
    python tools/bump_version.py --check          # every file agrees with the root's version?
    python tools/bump_version.py --check 0.2.0    # every file says 0.2.0?

The root pyproject.toml's ``[project] version`` is the single source of truth. A bump rewrites
it, the ``[project] version`` of every workspace member (``[tool.uv.workspace] members``,
packages/* by default) and every exact pin of a workspace package (``"poly-core==X"``) in
``[project] dependencies``, ``[project.optional-dependencies]`` and ``[dependency-groups]``.
Files are edited as text, line by line, so formatting and comments stay as they are; the
result is parsed with tomllib and checked before anything is written.

Exit status: 0 success / everything agrees, 1 disagreements found (--check) or a failed
``uv lock``, 2 usage errors (an invalid version, a missing or unreadable pyproject).

Standard library only (``packaging`` is used for PEP 440 / PEP 508 parsing when importable).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

try:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version
except ImportError:  # pragma: no cover - packaging ships with every uv/pip environment
    Version = None  # type: ignore[assignment,misc]

DEFAULT_ROOT = Path(__file__).resolve().parent.parent

# PEP 440's canonical pattern (the one packaging.version uses), for when packaging is missing.
_PEP440 = re.compile(
    r"""^\s*v?(?:(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*
    (?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?
    (?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?
    (?:[-_.]?dev[-_.]?[0-9]*)?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?)\s*$""",
    re.VERBOSE | re.IGNORECASE,
)

# A table header: [a.b] or [[a.b]] with bare or quoted key segments (not an array literal).
_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_HEADER = re.compile(rf"^\s*\[\[?\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*\]\]?\s*(?:#.*)?$")
_VERSION_LINE = re.compile(r"""^(?P<pre>\s*version\s*=\s*)(?P<q>["'])(?P<ver>[^"'\n]*)(?P=q)""")
# An exact pin inside a quoted string: "name[extras] == VERSION ; marker".
_PIN = re.compile(
    r"""(?P<q>["'])(?P<pre>\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]"'\n]*\])?\s*==(?!=)\s*)"""
    r"""(?P<ver>[^\s;,"'\n]+)(?P<post>(?:(?!(?P=q))[^\n])*)(?P=q)"""
)
# Requirement strings, when packaging is missing: name, extras, specifier (before any marker).
_REQ = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)")
_PIN_SECTIONS = {"project", "project.optional-dependencies", "dependency-groups"}


class ToolError(Exception):
    """A problem that stops the tool with exit status 2."""


@dataclass(frozen=True)
class Problem:
    file: str
    what: str
    found: str
    expected: str

    def __str__(self) -> str:
        return f"{self.file}: {self.what}: found {self.found!r}, expected {self.expected!r}"


def normalize_name(name: str) -> str:
    if Version is not None:
        return canonicalize_name(name)
    return re.sub(r"[-_.]+", "-", name).lower()


def validate_version(text: str) -> str:
    """Return ``text`` if it is a PEP 440 version, else raise ToolError."""
    if Version is not None:
        try:
            Version(text)
        except InvalidVersion:
            raise ToolError(f"invalid version {text!r}: not a PEP 440 version (e.g. 1.2.3, 1.2.3rc1)") from None
    elif not _PEP440.match(text):
        raise ToolError(f"invalid version {text!r}: not a PEP 440 version (e.g. 1.2.3, 1.2.3rc1)")
    if text != text.strip():
        raise ToolError(f"invalid version {text!r}: surrounding whitespace")
    return text


def _load(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ToolError(f"cannot read {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ToolError(f"{path} is not valid TOML: {e}") from None


def pyproject_files(root: Path) -> list[Path]:
    """The root pyproject.toml followed by every workspace member's, in a stable order."""
    root_file = root / "pyproject.toml"
    if not root_file.is_file():
        raise ToolError(f"no pyproject.toml in {root}")
    workspace = _load(root_file).get("tool", {}).get("uv", {}).get("workspace", {})
    members = workspace.get("members", ["packages/*"])
    excluded = {p.resolve() for pattern in workspace.get("exclude", []) for p in root.glob(pattern)}
    found: set[Path] = set()
    for pattern in members:
        for d in root.glob(pattern):
            if d.resolve() not in excluded and (d / "pyproject.toml").is_file():
                found.add(d / "pyproject.toml")
    if not found:
        raise ToolError(f"no workspace member pyproject.toml found under {root} (members = {members})")
    return [root_file, *sorted(found)]


def _requirements(data: dict):
    """Yield (where, requirement string, must_pin) for every requirement string in ``data``."""
    project = data.get("project", {})
    for req in project.get("dependencies", []):
        yield "dependencies", req, True
    for extra, reqs in project.get("optional-dependencies", {}).items():
        for req in reqs:
            yield f"optional-dependencies.{extra}", req, True
    for group, reqs in data.get("dependency-groups", {}).items():
        for req in reqs:
            if isinstance(req, str):  # skip {include-group = "..."}
                yield f"dependency-groups.{group}", req, False


def _parse_requirement(text: str) -> tuple[str, str]:
    """(normalized name, specifier text without spaces) of a PEP 508 requirement string."""
    if Version is not None:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            return "", ""
        return canonicalize_name(req.name), ",".join(sorted(str(s) for s in req.specifier))
    m = _REQ.match(text)
    if not m:
        return "", ""
    return normalize_name(m["name"]), re.sub(r"\s+", "", m["spec"])


def check(root: Path = DEFAULT_ROOT, expected: str | None = None) -> tuple[str, list[Path], list[Problem]]:
    """Compare every version and inter-package pin with ``expected`` (default: the root's version).

    Returns (expected version, files checked, disagreements)."""
    root = Path(root)
    files = pyproject_files(root)
    return _check_parsed(root, {path: _load(path) for path in files}, expected)


def _member_names(parsed: dict[Path, dict]) -> set[str]:
    """Normalized names of the workspace members (every file but the first, the root)."""
    names = set()
    for path, data in list(parsed.items())[1:]:
        name = data.get("project", {}).get("name")
        if not isinstance(name, str):
            raise ToolError(f"{path} has no [project] name")
        names.add(normalize_name(name))
    return names


def _check_parsed(root: Path, parsed: dict[Path, dict], expected: str | None):
    files = list(parsed)
    root_file = files[0]
    if expected is None:
        expected = parsed[root_file].get("project", {}).get("version")
        if not isinstance(expected, str):
            raise ToolError(f"{root_file} has no [project] version (the single source of truth)")
    names = _member_names(parsed)

    problems: list[Problem] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        project = parsed[path].get("project", {})
        version = project.get("version")
        if version != expected:
            found = "<dynamic>" if "version" in project.get("dynamic", []) else str(version)
            problems.append(Problem(rel, "[project] version", found, expected))
        for where, req, must_pin in _requirements(parsed[path]):
            name, spec = _parse_requirement(req)
            if name not in names:
                continue
            if spec == f"=={expected}" or (not spec and not must_pin):
                continue
            problems.append(Problem(rel, f"{where} pin of {name}", req, f"{name}=={expected}"))
    return expected, files, problems


def _section_name(header: str) -> str:
    parts = re.split(r"""\s*\.\s*(?=(?:[^"']|"[^"]*"|'[^']*')*$)""", header.strip())
    return ".".join(p.strip("\"'") for p in parts)


def bump_text(text: str, new: str, names: set[str]) -> tuple[str, int, int]:
    """Return (new text, versions changed, pins changed) for one pyproject's text.

    ``[project] version`` becomes ``new``; every quoted exact pin ``name==X`` in [project],
    [project.optional-dependencies] and [dependency-groups] of a package in ``names`` (the
    normalized names of the workspace members) is re-pinned to ``new``."""
    out: list[str] = []
    section = ""
    versions = pins = 0

    def repin(m: re.Match) -> str:
        nonlocal pins
        if normalize_name(m["name"]) not in names or m["ver"] == new:
            return m.group(0)
        pins += 1
        return f"{m['q']}{m['pre']}{new}{m['post']}{m['q']}"

    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            section = _section_name(header.group(1))
        elif section == "project" and (vm := _VERSION_LINE.match(line)):
            if vm["ver"] != new:
                line = f"{vm['pre']}{vm['q']}{new}{vm['q']}{line[vm.end():]}"
                versions += 1
        elif section in _PIN_SECTIONS:
            code, hash_, comment = _split_comment(line)
            new_code = _PIN.sub(repin, code)
            line = new_code + hash_ + comment
        out.append(line)
    return "".join(out), versions, pins


def _split_comment(line: str) -> tuple[str, str, str]:
    """Split a line into (code, '#', comment) at the first '#' outside a string."""
    quote = None
    escaped = False
    for i, ch in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i], "#", line[i + 1:]
    return line, "", ""


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def bump(root: Path, new: str) -> list[tuple[Path, int, int]]:
    """Rewrite every pyproject under ``root`` to version ``new``; returns (file, versions, pins)
    for the files that changed. Nothing is written unless every result checks out."""
    validate_version(new)
    files = pyproject_files(root)
    names = _member_names({path: _load(path) for path in files})
    results = []
    for path in files:
        with open(path, encoding="utf-8", newline="") as f:  # newline="": keep CRLF files CRLF
            old_text = f.read()
        new_text, versions, pins = bump_text(old_text, new, names)
        try:
            data = tomllib.loads(new_text)
        except tomllib.TOMLDecodeError as e:  # pragma: no cover - the edit only swaps versions
            raise ToolError(f"editing {path} would break its TOML ({e}); nothing was written") from None
        results.append((path, old_text, new_text, data, versions, pins))
    _, _, problems = _check_parsed(root, {r[0]: r[3] for r in results}, new)
    if problems:
        raise ToolError(
            "the text edit left disagreements, nothing was written (edit these by hand): "
            + "; ".join(str(p) for p in problems)
        )
    changed = []
    for path, old_text, new_text, _, versions, pins in results:
        if new_text != old_text:
            _write_atomic(path, new_text)
            changed.append((path, versions, pins))
    return changed


def run_uv_lock(root: Path) -> int:
    uv = shutil.which("uv")
    if uv is None:
        print("uv is not on PATH: run `uv lock` yourself so that uv.lock records the new version")
        return 0
    print(f"running: {uv} lock  (in {root})", flush=True)
    rc = subprocess.call([uv, "lock"], cwd=root)
    if rc != 0:
        print(f"error: `uv lock` failed with exit status {rc}; the pyproject files are bumped, "
              "uv.lock is not", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Set (or --check) the version of every poly pyproject.toml and inter-package pin.")
    parser.add_argument("version", nargs="?", help="the new version (PEP 440); with --check, the one expected")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 listing every disagreement")
    parser.add_argument("--no-lock", action="store_true", help="do not run `uv lock` after bumping")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT,
                        help="workspace root (default: the repository holding this script)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    prog = Path(sys.argv[0]).name if argv is None else "bump_version.py"

    try:
        if args.version is not None:
            validate_version(args.version)
        if args.check:
            expected, files, problems = check(root, args.version)
            if problems:
                print(f"{len(problems)} disagreement(s) with version {expected}:")
                for p in problems:
                    print(f"  {p}")
                return 1
            print(f"all {len(files)} pyproject files agree on {expected}")
            return 0
        if args.version is None:
            parser.error("the new version is required (or use --check)")
        changed = bump(root, args.version)
    except ToolError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2

    if not changed:
        print(f"every pyproject file already says {args.version}; nothing changed")
    for path, versions, pins in changed:
        print(f"updated {path.relative_to(root).as_posix()}: "
              f"{versions} version{'s' * (versions != 1)}, {pins} pin{'s' * (pins != 1)}")
    n = len(pyproject_files(root))
    print(f"all {n} pyproject files agree on {args.version}")
    if args.no_lock:
        print("--no-lock: not running `uv lock`; run it before committing")
        return 0
    if not changed:
        return 0
    return run_uv_lock(root)


if __name__ == "__main__":
    sys.exit(main())
