"""tools/run_polygraphy_unit_tests.py: the rewriting and patching it applies to the temporary
copy of Polygraphy's tests, and a run on a small test tree of our own."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "run_polygraphy_unit_tests.py"


@pytest.fixture(scope="module")
def harness():
    spec = importlib.util.spec_from_file_location("run_polygraphy_unit_tests", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_imports_are_rewritten_and_nothing_else(harness):
    source = textwrap.dedent("""\
        from polygraphy import util, mod
        from polygraphy.backend.trt import TrtRunner
        import polygraphy.tools.debug as dbg
        x = polygraphy.util.volume((1,))
        name = "polygraphy_debug.onnx"
        klass = {"polygraphy_class": "ndarray"}
        path = "tools/polygraphy/x.py"
    """)
    out = harness.rewrite_imports(source)
    assert "from poly import util, mod" in out
    assert "from poly.backend.trt import TrtRunner" in out
    assert "import poly.tools.debug as dbg" in out
    assert "x = poly.util.volume" in out
    for kept in ('"polygraphy_debug.onnx"', '"polygraphy_class"', '"tools/polygraphy/x.py"'):
        assert kept in out


def test_marks_are_removed_from_fixtures_only(harness):
    source = textwrap.dedent("""\
        import pytest

        @pytest.fixture()
        @pytest.mark.skipif(
            True,
            reason="x",
        )
        def fix():
            return 1

        @pytest.mark.serial
        def test_kept():
            pass
    """)
    out = harness.remove_fixture_marks(source)
    assert "skipif" not in out and "@pytest.fixture()" in out
    assert "@pytest.mark.serial" in out


@pytest.mark.slow  # a pytest run of its own
def test_a_run_counts_imports_outcomes_and_causes(harness, tmp_path, capsys):
    tests = tmp_path / "tests"
    (tests / "demo").mkdir(parents=True)
    (tests / "__init__.py").write_text("")
    (tests / "demo" / "__init__.py").write_text("")
    (tests / "conftest.py").write_text("import pytest\n\n@pytest.fixture()\n@pytest.mark.skipif(False, reason='x')\n"
                                       "def one():\n    return 1\n")
    (tests / "demo" / "test_ok.py").write_text(textwrap.dedent("""\
        import pytest
        from polygraphy import util

        def test_volume(one):
            assert util.volume((2, 3)) == 6 * one

        def test_fails():
            assert util.volume((2,)) == 3

        @pytest.mark.serial
        def test_serial():
            pass

        def test_skips():
            pytest.skip("because")
    """))
    (tests / "demo" / "test_broken.py").write_text("from polygraphy.nowhere import thing\n")
    assert harness.main([str(tests), "--dirs", "demo"]) == 0
    out = capsys.readouterr().out
    assert "files import 1/2   passed 2  failed 1  errors 0  skipped 1" in out
    assert "tests/demo/test_broken.py: error: ModuleNotFoundError: No module named 'poly.nowhere'" in out
    assert "1 x assert N == N" in out and "test_fails" in out


@pytest.mark.slow  # a pytest run of its own
def test_a_missing_module_skips_the_tests_that_use_it(harness, tmp_path, capsys):
    """torch is the module missing here; a missing TensorRT gets the same stand-in."""
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed here: the stand-in for a missing module is not used")
    tests = tmp_path / "tests"
    (tests / "demo").mkdir(parents=True)
    (tests / "__init__.py").write_text("")
    (tests / "demo" / "__init__.py").write_text("")
    (tests / "conftest.py").write_text("")
    (tests / "demo" / "test_uses_torch.py").write_text(textwrap.dedent("""\
        import torch

        def test_needs_torch():
            assert torch.zeros(1) is not None

        def test_does_not():
            assert True
    """))
    assert harness.main([str(tests), "--dirs", "demo"]) == 0
    out = capsys.readouterr().out
    assert "files import 1/1   passed 1  failed 0  errors 0  skipped 1" in out
