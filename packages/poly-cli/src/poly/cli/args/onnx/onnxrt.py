"""The ONNX-Runtime group: --providers, the execution providers of the inference session, and
--ort-custom-op-libs, the shared libraries of custom operators registered on it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import click

from poly.cli.gen_script.call_tree import Ref, Value, evaluate
from poly.cli.multi_option import multi_option, stack_options

PROVIDERS_HELP = "ONNX-Runtime execution providers in priority order (exact or partial names, e.g. cpu cuda)."
CUSTOM_OP_LIBS_HELP = (
    "Shared libraries of ONNX-Runtime custom operators (built against ONNX-Runtime's C API, exporting "
    "RegisterCustomOps) to register on every ONNX-Runtime session, for models with operators ONNX-Runtime does "
    "not have: `--ort-custom-op-libs libmy_ops.so`. Replaces the LD_PRELOAD workaround Polygraphy suggests.")


@dataclass(frozen=True)
class OnnxrtArgs:
    """How the ONNX-Runtime session is created."""

    providers: tuple[str, ...] = ()
    """--providers, exact or partial names in priority order; (): ONNX-Runtime's default (CPU)."""
    custom_op_libs: tuple[str, ...] = ()
    """--ort-custom-op-libs, paths of custom-op libraries registered on the sessions."""

    @classmethod
    def options(cls, providers_help: str = PROVIDERS_HELP) -> Any:
        """--providers (with the command's own help text where it differs) and --ort-custom-op-libs."""
        return stack_options([
            multi_option("--providers", "--execution-providers", "providers", help=providers_help),
            multi_option("--ort-custom-op-libs", "ort_custom_op_libs", metavar="PATH [PATH ...]",
                         help=CUSTOM_OP_LIBS_HELP),
        ], section="ONNX-Runtime Session Creation")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> OnnxrtArgs:
        """The group's flags; a --ort-custom-op-libs path that is not a file is a usage error. The
        libraries become ``SessionFromOnnx.DEFAULT_CUSTOM_OP_LIBS`` while the command runs, so that the
        sessions it creates without this group's loaders (shape inference, searches, localizing)
        register them too."""
        libs = tuple(kwargs.get("ort_custom_op_libs") or ())
        for path in libs:
            if not os.path.isfile(path):
                raise click.UsageError(f"--ort-custom-op-libs: no such file: {path!r}")
        from poly.onnx import SessionFromOnnx

        SessionFromOnnx.DEFAULT_CUSTOM_OP_LIBS = tuple(os.path.abspath(path) for path in libs)
        ctx = click.get_current_context(silent=True)
        if ctx is not None and libs:  # for this command only (several may run in one process)
            ctx.call_on_close(lambda: setattr(SessionFromOnnx, "DEFAULT_CUSTOM_OP_LIBS", ()))
        return cls(providers=tuple(kwargs["providers"]), custom_op_libs=libs)

    @property
    def cpu_only(self) -> bool:
        """Whether the session runs on the CPU only (no provider, or only CPU ones)."""
        return all(provider.lower().startswith("cpu") for provider in self.providers)

    def session_expr(self, model: Any, session_options: Any = None) -> Any:
        """The call tree of the SessionFromOnnx loader of ``model`` (a call tree or a path)."""
        return Ref("poly.onnx", "SessionFromOnnx")(
            model, providers=list(self.providers) or None,
            session_options=Value(session_options) if session_options is not None else None,
            custom_op_libs=list(self.custom_op_libs) or None)

    def create_session(self, model: Any, session_options: Any = None) -> Any:
        """A SessionFromOnnx loader for ``model`` (a path or an ONNX loader)."""
        return evaluate(self.session_expr(Value(model), session_options))
