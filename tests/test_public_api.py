"""Every public name poly has exported stays importable from the same place and stays one object
wherever it is exported (Polygraphy's import paths re-export the owners' objects). The recording,
tests/fixtures/public_api.json, is made by tools/public_api_snapshot.py; names may be added to it,
never removed."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _snapshot_tool():
    spec = importlib.util.spec_from_file_location("public_api_snapshot", ROOT / "tools" / "public_api_snapshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_recorded_public_name_still_imports_as_the_same_object():
    problems = _snapshot_tool().check(ROOT / "tests" / "fixtures" / "public_api.json")
    assert problems == []


def test_the_check_reports_a_missing_name_and_a_split_identity(tmp_path):
    tool = _snapshot_tool()
    recording = tmp_path / "api.json"
    recording.write_text(
        '{"modules": {"poly.core": ["G_LOGGER", "no_such_name"]},'
        ' "same_object": [["poly.core:G_LOGGER", "poly.core:DataType"]]}'
    )
    problems = tool.check(recording)
    assert problems == ["poly.core: no 'no_such_name'", "no longer one object: poly.core:G_LOGGER, poly.core:DataType"]


def test_lazy_packages_resolve_every_name_to_its_modules_object():
    # the packages whose __init__ re-exports on first use (poly.core.optional_import.lazy_exports):
    # each name, read in a fresh process, is the object of the module that defines it, stored in
    # the package, and listed by dir()
    import subprocess
    import sys

    from test_architecture import _lazy_inits

    inits = {package: table for package, (table, _) in _lazy_inits().items()}
    assert {"poly.core", "poly.compare", "poly.compare.verdicts", "poly.onnx", "poly.cli.validate"} <= set(inits)
    code = (
        "import importlib\n"
        f"for package, table in {inits!r}.items():\n"
        "    pkg = importlib.import_module(package)\n"
        "    assert sorted(table) == sorted(pkg.__all__), package\n"
        "    assert set(pkg.__all__) <= set(dir(pkg)), package\n"
        "    for name, module in table.items():\n"
        "        owner = importlib.import_module(module)\n"
        "        expected = owner if module == package + '.' + name else getattr(owner, name)\n"
        "        assert getattr(pkg, name) is expected and vars(pkg)[name] is expected, (package, name)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "ok", proc.stderr
