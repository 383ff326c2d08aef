"""poly.core.optional_import: the one helper every package uses for optional and heavy modules."""

import subprocess
import sys
import types

import pytest

from poly.core import MissingModuleError, PolyException, has_module, invoke_if_callable, lazy_import


def test_nothing_is_imported_until_an_attribute_is_read():
    code = (
        "import sys\n"
        "from poly.core import lazy_import\n"
        "m = lazy_import('json.tool')\n"
        "assert 'json.tool' not in sys.modules, 'imported at construction'\n"
        "assert not m.is_loaded\n"
        "m.main\n"
        "assert 'json.tool' in sys.modules and m.is_loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_module_is_one_line_naming_the_install():
    mod = lazy_import("poly_no_such_module_xyz", install="poly-no-such", purpose="Testing")
    with pytest.raises(MissingModuleError) as info:
        mod.load()
    message = str(info.value)
    assert "\n" not in message
    assert "pip install poly-no-such" in message
    assert message.startswith("Testing needs 'poly_no_such_module_xyz'")
    # both poly's own error type (one line in the CLI) and an ImportError for callers that expect one
    assert isinstance(info.value, PolyException) and isinstance(info.value, ImportError)
    assert not mod.is_available()


def test_install_hint_defaults_to_the_top_level_name():
    with pytest.raises(MissingModuleError, match=r"pip install poly-missing-pkg$"):
        lazy_import("poly_missing_pkg.sub").load()


def test_first_importable_candidate_wins_and_order_is_read_at_import_time(monkeypatch):
    order = ["poly_no_such_module_xyz", "json"]
    mod = lazy_import(lambda: list(order))
    assert mod.load() is sys.modules["json"]
    assert mod.dumps([1]) == "[1]"
    # the choice is cached until reset(); then the candidates are read again
    order[:] = ["poly_no_such_module_xyz", "decimal"]
    assert mod.load().__name__ == "json"
    mod.reset()
    assert mod.load().__name__ == "decimal"


def test_reset_picks_up_a_substitute_in_sys_modules(monkeypatch):
    mod = lazy_import(["poly_fake_backend", "json"])
    assert mod.load().__name__ == "json"
    fake = types.ModuleType("poly_fake_backend")
    fake.marker = 42
    monkeypatch.setitem(sys.modules, "poly_fake_backend", fake)
    mod.reset()
    assert mod.marker == 42


def test_dunder_lookups_do_not_import():
    mod = lazy_import("poly_no_such_module_xyz")
    assert not hasattr(mod, "__wrapped__")
    assert "not loaded" in repr(mod)


def test_has_module_does_not_import():
    assert has_module("json")
    assert not has_module("poly_no_such_module_xyz")
    assert not has_module("poly_no_such_module_xyz.sub")


def test_invoke_if_callable():
    assert invoke_if_callable(3) == 3
    assert invoke_if_callable(lambda x, y=0: x + y, 2, y=5) == 7


def test_a_package_can_raise_its_own_subclass_of_the_error():
    class BackendMissingError(MissingModuleError):
        pass

    mod = lazy_import(["poly_no_such_module_xyz", "poly_no_such_module_abc"], install="backend", error=BackendMissingError)
    with pytest.raises(BackendMissingError, match=r"'poly_no_such_module_xyz' or 'poly_no_such_module_abc'.*pip install backend$"):
        mod.load()
    assert not mod.is_available()


def test_tensorrt_candidates_follow_the_rtx_switch(monkeypatch):
    from poly.core.optional_import import tensorrt_candidates

    monkeypatch.delenv("POLY_USE_TENSORRT_RTX", raising=False)
    assert tensorrt_candidates() == ["tensorrt", "tensorrt_rtx", "tensorrt_rtx_bindings"]
    monkeypatch.setenv("POLY_USE_TENSORRT_RTX", "1")
    assert tensorrt_candidates() == ["tensorrt_rtx", "tensorrt_rtx_bindings"]
    monkeypatch.setenv("POLY_USE_TENSORRT_RTX", "0")
    assert tensorrt_candidates()[0] == "tensorrt"
