"""`--help` in sections, as Polygraphy groups its flags: the command's own options first (under
"Options"), then one titled section per flag group in ``SECTION_ORDER``, "Logging" last, then
-h/--help. A flag group tags its options with its section once, through
``stack_options(..., section=TITLE)`` (``tag_section``); an option without a tag is the
command's own. Every poly command's class is ``SectionedCommand`` (or a subclass); groups keep
listing their subcommands after the options. Imports click only, so that `--help` stays light."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import click

SECTION_ATTR = "poly_help_section"
"""The attribute of a click parameter that names its ``--help`` section (absent: the command's own)."""
OWN_SECTION = "Options"
"""The section of the options declared on the command itself."""
HELP_SECTION = "Help"
"""The last section, -h/--help alone, where the command has flag-group sections; a command with
only its own options lists -h/--help last among them, as click does."""
LOGGING_SECTION = "Logging"

SECTION_ORDER = (
    # the debugger's groups (the `poly debug` subcommands), before the model, as Polygraphy lists them
    "Pass/Fail Reporting", "Artifact Sorting", "Iterative Debugging",
    # then the order of `polygraphy run --help`
    "Runners", "Model",
    "ONNX Model Saving", "ONNX Shape Inference", "ONNX Model Loading", "ONNX Mixed Precision",
    "ONNX-Runtime Session Creation",
    "TensorRT Builder Configuration", "TensorRT Plugin Loading", "ONNX-TRT Parser Flags", "TensorRT Network Loading",
    "TensorRT Inference",
    "Data Loader", "Comparator Inference", "Comparator Postprocessing", "Comparator Comparisons",
    # poly's own groups
    "Plugin Selection", "Shard Hints", "Ray Cluster",
    LOGGING_SECTION,
)
"""The order of the flag-group sections in every command's ``--help``. A section not listed here
(an installed `poly run` extension's group) comes just before "Logging", in the order its options
are declared."""

_COL_MAX = 30
"""The widest option column before the help text moves to the next line (click's default)."""
_RANK = {title: rank for rank, title in enumerate(SECTION_ORDER)}
_UNLISTED_RANK = _RANK[LOGGING_SECTION] - 0.5


def tag_section(params: Iterable[click.Parameter], section: str) -> None:
    """Puts ``params`` in the ``--help`` section ``section``, except those already in one (a
    group made of smaller groups keeps their sections)."""
    for param in params:
        if getattr(param, SECTION_ATTR, None) is None:
            setattr(param, SECTION_ATTR, section)


def help_sections(command: click.Command, ctx: click.Context) -> list[tuple[str, list[tuple[str, str]]]]:
    """The sections ``command``'s ``--help`` lists: (title, help records), in order; empty ones left out."""
    help_option = command.get_help_option(ctx)
    own: list[tuple[str, str]] = []
    groups: dict[str, list[tuple[str, str]]] = {}
    help_record = None
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or isinstance(param, click.Argument):
            continue
        if param is help_option:
            help_record = record
            continue
        section = getattr(param, SECTION_ATTR, None)
        (own if section is None else groups.setdefault(section, [])).append(record)
    sections = [(OWN_SECTION, own)] if own else []
    sections += [(title, groups[title]) for title in sorted(groups, key=lambda title: _RANK.get(title, _UNLISTED_RANK))]
    if help_record is not None:
        if groups:
            sections.append((HELP_SECTION, [help_record]))
        elif own:
            own.append(help_record)
        else:
            sections.append((OWN_SECTION, [help_record]))
    return sections


class SectionedCommand(click.Command):
    """A click command whose ``--help`` lists its options in sections (``help_sections``).

    A group mixes it in after ``click.Group`` (``class G(click.Group, SectionedCommand)``):
    ``Group.format_options`` then lists the sections and, after them, the subcommands."""

    def format_options(self, ctx: click.Context, formatter: Any) -> None:
        sections = help_sections(self, ctx)
        # one column for the help texts across the sections, where click would put it for one list
        width = min(max((len(term) for _, records in sections for term, _ in records), default=0), _COL_MAX)
        for title, records in sections:
            with formatter.section(title):
                formatter.write_dl([(term.ljust(width) if text else term, text) for term, text in records],
                                   col_max=_COL_MAX)
