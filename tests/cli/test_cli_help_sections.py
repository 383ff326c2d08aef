"""`--help` in sections, as Polygraphy groups its flags: the command's own options under "Options",
then one titled section per flag group in ``SECTION_ORDER`` ("Logging" last), then -h/--help;
every option listed once; groups still list their subcommands."""

from __future__ import annotations

import importlib

import click
import pytest
from click.testing import CliRunner

from poly.cli.help_sections import HELP_SECTION, OWN_SECTION, SECTION_ORDER, SectionedCommand
from poly.cli.multi_option import stack_options

TRT_SECTIONS = ["TensorRT Builder Configuration", "TensorRT Plugin Loading", "ONNX-TRT Parser Flags",
                "TensorRT Network Loading"]
EXPECTED = {
    "run": ["Options", "Runners", "Model", "ONNX Model Saving", "ONNX Shape Inference", "ONNX Model Loading",
            "ONNX-Runtime Session Creation", *TRT_SECTIONS, "TensorRT Inference", "Data Loader",
            "Comparator Inference", "Comparator Postprocessing", "Comparator Comparisons", "Logging", "Help"],
    "convert": ["Options", "Model", "ONNX Model Saving", "ONNX Model Loading", "ONNX Mixed Precision",
                "ONNX-Runtime Session Creation", *TRT_SECTIONS, "Data Loader", "Comparator Comparisons", "Logging",
                "Help"],
    "validate": ["Options", "Runners", "Model", "ONNX Model Loading", "ONNX-Runtime Session Creation", *TRT_SECTIONS,
                 "Comparator Comparisons", "Ray Cluster", "Logging", "Help"],
}


def parse_help(output):
    """The sections of a `--help` text: [(title, [the first name of each option listed])], and the
    subcommands under "Commands"."""
    sections = []
    for line in output.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            sections.append((line[:-1], []))
        elif sections and line.startswith("  ") and not line.startswith("   "):
            sections[-1][1].append(line.split()[0].rstrip(","))
    return sections


def help_of(poly, *command):
    result = poly(*command, "--help")
    assert result.exit_code == 0, result.output
    return parse_help(result.output)


def all_commands():
    """(argv, command) of every poly command and group, walking the lazy groups."""
    from poly.cli.main import cli

    found, todo = [], [((), cli)]
    while todo:
        argv, command = todo.pop(0)
        found.append((argv, command))
        for name, (target, _) in sorted(getattr(command, "lazy_subcommands", {}).items()):
            module, attr = target.split(":")
            todo.append(((*argv, name), getattr(importlib.import_module(module), attr)))
    return found


def listed_options(command, argv):
    """The first name of each option ``command`` takes that ``--help`` shows."""
    ctx = click.Context(command, info_name=argv[-1] if argv else "poly")
    return [param.opts[0] for param in command.get_params(ctx)
            if isinstance(param, click.Option) and not param.hidden]


@pytest.mark.parametrize("command", sorted(EXPECTED))
def test_sections_in_polygraphy_s_order(poly, command):
    assert [title for title, _ in help_of(poly, command)] == EXPECTED[command]


def test_run_lists_the_runners_together_and_logging_last(poly):
    sections = dict(help_of(poly, "run"))
    assert sections["Runners"] == ["--onnxrt", "--onnx-ref", "--pluginref", "--trt"]
    assert sections["Options"] == ["--gen-script"]
    assert sections["Logging"] == ["-v", "-q", "--verbosity", "--silent", "--log-format", "--log-file"]
    assert sections["Help"] == ["-h"]


def test_validate_s_own_flags_come_before_any_tensorrt_flag(poly):
    sections = help_of(poly, "validate")
    flags = [flag for _, names in sections for flag in names]
    own = dict(sections)["Options"]
    for flag in ("--dataset", "--golden", "--workers", "--processes", "--infer-threads", "--batch", "--report"):
        assert flag in own, flag
    first_trt = min(flags.index(flag) for title, names in sections if title in TRT_SECTIONS for flag in names)
    assert flags.index("--trt-min-shapes") == first_trt
    assert max(flags.index(flag) for flag in own) < first_trt
    assert flags.index("--trt") < first_trt  # under Runners, with --onnxrt


