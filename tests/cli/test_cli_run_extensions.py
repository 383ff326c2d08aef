"""`poly run` extensions, as Polygraphy's examples/dev/02 builds them: an installed package
declares an entry point (``polygraphy.run.plugins`` or ``poly.run.plugins``) returning argument
groups; their options appear in `poly run`, a runner group's flag adds its runner in command-line
order, the groups build on poly's own (ModelArgs, OnnxLoadArgs), and --gen-script writes their
code. The extension here is written for these tests: a loader group that renames the model's
output and a runner group running ONNX-Runtime on what that loader gives."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from fixtures import onnx_models
from fixtures.cli_helpers import POLY

EXTENSION = textwrap.dedent('''
    """A `poly run` extension for the tests: --rename-out NAME renames the model's first output;
    --renamed runs ONNX-Runtime on the renamed model."""
    from poly.tools.args import OnnxLoadArgs
    from poly.tools.args import util as args_util
    from poly.tools.args.base import BaseArgs, BaseRunnerArgs
    from poly.tools.script import make_invocable


    def rename_first_output(model, name):
        import onnx

        model = onnx.ModelProto.FromString(model.SerializeToString())
        old = model.graph.output[0].name
        for node in model.graph.node:
            node.output[:] = [name if out == old else out for out in node.output]
        model.graph.output[0].name = name
        return model


    class RenameArgs(BaseArgs):
        """Output Renaming: renaming the first output of ONNX models.

        Depends on:

            - OnnxLoadArgs
        """

        def add_parser_args_impl(self):
            self.group.add_argument("--rename-out", help="New name of the first output", default=None)

        def parse_impl(self, args):
            self.name = args_util.get(args, "rename_out", default="renamed")

        def add_to_script_impl(self, script):
            loader = self.arg_groups[OnnxLoadArgs].add_to_script(script)
            script.add_import(imports=["rename_first_output"], frm="poly_rename_extension")
            # the loader is called here (`load_onnx()`): the function takes a model
            return script.add_loader(make_invocable("rename_first_output", make_invocable(loader), self.name),
                                     "renamed_model")


    class RenamedRunnerArgs(BaseRunnerArgs):
        """Renamed-Output Runner: ONNX-Runtime on the renamed model."""

        def get_name_opt_impl(self):
            return "Renamed-Output", "renamed"

        def add_parser_args_impl(self):
            self.group.add_argument("--renamed-speed", choices=["slow", "fast"], default=None,
                                    help="Accepted and ignored")

        def parse_impl(self, args):
            self.speed = args_util.get(args, "renamed_speed")

        def add_to_script_impl(self, script):
            model = self.arg_groups[RenameArgs].add_to_script(script)
            script.add_import(imports=["OnnxrtRunner", "SessionFromOnnx"], frm="poly.onnx")
            script.add_runner(make_invocable("OnnxrtRunner", make_invocable("SessionFromOnnx", model),
                                             name="renamed-runner"))


    def export_argument_groups():
        return [RenameArgs(), RenamedRunnerArgs()]
''')


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder that, on PYTHONPATH, installs the extension: its module and a dist-info with the
    entry point (the way pip installs one)."""
    root = tmp_path_factory.mktemp("extension_site")
    (root / "poly_rename_extension.py").write_text(EXTENSION)
    info = root / "poly_rename_extension-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: poly-rename-extension\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[polygraphy.run.plugins]\nrename = poly_rename_extension:export_argument_groups\n")
    model = onnx_models.save(onnx_models.identity(), root / "identity.onnx")
    return root, model


def _poly(site_dir, *args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(site_dir), os.environ.get("PYTHONPATH")])))
    return subprocess.run([POLY, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_the_extension_s_options_are_in_help(site):
    root, _ = site
    out = _poly(root, "run", "-h")
    assert out.returncode == 0, out.stderr
    for flag in ("--renamed", "--renamed-speed", "--rename-out"):
        assert flag in out.stdout, flag
    assert "Run inference with Renamed-Output (an installed" in " ".join(out.stdout.split())
    assert "[default:" not in out.stdout.split("--renamed")[1]


def test_the_extension_s_runner_runs_in_command_line_order(site):
    root, model = site
    out = _poly(root, "run", model, "--renamed", "--rename-out", "z", "--renamed-speed", "fast", "--onnxrt")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "renamed-runner" in out.stdout and "PASSED" in out.stdout
    # the renamed output has no counterpart in the ONNX-Runtime runner's (y): nothing to compare
    summary = [line for line in out.stdout.splitlines() if "Accuracy Summary" in line or "no outputs" in line.lower()]
    assert out.stdout.index("renamed-runner") < out.stdout.index("onnxrt-runner"), summary


def test_gen_script_writes_the_extension_s_code(site, tmp_path):
    root, model = site
    script = tmp_path / "run.py"
    out = _poly(root, "run", model, "--onnxrt", "--renamed", "--rename-out", "y", "--gen-script", script)
    assert out.returncode == 0, out.stdout + out.stderr
    text = script.read_text()
    assert "from poly_rename_extension import rename_first_output" in text
    assert "runners = [\n    OnnxrtRunner(session),\n] + renamed_runners" in text
    env = dict(os.environ, PYTHONPATH=str(root))
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PASSED" in ran.stdout + ran.stderr  # y renamed to y: both runners' outputs compared


def test_a_broken_extension_is_skipped_with_a_warning(site, tmp_path):
    root, model = site
    broken = tmp_path / "broken_site"
    broken.mkdir()
    info = broken / "broken_ext-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-ext\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[poly.run.plugins]\nbroken = no_such_module_anywhere:groups\n")
    out = _poly(broken, "run", model, "--onnxrt")
    assert out.returncode == 0, out.stderr
    assert "Skipping the `poly run` extension 'broken'" in out.stdout + out.stderr


def test_without_extensions_the_flags_are_unknown(site):
    _, model = site
    out = subprocess.run([POLY, "run", str(model), "--renamed"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "No such option '--renamed'" in out.stderr


# -- finding whether any extension is installed, without importlib.metadata ----------------------

def test_the_quick_search_finds_a_declared_group_and_nothing_else(site, monkeypatch):
    from poly.cli.args.run_extensions import ENTRY_POINT_GROUPS, may_declare_extensions

    root, _ = site
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p])
    # what this environment has installed declares no `poly run` extension (what importlib.metadata says too)
    from importlib.metadata import entry_points

    assert not any(entry_points(group=group) for group in ENTRY_POINT_GROUPS)
    assert not may_declare_extensions()
    assert may_declare_extensions(("console_scripts",))  # a group the installed packages do declare
    monkeypatch.setattr(sys, "path", [*sys.path, str(root)])  # the extension's dist-info (polygraphy's group)
    assert may_declare_extensions()
    assert not may_declare_extensions(("poly.run.plugins",))


def test_the_quick_search_defers_to_importlib_metadata_for_a_zip_on_the_path(tmp_path, monkeypatch):
    import zipfile

    from poly.cli.args.run_extensions import may_declare_extensions

    archive = tmp_path / "site.zip"  # a zipped site: only importlib.metadata reads distributions inside it
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("ext-1.0.dist-info/entry_points.txt", "[poly.run.plugins]\next = ext:groups\n")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p])
    assert not may_declare_extensions()
    monkeypatch.setattr(sys, "path", [*sys.path, str(archive)])
    assert may_declare_extensions()
