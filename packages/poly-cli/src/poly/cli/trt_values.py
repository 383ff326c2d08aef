"""Values of the TensorRT flags checked against the installed TensorRT: enum member names
(`--tactic-sources jit_convolutions`, `--tensor-formats x:[linear,chw4]`) and data type aliases
(`--layer-precisions fc1:float16`). A value the installed TensorRT does not know is a
``click.BadParameter`` naming the flag and listing the names it knows. When the installed flavour
has no such enum at all (TensorRT-RTX has no ``QuantizationFlag``), the names are kept as given:
the loader then stops with one line saying that the feature needs full TensorRT."""

from __future__ import annotations

from typing import Any

import click

from poly.cli.value_parsing import split_name_value


def trt_enum_names(flag: str, enum_name: str, values: Any) -> list[str]:
    """``values`` as upper-case member names of ``trt.<enum_name>``, each checked when the
    installed TensorRT has that enum."""
    from poly.trt.tensorrt_module import trt

    names = [str(value).strip().upper().replace("-", "_") for value in values]
    enum = getattr(trt, enum_name, None)
    if enum is None:
        return names
    known = sorted(name for name in dir(enum) if name.isupper())
    for value, name in zip(values, names, strict=True):
        if name not in known:
            raise click.BadParameter(f"{value!r}: not a trt.{enum_name} of {_flavour()}; choose from: "
                                     f"{', '.join(n.lower() for n in known)}", param_hint=f"'{flag}'")
    return names


def trt_enum_name(flag: str, enum_name: str, value: str | None) -> str | None:
    """One member name (see ``trt_enum_names``); None stays None."""
    return None if value is None else trt_enum_names(flag, enum_name, [value])[0]


def trt_dtype_names(flag: str, args: Any) -> dict[str, str] | None:
    """`name:float16 other:int8` -> {"name": "float16", "other": "int8"}: TensorRT's data type
    aliases (``trt.float16``...); None when the flag is absent."""
    if not args:
        return None
    from poly.trt.tensorrt_module import trt

    module = trt.load()
    dtype_class = getattr(module, "DataType", None)
    aliases = sorted(name for name in dir(module) if not name.startswith("_") and dtype_class is not None
                     and isinstance(getattr(module, name), dtype_class))
    result = {}
    for arg in args:
        name, value = split_name_value(flag, arg)
        if dtype_class is not None and value not in aliases:
            raise click.BadParameter(f"{arg!r}: {value!r} is not a TensorRT data type; choose from: "
                                     f"{', '.join(aliases)}", param_hint=f"'{flag}'")
        result[name] = value
    return result


def trt_dtype(name: str) -> Any:
    """The ``trt.DataType`` of the alias ``name`` (``"float16"`` -> ``trt.float16``)."""
    from poly.trt.tensorrt_module import trt

    return getattr(trt, name)


def _flavour() -> str:
    from poly.trt.tensorrt_module import flavour

    return flavour()
