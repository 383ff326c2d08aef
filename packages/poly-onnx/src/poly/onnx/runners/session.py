"""``SessionFromOnnx``: builds an ONNX-Runtime ``InferenceSession`` from an ONNX model."""

import os
import re
import weakref
from typing import Any

from poly.core import G_LOGGER, BaseLoader, PolyException
from poly.core.func import funcify
from poly.core.optional_import import lazy_import
from poly.onnx.model.errors import ModelLoadError, UnsupportedModelError
from poly.onnx.model.ir_version import required_ir_version
from poly.onnx.runners.model_source import ModelSource

onnxrt = lazy_import("onnxruntime")

__all__ = ["SessionFromOnnx", "session_from_onnx", "session_model_label", "PROVIDER_ALIASES", "usable_cpus",
           "usable_cpu_ids", "register_custom_op_libs"]

PROVIDER_ALIASES = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "trt": "TensorrtExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
    "rocm": "ROCMExecutionProvider",
    "migraphx": "MIGraphXExecutionProvider",
    "dml": "DmlExecutionProvider",
    "directml": "DmlExecutionProvider",
    "openvino": "OpenVINOExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
    "qnn": "QNNExecutionProvider",
}
"""Short provider names accepted besides ONNX-Runtime's own (``"trt"`` is not a substring of
``"TensorrtExecutionProvider"``, so Polygraphy's substring matching alone would miss it)."""

_OPTIMIZATION_LEVELS = {
    "disable": "ORT_DISABLE_ALL",
    "disable_all": "ORT_DISABLE_ALL",
    "none": "ORT_DISABLE_ALL",
    "basic": "ORT_ENABLE_BASIC",
    "extended": "ORT_ENABLE_EXTENDED",
    "layout": "ORT_ENABLE_LAYOUT",
    "all": "ORT_ENABLE_ALL",
}

_ORT_ERROR = 3
"""ONNX-Runtime's log severity of errors (0 verbose, 1 info, 2 warning, 3 error, 4 fatal)."""
_IR_REFUSAL = re.compile(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)")