@pytest.mark.parametrize("argv", [argv for argv, _ in all_commands()], ids=lambda argv: " ".join(argv) or "poly")
def test_every_option_is_listed_once_in_a_known_section(poly, argv):
    command = dict(all_commands())[argv]
    assert isinstance(command, SectionedCommand)
    sections = help_of(poly, *argv)
    titles = [title for title, _ in sections]
    groups = [title for title in titles if title not in (OWN_SECTION, HELP_SECTION, "Commands")]
    assert groups == sorted(groups, key=SECTION_ORDER.index), titles  # each known, in order; Logging last
    assert len(set(titles)) == len(titles) and all(names for title, names in sections if title != "Commands")
    if HELP_SECTION in titles:
        assert titles[-1 - ("Commands" in titles)] == HELP_SECTION and dict(sections)[HELP_SECTION] == ["-h"]
    listed = [flag for title, names in sections if title != "Commands" for flag in names]
    assert sorted(listed) == sorted(listed_options(command, argv))
    if isinstance(command, click.Group):  # the subcommands, after the options, as before
        assert titles[-1] == "Commands"
        assert sorted(dict(sections)["Commands"]) == sorted(command.list_commands(click.Context(command)))


def test_a_command_without_flag_groups_lists_its_options_as_click_does():
    @click.command(cls=SectionedCommand)
    @click.option("--alpha", help="First.")
    @click.option("--beta-long-name", is_flag=True, help="Second.")
    def plain(**kwargs):
        pass

    out = CliRunner().invoke(plain, ["--help"]).output
    assert parse_help(out) == [("Options", ["--alpha", "--beta-long-name", "--help"])]
    assert out == CliRunner().invoke(click.Command("plain", params=plain.params, help=plain.help),
                                     ["--help"]).output  # the same text as a plain click command's

    @click.command(cls=SectionedCommand, add_help_option=False)
    def bare():
        pass

    assert "Options" not in CliRunner().invoke(bare, ["--help"]).output


def test_a_group_s_section_is_given_once_and_nested_groups_keep_theirs():
    @click.command(cls=SectionedCommand)
    @click.option("--own", help="Own.")
    @stack_options([click.option("--log", help="L.")], section="Logging")
    @stack_options([stack_options([click.option("--inner", help="I.")], section="Runners"),
                    click.option("--outer", help="O.")], section="Model")
    @stack_options([click.option("--extra", help="E.")], section="Some Extension")
    def command(**kwargs):
        pass

    sections = parse_help(CliRunner().invoke(command, ["--help"]).output)
    # the listed sections by SECTION_ORDER, whatever the declaration order; an unlisted one before Logging
    assert sections == [("Options", ["--own"]), ("Runners", ["--inner"]), ("Model", ["--outer"]),
                        ("Some Extension", ["--extra"]), ("Logging", ["--log"]), ("Help", ["--help"])]


def test_an_installed_extension_s_options_have_their_sections(poly, monkeypatch):
    from poly.cli.args import run_extensions
    from poly.tools.args.base import BaseArgs, BaseRunnerArgs

    class Knobs(BaseArgs):
        GROUP_TITLE = "Knob Loading"

        def add_parser_args_impl(self):
            self.group.add_argument("--knob", help="A knob.")

    class Fast(BaseRunnerArgs):
        def get_name_opt_impl(self):
            return "Fast", "fast"

        def add_parser_args_impl(self):
            self.group.add_argument("--fast-speed", help="Speed.")

    monkeypatch.setattr(run_extensions, "installed_groups", lambda: (Knobs(), Fast()))
    sections = dict(help_of(poly, "run"))
    assert sections["Runners"][-1] == "--fast"
    assert sections["Knob Loading"] == ["--knob"] and sections["Fast Runner"] == ["--fast-speed"]
    titles = list(sections)
    assert titles.index("Comparator Comparisons") < titles.index("Knob Loading") < titles.index("Logging")
