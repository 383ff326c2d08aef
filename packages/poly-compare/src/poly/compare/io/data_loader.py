"""
``DataLoader``: synthetic inputs from input metadata, reproducible by seed (the same arrays
Polygraphy's ``DataLoader`` generates for the same seed, ranges, dtypes and shapes), and the cache
that feeds every runner the same inputs (``DataLoaderCache``).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from poly.core import (
    G_LOGGER,
    DataType,
    DataTypeConversionException,
    LogMode,
    PolyException,
    PolyUsageError,
    TensorMetadata,
    array_dtype,
    array_shape,
    constants,
)
from poly.core.optional_import import lazy_import
from poly.core.tensors.fit_shape import try_match_shape
from poly.core.tensors.per_output import contains_wildcard, match_keys, value_or_from_dict, warn_unknown_keys
from poly.core.tensors.shape import is_shape_dynamic, is_valid_shape_override, override_dynamic_shape
from poly.core.util.sequences import default, find_str_in_iterable

__all__ = ["DataLoader", "ArraySampler", "DataLoaderCache", "coerce_feed_dict", "coerce_buffer", "check_feed_dict"]

_VALID_BACKENDS = ("numpy", "torch")
torch = lazy_import("torch", purpose="The torch data-loader backend")


def _is_inf(value: Any) -> bool:
    return isinstance(value, float) and math.isinf(value)


class ArraySampler:
    """Draws random arrays from one seeded generator (NumPy's ``RandomState``, or torch's)."""

    def __init__(self, backend: Any, seed: Any) -> None:
        """
        Args:
            backend (str): ``"numpy"`` or ``"torch"``.
            seed (int): The seed.
        """
        if backend not in _VALID_BACKENDS:
            G_LOGGER.critical(
                f"Invalid `data_loader_backend_module`. Note: got: {backend} but valid modules are: {list(_VALID_BACKENDS)}"
            )
        self.backend = backend
        if backend == "numpy":
            self.rng = np.random.RandomState(seed)
        else:
            self.rng = torch.Generator()
            self.rng.manual_seed(seed)  # type: ignore[attr-defined]

    def _dtype(self, dtype: Any) -> Any:
        return None if dtype is None else DataType.to_dtype(DataType.from_dtype(dtype), self.backend)

    def sample_integer(self, shape: Any, dtype: Any, low: Any, high: Any) -> Any:
        """Integers in [low, high], inclusive."""
        dtype = self._dtype(dtype)
        if self.backend == "numpy":
            return np.array(self.rng.randint(low=low, high=high + 1, size=shape, dtype=dtype))
        return torch.randint(low, high + 1, tuple(shape), generator=self.rng, dtype=dtype)

    def sample_float(self, shape: Any, dtype: Any, fmin: Any, fmax: Any) -> Any:
        """Floats in [fmin, fmax]; an infinite bound yields infinities rather than NaN."""
        scale, shift = fmax - fmin, fmin
        if _is_inf(fmin):
            scale, shift = fmin, 0
        if _is_inf(fmax):
            scale = fmax
        dtype = self._dtype(dtype)
        if self.backend == "numpy":
            with np.errstate(invalid="ignore", over="ignore"):
                return np.array((self.rng.random_sample(size=shape) * scale + shift).astype(dtype))
        return torch.rand(tuple(shape), generator=self.rng, dtype=dtype) * scale + shift

    def constant_array(self, values: Any, dtype: Any) -> Any:
        """An array holding ``values`` (the value of a shape tensor)."""
        dtype = self._dtype(dtype)
        if self.backend == "numpy":
            return np.array(values, dtype=dtype)
        return torch.tensor(values, dtype=dtype)


def _default_range(val_range: Any, fallback: Any) -> Any:
    if not isinstance(val_range, (tuple, list)):
        return fallback
    return tuple(default(elem, fallback_elem) for elem, fallback_elem in zip(val_range, fallback, strict=False))


class DataLoader:
    """
    Generates synthetic inputs: iterating it yields ``iterations`` feed dicts (input name ->
    array), and ``loader[i]`` always gives the same arrays for the same seed and ``i``.

    ``Comparator.run`` sets ``input_metadata`` to the first runner's inputs; ``input_metadata``
    given here overrides dtypes and fixes the shapes of dynamic dimensions.
    """

    def __init__(self, seed: Any = None, iterations: Any = None, input_metadata: Any = None, val_range: Any = None, data_loader_backend_module: Any = None,
                 strict: bool = False) -> None:
        """
        Args:
            seed (int): The seed; iteration ``i`` uses ``seed + i``. Defaults to 1.
            iterations (int): How many feed dicts to yield. Defaults to 1.
            input_metadata (TensorMetadata): Per input (names may be wildcards), a dtype and/or a
                    shape that override the model's; shapes fix dynamic dimensions (a 1-D integer
                    input whose given "shape" has the length of its one dimension is taken as a
                    shape tensor, and that shape becomes its value).
            val_range (Union[Tuple[number, number], Dict[str, Tuple[number, number]]]): Inclusive
                    value range; per input as a dict with ``""`` as the default; None in a tuple
                    keeps that bound's default. Defaults to (0.0, 1.0). Integer inputs take the
                    range as ints, bool inputs as bools.
            data_loader_backend_module (str): ``"numpy"`` (default) or ``"torch"``.
            strict (bool): Whether ``input_metadata`` naming an input the model does not have, or
                    giving a shape that does not fit one (another rank, a fixed dimension
                    changed), raises ``PolyUsageError`` (what `poly` does with --input-shapes)
                    instead of warning and generating the model's own shape (Polygraphy's
                    behaviour, the default).
        """
        self.seed = default(seed, constants.DEFAULT_SEED)
        self.iterations = default(iterations, 1)
        self.user_input_metadata = default(input_metadata, {})
        if self.user_input_metadata and not isinstance(self.user_input_metadata, TensorMetadata):
            self.user_input_metadata = TensorMetadata(self.user_input_metadata)
        self.data_loader_backend_module = default(data_loader_backend_module, "numpy")
        self.strict = bool(strict)
        self.input_metadata: Any = None
        """The inputs to generate (set by ``Comparator.run``); the user metadata when never set."""
        self.default_val_range = _default_range(val_range, (0.0, 1.0))
        self.val_range = default(val_range, self.default_val_range)
        if self.user_input_metadata:
            G_LOGGER.info(
                f"Will generate inference input data according to provided TensorMetadata: {self.user_input_metadata}"
            )

    def __repr__(self) -> str:
        args = {
            "seed": self.seed,
            "iterations": self.iterations,
            "input_metadata": self.user_input_metadata or None,
            "val_range": self.val_range,
            "data_loader_backend_module": self.data_loader_backend_module,
        }
        return "DataLoader(" + ", ".join(f"{k}={v!r}" for k, v in args.items() if v is not None) + ")"

    def __len__(self) -> Any:
        return self.iterations

    def __iter__(self) -> Iterator[Any]:
        for index in range(self.iterations):
            yield self[index]

    def _get_range(self, name: Any, cast: Any) -> tuple[Any, ...]:
        # A None bound (in a tuple or a per-input entry) keeps the default for that bound.
        bounds = value_or_from_dict(self.val_range, name, self.default_val_range)
        return tuple(cast(default(val, fallback)) for val, fallback in zip(bounds, self.default_val_range, strict=False))

    @staticmethod
    def _clamp_to_dtype(name: Any, dtype: Any, low: Any, high: Any) -> Any:
        # A range given for every input may not fit a narrow integer type (e.g. [-2, 5] for uint8).
        info = np.iinfo(np.dtype(dtype))
        clamped = (max(low, int(info.min)), min(high, int(info.max)))
        if clamped != (low, high):
            G_LOGGER.warning(
                f"Input tensor: {name} | Range [{low}, {high}] does not fit {np.dtype(dtype)}; "
                f"generating values in [{clamped[0]}, {clamped[1]}] instead.",
                mode=LogMode.ONCE,
            )
        return clamped

    def _static_shape(self, name: Any, shape: Any) -> Any:
        if not is_shape_dynamic(shape):
            return shape
        if getattr(shape, "min", None) is not None:
            static = shape.min
        elif getattr(shape, "max", None) is not None:
            static = shape.max
        else:
            static = override_dynamic_shape(shape)
        if list(static) != list(shape):
            if not is_valid_shape_override(static, shape):
                G_LOGGER.critical(f"Input tensor: {name} | Cannot override original shape: {shape} to {static}")
            G_LOGGER.warning(
                f"Input tensor: {name} [shape={shape}] | Will generate data of shape: {static}.\n"
                f"If this is incorrect, please provide a custom data loader.",
                mode=LogMode.ONCE,
            )
        return static

    def _is_shape_tensor(self, name: Any, dtype: Any) -> bool:
        # A 1-D integer input whose user "shape" has as many entries as its one dimension is
        # taken to be a shape tensor: the user gave its value, not its shape.
        if name not in self.input_metadata or name not in self.user_input_metadata:
            return False
        _, shape = self.input_metadata[name]
        if shape is None:
            return False
        if (dtype is not None and not DataType.from_dtype(dtype).is_integral) or is_shape_dynamic(shape) or len(shape) != 1:
            return False
        user_shape = self.user_input_metadata[name].shape
        return user_shape is not None and not is_shape_dynamic(user_shape) and len(user_shape) == shape[0]

    def _generate(self, sampler: Any, name: Any, dtype: Any, shape: Any) -> Any:
        if self._is_shape_tensor(name, dtype):
            buffer = sampler.constant_array(list(shape), dtype)
            G_LOGGER.info(
                f"Assuming {name} is a shape tensor. Setting input values to: {buffer}. If these values are not "
                "correct, please set it correctly in 'input_metadata' or by providing --input-shapes",
                mode=LogMode.ONCE,
            )
            return buffer
        _check_generable(name, dtype, shape)
        try:
            return self._sample(sampler, name, dtype, shape)
        except MemoryError:
            G_LOGGER.critical(f"Input tensor: {name} | Cannot generate input data of shape {tuple(shape)}: "
                              "out of memory (use --input-shapes)")

    def _sample(self, sampler: Any, name: Any, dtype: Any, shape: Any) -> Any:
        entry = DataType.from_dtype(dtype) if dtype is not None else None
        if entry is not None and (entry.is_integral or entry == DataType.BOOL):
            low, high = self._get_range(name, int if entry.is_integral else bool)
            if entry.is_integral and self.data_loader_backend_module == "numpy":
                low, high = self._clamp_to_dtype(name, dtype, low, high)
            G_LOGGER.verbose(f"Input tensor: {name} | Generating input data in range: [{low}, {high}]", mode=LogMode.ONCE)
            return sampler.sample_integer(shape, dtype, low, high)
        fmin, fmax = self._get_range(name, float)
        G_LOGGER.verbose(f"Input tensor: {name} | Generating input data in range: [{fmin}, {fmax}]", mode=LogMode.ONCE)
        return sampler.sample_float(shape, dtype, fmin, fmax)

    def _to_backend_dtype(self, name: Any, dtype: Any) -> Any:
        if dtype is None:
            return None
        try:
            converted = DataType.to_dtype(DataType.from_dtype(dtype), self.data_loader_backend_module)
            if self.data_loader_backend_module == "numpy" and np.dtype(converted).kind == "V":
                # bfloat16, float8, int4...: NumPy holds them only through ml_dtypes, and random
                # values drawn in them mean little; Polygraphy refuses them too.
                raise DataTypeConversionException(f"NumPy has no built-in {dtype} type")
            return converted
        except DataTypeConversionException:
            G_LOGGER.critical(
                f"Could not convert data type: {dtype} to {self.data_loader_backend_module}, so the default data "
                f"loader cannot generate a {self.data_loader_backend_module} array for input: {name}. "
                f"Please use a custom data loader to provide inputs. "
            )

    def __getitem__(self, index: Any) -> Any:
        """
        The feed dict of iteration ``index`` (the same arrays every time for the same index).

        Raises:
            IndexError: When ``index >= iterations``.
        """
        if index >= self.iterations:
            raise IndexError(index)
        G_LOGGER.verbose(f"Generating data using numpy seed: {self.seed + index}")
        sampler = ArraySampler(self.data_loader_backend_module, self.seed + index)

        if self.input_metadata is None and self.user_input_metadata is not None:
            self.input_metadata = self.user_input_metadata

        user_for_input, unmatched = match_keys(list(self.user_input_metadata), list(self.input_metadata))
        for name in unmatched:
            if contains_wildcard(name):
                G_LOGGER.warning(
                    f"Input tensor wildcard: {name} | Metadata was provided, but none of the matched inputs exist "
                    f"in one or more runners."
                )
            else:
                close = find_str_in_iterable(name, self.input_metadata.keys())
                if self.strict:
                    known = ", ".join(self.input_metadata.keys()) or "none"
                    raise PolyUsageError(f"Input '{name}' (given a shape or dtype, e.g. by --input-shapes) is not an input "
                                         f"of the model: its inputs are {known}"
                                         + (f"; did you mean '{close}'?" if close else ""))
                msg = f"Input tensor: {name} | Metadata was provided, but the input does not exist in one or more runners."
                if close:
                    msg += f"\nMaybe you meant to set: {close}?"
                G_LOGGER.warning(msg)

        buffers = OrderedDict()
        for name, (dtype, shape) in self.input_metadata.items():
            dtype = self._to_backend_dtype(name, dtype)
            if name in user_for_input:
                user_dtype, user_shape = self.user_input_metadata[user_for_input[name]]
                dtype = self._to_backend_dtype(name, default(user_dtype, dtype))
                valid_override = user_shape is not None and (
                    shape is None or is_valid_shape_override(user_shape, shape)
                )
                if user_shape is not None and is_shape_dynamic(user_shape):
                    G_LOGGER.warning(
                        f"Input tensor: {name} [shape={shape}] | Provided input shape: {user_shape} is dynamic.\n"
                        "Dynamic shapes cannot be used to generate inference data. Will use default shape instead.\n"
                        "To avoid this, please provide a fixed shape to the data loader. "
                    )
                elif not valid_override and not self._is_shape_tensor(name, dtype):
                    if self.strict:
                        raise PolyUsageError(_shape_misfit(name, list(user_shape), list(shape)))
                    G_LOGGER.warning(
                        f"Input tensor: {name} [shape={shape}] | Cannot use provided custom shape: {user_shape} to "
                        "override tensor shape. Will use default shape instead.",
                        mode=LogMode.ONCE,
                    )
                else:
                    shape = default(user_shape, shape)
            if shape is None:
                G_LOGGER.critical(
                    f"Input tensor: {name} | Its shape is unknown; provide one in input_metadata (--input-shapes)"
                )
            buffers[name] = self._generate(sampler, name, dtype, list(self._static_shape(name, shape)))

        if isinstance(self.val_range, Mapping):
            warn_unknown_keys(self.val_range, "val_range", list(self.input_metadata.keys()) + [""])
        return buffers


def _shape_misfit(name: str, given: list[Any], model: list[Any]) -> str:
    """Why shape ``given`` cannot be generated for input ``name`` of shape ``model``."""
    if len(given) != len(model):
        return (f"Input '{name}': the shape given, {given}, has rank {len(given)}, but the model's input has "
                f"shape {model} (rank {len(model)})")
    fixed = [i for i, (g, m) in enumerate(zip(given, model, strict=True)) if isinstance(m, int) and m >= 0 and g != m]
    where = f": dimension {fixed[0]} is fixed to {model[fixed[0]]}" if fixed else ""
    return f"Input '{name}': the shape given, {given}, does not fit the model's input shape {model}{where}"


_GENERATION_OVERHEAD = 32
"""Bytes per element the synthetic data generator needs on top of the result: random floats are
drawn in float64 and scaled and shifted through temporaries."""


def _available_memory() -> Any:
    # MemAvailable (Linux), else the physical memory; None where neither is known
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _check_generable(name: Any, dtype: Any, shape: Any) -> None:
    """Refuses, in one line, a shape no input can have (a negative or non-integer dimension) or
    one whose data could not be generated in the memory available (a model claiming 10**12
    elements), before allocating anything."""
    dims = list(shape)
    if not all(isinstance(dim, (int, np.integer)) and dim >= 0 for dim in dims):
        G_LOGGER.critical(f"Input tensor: {name} | Cannot generate input data of shape {tuple(dims)}: "
                          "dimensions must be non-negative integers (use --input-shapes)")
    try:
        itemsize = np.dtype(DataType.to_dtype(DataType.from_dtype(dtype), "numpy")).itemsize
    except Exception:  # noqa: BLE001 - an unknown or exotic type: assume the widest
        itemsize = 16
    needed = math.prod(int(dim) for dim in dims) * (itemsize + _GENERATION_OVERHEAD)
    memory = _available_memory()
    if memory is not None and needed > memory:
        G_LOGGER.critical(f"Input tensor: {name} | Cannot generate input data of shape {tuple(dims)}: it needs about "
                          f"{needed / 2**30:.4g} GiB of memory, more than the {memory / 2**30:.4g} GiB available "
                          "(use --input-shapes)")


def coerce_buffer(buffer: Any, name: Any, dtype: Any, shape: Any) -> Any:
    """
    Casts and transposes/reshapes one input to the expected dtype and shape, warning at each
    conversion; an input that still does not fit is an error.
    """
    buffer_dtype = array_dtype(buffer)
    if dtype is not None and dtype != buffer_dtype:
        G_LOGGER.warning(
            f"Input tensor: {name} | Buffer dtype ({buffer_dtype}) does not match expected input dtype ({dtype}), "
            "attempting to cast."
        )
        np_dtype = DataType.to_dtype(dtype, "numpy")
        if dtype.is_integral or dtype.is_floating:
            info = np.iinfo(np_dtype) if dtype.is_integral else np.finfo(np_dtype)
            with np.errstate(invalid="ignore"):
                if np.any((np.asarray(buffer) < info.min) | (np.asarray(buffer) > info.max)):
                    G_LOGGER.warning(f"Some values in this input are out of range of {dtype}. Unexpected behavior may ensue!")
        buffer = np.asarray(buffer).astype(np_dtype)

    if shape is not None and not is_valid_shape_override(array_shape(buffer), shape):
        G_LOGGER.warning(
            f"Input tensor: {name} | Buffer shape ({array_shape(buffer)}) does not match expected input shape "
            f"({tuple(shape)}). Attempting to transpose/reshape."
        )
        buffer = try_match_shape(buffer, shape)

    if (dtype is not None and array_dtype(buffer) != dtype) or (
        shape is not None and not is_valid_shape_override(array_shape(buffer), shape)
    ):
        # Raised, not logged: a caller with a fallback recovers from it silently.
        raise PolyException(
            f"Input tensor: {name} | Cannot reuse input data due to mismatch in shape or data type. "
            f"Note: Provided input: [dtype={array_dtype(buffer)}, shape={array_shape(buffer)}], "
            f"Requested input: [dtype={dtype}, shape={shape}]"
        )
    return buffer


def coerce_feed_dict(feed_dict: Any, input_metadata: Any, fallback: Any = None) -> Any:
    """
    Makes a feed dict fit ``input_metadata``: inputs are found by name (loosely, then by position)
    and cast/reshaped as needed. ``fallback(name)``, when given, supplies a replacement for an
    input that is missing or cannot be made to fit.

    Returns:
        OrderedDict[str, array]: A new feed dict in ``input_metadata``'s order.
    """
    coerced = OrderedDict()
    for index, (name, (dtype, shape)) in enumerate(input_metadata.items()):
        try:
            matched = find_str_in_iterable(name, feed_dict.keys(), index)
            if matched is None:
                raise PolyException(f"Input tensor: {name} | Does not exist in the provided input data.")
            if matched != name:
                G_LOGGER.warning(
                    f"Input tensor: {name} | Buffer name ({matched}) does not match expected input name ({name})."
                )
            coerced[name] = coerce_buffer(feed_dict[matched], name, dtype, shape)
        except PolyException as err:
            if fallback is None:
                raise
            G_LOGGER.warning(
                f"Could not use the provided buffer for input: {name} ({err}). Attempting to reload it from the "
                "data loader (this only works if the data loader supports random access)."
            )
            try:
                coerced[name] = fallback(name)
            except Exception:
                raise PolyException(
                    f"Input tensor: {name} | Could not use the provided input and could not reload a replacement "
                    f"from the data loader: {err} Inputs loaded from files (--load-inputs) are read as-is; if the "
                    "runners run different models, use a data loader that can generate matching inputs."
                ) from None
    return coerced


def _is_feed_dict(obj: Any) -> bool:
    from poly.compare.results import RunResults

    if isinstance(obj, RunResults) or not hasattr(obj, "items"):
        return False
    try:
        return all(isinstance(name, str) for name, _ in obj.items())
    except Exception:
        return False


def check_feed_dict(obj: Any, source: str = "data loader") -> None:
    """Raises a clear error when ``obj`` (something a data loader yielded) is not a feed dict."""
    if _is_feed_dict(obj):
        return
    from poly.compare.results import RunResults

    hint = ""
    if isinstance(obj, RunResults):
        hint = (
            "\nHint: This is a `RunResults` object (e.g. generated with `--save-outputs`). Use the "
            "`data merge` tool to convert it to a feed_dict-compatible format."
        )
    G_LOGGER.critical(
        f"The {source} returned an object that cannot be recognized as a feed_dict "
        f"(Dict[str, Union[np.ndarray, torch.Tensor]]):\nNote: The object was:\n{obj}.{hint}"
    )


class DataLoaderCache:
    """
    Reads a data loader once and serves the same feed dicts to every runner, each made to fit that
    runner's inputs (``set_input_metadata``).
    """

    def __init__(self, data_loader: Any) -> None:
        self.data_loader = data_loader
        self.cache: list[Any] = []
        self.input_metadata: Any = None

    def __len__(self) -> int:
        return len(self.cache)

    def __getitem__(self, iteration: Any) -> Any:
        if iteration >= len(self.cache):
            raise IndexError(iteration)
        reloaded = {}

        def reload_input(name: Any) -> Any:
            if "feed_dict" not in reloaded:
                reloaded["feed_dict"] = self.data_loader[iteration]
            return reloaded["feed_dict"][name]

        return coerce_feed_dict(self.cache[iteration], self.input_metadata, fallback=reload_input)

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self.cache)):
            yield self[index]

    def set_input_metadata(self, input_metadata: Any) -> None:
        """
        Sets the inputs the next runner expects (and tells the data loader, if it listens); reads
        the data loader the first time.
        """
        self.input_metadata = input_metadata
        with contextlib.suppress(AttributeError):
            self.data_loader.input_metadata = input_metadata
        if not self.cache:
            G_LOGGER.verbose("Loading inputs from data loader")
            self.cache = list(self.data_loader)
            if not self.cache:
                G_LOGGER.warning("Data loader did not yield any input data.")
            else:
                check_feed_dict(self.cache[0])