class SessionFromOnnx(BaseLoader):
    """
    Functor that builds an ONNX-Runtime inference session.

    A model stamped with an IR version newer than the installed ONNX-Runtime reads (onnx 1.23
    writes IR 14; ONNX-Runtime 1.31 reads up to 13) is loaded with its IR version lowered, with
    a warning, when its opsets exist in that older IR version; otherwise one clear error says
    what to upgrade.

    Custom operators come from shared libraries registered on the session options
    (``custom_op_libs``; ``onnxruntime.SessionOptions.register_custom_ops_library``), which
    Polygraphy has no argument for (it suggests ``LD_PRELOAD``).
    """

    DEFAULT_CUSTOM_OP_LIBS: tuple[str, ...] = ()
    """Custom-op libraries registered on the sessions of loaders given no ``custom_op_libs``:
    set by the command-line flag ``--ort-custom-op-libs`` for the command that runs, so that every
    session the command creates (its runners', shape inference's, a search's) can run the model."""

    def __init__(self, model_bytes: Any, providers: Any = None, graph_optimization_level: Any = None,
                 session_options: Any = None, custom_op_libs: Any = None) -> None:
        """
        Builds an ONNX-Runtime inference session.

        Args:
            model_bytes (Union[bytes, str, os.PathLike, onnx.ModelProto, Callable() -> Union[bytes, str, onnx.ModelProto]]):
                    A serialized ONNX model, a path to one, an ``onnx.ModelProto``, or a callable
                    (such as a loader) that returns one of those. Models with external data
                    are best given by path.
            providers (Sequence[Union[str, Tuple[str, dict]]]):
                    Execution providers in order of priority. Each is an exact provider name,
                    a short name (``"cpu"``, ``"cuda"``, ``"trt"``...), or a case-insensitive
                    part of an available provider's name; a ``(name, options)`` pair passes
                    provider options. Defaults to ``["cpu"]``.
            graph_optimization_level (Union[onnxruntime.GraphOptimizationLevel, str]):
                    The graph optimization level: an ``onnxruntime.GraphOptimizationLevel`` or
                    one of ``"disable"``, ``"basic"``, ``"extended"``, ``"all"``.
                    Defaults to ONNX-Runtime's own default (``ORT_ENABLE_ALL``).
            session_options (Union[onnxruntime.SessionOptions, Dict[str, object]]):
                    Session options to use as they are (``graph_optimization_level``, when
                    given, is set on them); or a dict of ``SessionOptions`` attributes set on
                    the default options (``{"intra_op_num_threads": 1}``: unlike
                    ``SessionOptions``, a dict can be pickled, e.g. to a Ray actor). Defaults to
                    options whose intra- and inter-op thread counts are ``usable_cpus()``.
            custom_op_libs (Sequence[Union[str, os.PathLike]]):
                    Paths of shared libraries of ONNX-Runtime custom operators (libraries that
                    export ``RegisterCustomOps``), registered on the session options before the
                    session is created. A path that is not a file, or a library ONNX-Runtime
                    cannot load, is one clear error naming it. Defaults to
                    ``SessionFromOnnx.DEFAULT_CUSTOM_OP_LIBS`` (none unless a command set it).
        """
        self._model_bytes_or_path = model_bytes
        self.providers = ["cpu"] if providers is None else providers
        self.graph_optimization_level = graph_optimization_level
        self.session_options = session_options
        self.custom_op_libs = custom_op_libs

    def call_impl(self) -> Any:
        """
        Returns:
            onnxruntime.InferenceSession: The inference session.
        """
        source = ModelSource.resolve(self._model_bytes_or_path, what="model for the ONNX-Runtime session")
        providers = resolve_providers(self.providers)
        options = self._make_options()

        G_LOGGER.start(f"Creating ONNX-Runtime Inference Session with providers: {providers}")
        try:
            with source.ort_input() as model:
                return _with_outputs(source, onnxrt.InferenceSession(model, sess_options=options, providers=providers))
        except PolyException:
            raise
        except Exception as err:
            refusal = _IR_REFUSAL.search(str(err))
            if refusal is None:
                _fail(source, err)
        model_ir, max_ir = int(refusal.group(1)), int(refusal.group(2))  # type: ignore[union-attr]
        return _with_outputs(source, _session_with_lowered_ir(source, model_ir, max_ir, options, providers))

    def _make_options(self) -> Any:
        options = self.session_options
        if options is None or isinstance(options, dict):
            options = onnxrt.SessionOptions()
            options.intra_op_num_threads = usable_cpus()
            options.inter_op_num_threads = usable_cpus()
            if not G_LOGGER.is_enabled(G_LOGGER.VERBOSE):
                # ONNX-Runtime's own warnings go straight to stderr; poly reports what matters
                options.log_severity_level = _ORT_ERROR
            for name, value in (self.session_options or {}).items():
                if not hasattr(options, name):
                    raise PolyException(f"session_options: onnxruntime.SessionOptions has no option '{name}'")
                setattr(options, name, value)
        if self.graph_optimization_level is not None:
            options.graph_optimization_level = _optimization_level(self.graph_optimization_level)
        if self.custom_op_libs is None:
            register_custom_op_libs(options, SessionFromOnnx.DEFAULT_CUSTOM_OP_LIBS, what="--ort-custom-op-libs")
        else:
            register_custom_op_libs(options, self.custom_op_libs)
        return options


