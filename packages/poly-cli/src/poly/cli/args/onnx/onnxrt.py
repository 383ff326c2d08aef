"""The ONNX-Runtime group: --providers, the execution providers of the inference session."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from poly.cli.gen_script.call_tree import Ref, Value, evaluate
from poly.cli.multi_option import multi_option, stack_options

PROVIDERS_HELP = "ONNX-Runtime execution providers in priority order (exact or partial names, e.g. cpu cuda)."


@dataclass(frozen=True)
class OnnxrtArgs:
    """How the ONNX-Runtime session is created."""

    providers: tuple[str, ...] = ()
    """--providers, exact or partial names in priority order; (): ONNX-Runtime's default (CPU)."""

    @classmethod
    def options(cls, providers_help: str = PROVIDERS_HELP) -> Any:
        """--providers (with the command's own help text where it differs)."""
        return stack_options([
            multi_option("--providers", "--execution-providers", "providers", help=providers_help),
        ])

    @classmethod
    def from_kwargs(cls, kwargs: Mapping) -> OnnxrtArgs:
        return cls(providers=tuple(kwargs["providers"]))

    @property
    def cpu_only(self) -> bool:
        """Whether the session runs on the CPU only (no provider, or only CPU ones)."""
        return all(provider.lower().startswith("cpu") for provider in self.providers)

    def session_expr(self, model: Any, session_options: Any = None) -> Any:
        """The call tree of the SessionFromOnnx loader of ``model`` (a call tree or a path)."""
        return Ref("poly.onnx", "SessionFromOnnx")(
            model, providers=list(self.providers) or None,
            session_options=Value(session_options) if session_options is not None else None)

    def create_session(self, model: Any, session_options: Any = None) -> Any:
        """A SessionFromOnnx loader for ``model`` (a path or an ONNX loader)."""
        return evaluate(self.session_expr(Value(model), session_options))
