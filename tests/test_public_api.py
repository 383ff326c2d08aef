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