def register_custom_op_libs(options: Any, libs: Any, what: str = "custom_op_libs") -> None:
    """
    Registers the ONNX-Runtime custom-op libraries ``libs`` (paths) on ``options`` (an
    ``onnxruntime.SessionOptions``). A path that is not a file, or a library ONNX-Runtime cannot
    load (not a custom-op library, missing dependencies), raises ``PolyException`` naming the
    path (and, for a missing file, ``what``: the argument or flag the paths came from).
    """
    if isinstance(libs, (str, os.PathLike)):
        libs = [libs]
    if not libs:
        return
    # Options given by the caller may serve several sessions: each library is registered on them once.
    registered = _REGISTERED_LIBS.setdefault(options, set())
    for lib in libs:
        path = os.fspath(lib)
        if not os.path.isfile(path):
            raise PolyException(f"{what}: no such custom-op library file: {path!r}")
        if os.path.realpath(path) in registered:
            continue
        G_LOGGER.verbose(f"Registering ONNX-Runtime custom-op library: {path}")
        try:
            options.register_custom_ops_library(path)
        except Exception as err:
            raise PolyException(f"ONNX-Runtime could not load the custom-op library {path!r}: "
                                f"{ort_error_message(err)}") from None
        registered.add(os.path.realpath(path))


_REGISTERED_LIBS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""SessionOptions -> the real paths of the custom-op libraries registered on them."""


def usable_cpus() -> Any:
    """
    How many CPUs this process may run on. ONNX-Runtime binds a thread to every logical CPU of
    the machine, some of which a process may not be allowed to use (containers, taskset): session
    thread pools are sized to this instead.
    """
    return len(usable_cpu_ids())


def usable_cpu_ids() -> list[int]:
    """The CPUs this process may run on (its affinity; every CPU where there is none, as on macOS),
    in order."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))


session_from_onnx = funcify(SessionFromOnnx)


def resolve_providers(providers: Any) -> Any:
    """
    Maps requested execution providers to the names ONNX-Runtime knows.

    Args:
        providers (Sequence[Union[str, Tuple[str, dict]]]): See ``SessionFromOnnx``.

    Returns:
        List[Union[str, Tuple[str, dict]]]: Full provider names (with their options).

    Raises:
        PolyException: When a requested provider is not available.
    """
    if isinstance(providers, (str, tuple)):
        providers = [providers]
    available = onnxrt.get_available_providers()
    resolved = []
    for prov in providers:
        name, options = (prov[0], prov[1]) if isinstance(prov, tuple) else (prov, None)
        match = _match_provider(str(name), available)
        if match is None:
            hint = ""
            if PROVIDER_ALIASES.get(str(name).lower()) in (
                "CUDAExecutionProvider",
                "TensorrtExecutionProvider",
            ):
                hint = " (CUDA and TensorRT providers come with: python -m pip install onnxruntime-gpu)"
            G_LOGGER.critical(
                f"Could not find specified ONNX-Runtime execution provider: {name!r}; "
                f"available providers are: {available}{hint}"
            )
        resolved.append(match if options is None else (match, options))
    return resolved


def _match_provider(name: Any, available: Any) -> Any:
    if name in available:
        return name
    alias = PROVIDER_ALIASES.get(name.lower())
    if alias is not None:
        return alias if alias in available else None
    lowered = name.lower()
    for candidate in available:
        if lowered in candidate.lower() or candidate.lower() in lowered:
            return candidate
    return None


def _optimization_level(level: Any) -> Any:
    if not isinstance(level, str):
        return level
    key = level.strip().lower().removeprefix("ort_").removeprefix("enable_")
    member = _OPTIMIZATION_LEVELS.get(key, level.strip().upper())
    value = getattr(onnxrt.GraphOptimizationLevel, member, None)
    if value is None:
        G_LOGGER.critical(
            f"Unknown graph optimization level: {level!r}; expected one of "
            f"{sorted(set(_OPTIMIZATION_LEVELS) - {'none', 'disable_all'})} or an "
            "onnxruntime.GraphOptimizationLevel"
        )
    return value


