"""The multi-value option class and the shape/range/tolerance parsers."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from poly.cli.multi_option import multi_option
from poly.cli.value_parsing import parse_meta, parse_per_output, parse_ranges, parse_shapes


@click.command()
@click.argument("model", required=False)
@multi_option("--input-shapes")
@multi_option("--onnx-outputs")
@click.option("--flag", is_flag=True)
def _cmd(model, input_shapes, onnx_outputs, flag):
    click.echo(repr((model, input_shapes, onnx_outputs, flag)))


def _parse(*args):
    result = CliRunner().invoke(_cmd, list(args))
    assert result.exit_code == 0, result.output
    return eval(result.output)  # noqa: S307 - our own repr


def test_multi_option_consumes_until_next_option():
    assert _parse("m.onnx", "--input-shapes", "a:[1,3]", "b:[2]", "--flag") == (
        "m.onnx", ("a:[1,3]", "b:[2]"), (), True)


def test_multi_option_repeats_and_mark_all():
    assert _parse("--onnx-outputs", "mark", "all", "--input-shapes", "x:[1]", "--input-shapes", "y:[2]") == (
        None, ("x:[1]", "y:[2]"), ("mark", "all"), False)


def test_multi_option_keeps_negative_numbers():
    assert _parse("--input-shapes", "-1", "-2.5", "--flag")[1] == ("-1", "-2.5")


def test_parse_shapes():
    assert parse_shapes("--input-shapes", ["x:[1,3,224,224]", "a:b:[N,2]", "s:[]"]) == {
        "x": [1, 3, 224, 224], "a:b": ["N", 2], "s": []}


@pytest.mark.parametrize("bad", ["x", "x:[1,2", "x:1,2", "x:[1,@]"])
def test_parse_shapes_errors_name_flag_and_value(bad):
    with pytest.raises(click.BadParameter) as err:
        parse_shapes("--input-shapes", [bad])
    assert bad in str(err.value.format_message()) and "--input-shapes" in err.value.param_hint


def test_parse_ranges_and_per_output():
    assert parse_ranges("--val-range", ["[0,1]", "x:[-1,1.5]"]) == {"": (0, 1), "x": (-1, 1.5)}
    assert parse_per_output("--atol", ["1e-3"]) == 1e-3
    assert parse_per_output("--atol", ["1e-3", "y:0.1"]) == {"": 1e-3, "y": 0.1}
    with pytest.raises(click.BadParameter, match="'x:\\[2,1\\]'"):
        parse_ranges("--val-range", ["x:[2,1]"])
    with pytest.raises(click.BadParameter, match="not a number"):
        parse_per_output("--atol", ["abc"])


def test_parse_meta():
    import numpy as np

    from poly.core import DataType

    (name, dtype, shape), (n2, d2, s2) = parse_meta("--inputs", ["x:[1,3]:float32", "y:auto:auto"])
    assert (name, shape, n2, d2, s2) == ("x", [1, 3], "y", None, None)
    assert dtype == DataType.from_dtype(np.dtype("float32"))
    assert parse_meta("--outputs", ["z:auto"], with_shape=False) == [("z", None, None)]
    with pytest.raises(click.BadParameter, match="unknown data type"):
        parse_meta("--inputs", ["x:[1]:notatype"])