def ort_error_message(err: Any) -> str:
    """
    Returns ONNX-Runtime's error message on one line, without its error-code prefix and the
    C++ source locations and function signatures it carries.
    """
    text = str(err).strip()
    prefix = re.match(r"\[ONNXRuntimeError\] : \d+ : \w+ : ", text)
    if prefix:
        text = text[prefix.end() :]
    while location := re.search(r"\S+\.(?:cc|cpp|cxx|h|hpp):\d+ ", text):
        rest = text[location.end() :]
        signature = re.match(r"[\w:~<>,*& ]*?\(", rest)
        if signature:
            rest = _skip_balanced(rest, signature.end() - 1, "(", ")")
            rest = re.sub(r"^ const\b", "", rest)
            if rest.startswith(" ["):
                rest = _skip_balanced(rest, 1, "[", "]")
        text = text[: location.start()] + rest.lstrip()
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _skip_balanced(text: Any, open_at: Any, opening: Any, closing: Any) -> Any:
    """Returns ``text`` after the bracket that closes the one at ``open_at`` (unchanged if none does)."""
    depth = 0
    for i in range(open_at, len(text)):
        depth += 1 if text[i] == opening else -1 if text[i] == closing else 0
        if depth == 0:
            return text[i + 1 :]
    return text


def _ort_version() -> Any:
    return onnxrt.load().__version__


def _with_outputs(source: Any, session: Any) -> Any:
    if not session.get_outputs():
        G_LOGGER.critical(f"ONNX-Runtime could not create a session for {source.label}: the model has no outputs")
    # on the session, not the loader: a loader is not changed by being called
    setattr(session, _LABEL_ATTR, source.label)
    return session


_LABEL_ATTR = "poly_model_label"


def session_model_label(session: Any) -> Any:
    """How errors name the model of a session ``SessionFromOnnx`` created (a quoted path or a
    description); None for a session made elsewhere."""
    return getattr(session, _LABEL_ATTR, None)


def _fail(source: Any, err: Any, note: str = "") -> None:
    if type(err).__name__ == "InvalidProtobuf":
        G_LOGGER.critical(source.not_a_model_message(), ModelLoadError)
    message = ort_error_message(err)
    G_LOGGER.critical(
        f"ONNX-Runtime could not create a session for {source.label}{note}: {message}",
        ModelLoadError if "external data" in message.lower() else None,
    )


def _session_with_lowered_ir(source: Any, model_ir: Any, max_ir: Any, options: Any, providers: Any) -> Any:
    model = source.load_proto()
    required, reason = required_ir_version(model)
    if required > max_ir:
        # An opset newer than onnx knows comes with its own explanation.
        because = reason if "newer than" in reason else f"{reason} needs IR version {required}"
        G_LOGGER.critical(
            f"{source.subject} has IR version {model_ir}, but ONNX-Runtime {_ort_version()} reads at most "
            f"IR version {max_ir}, and the model cannot be lowered to it: {because}. Upgrade "
            "ONNX-Runtime (python -m pip install -U onnxruntime) or convert the model to older opsets "
            "(onnx.version_converter)",
            UnsupportedModelError,
        )
    G_LOGGER.warning(
        f"{source.subject} has IR version {model_ir}, newer than ONNX-Runtime {_ort_version()} "
        f"reads (at most {max_ir}); loading it as IR version {max_ir}, which its opsets and data "
        f"types allow (they need IR version {required}). Save the model with ir_version={max_ir} "
        "to avoid this."
    )
    original = model.ir_version
    model.ir_version = max_ir
    try:
        lowered = ModelSource(ModelSource.PROTO, model, source.label)
        try:
            with lowered.ort_input() as data:
                return onnxrt.InferenceSession(data, sess_options=options, providers=providers)
        except Exception as err:
            _fail(source, err, note=f" (with its IR version lowered from {model_ir} to {max_ir})")
    finally:
        # A ModelProto source is the caller's object: give it back as it came.
        model.ir_version = original
