"""Inputs and saved data: synthetic data loaders (``data_loader``), data-loader scripts
(``data_loader_script``), saved inputs (``saved_inputs``), the ``.npz`` codec (``npz_codec``) and
per-iteration file sequences (``iteration_files``). Reading a data file never runs code.

Its names are imported on first use (``poly.core.optional_import.lazy_exports``), so that a run
imports only the formats it reads; the imports under ``TYPE_CHECKING`` are the same names, for type
checkers.
"""

from typing import TYPE_CHECKING

from poly.core.optional_import import lazy_exports

if TYPE_CHECKING:
    from poly.compare.io.data_loader import (
        ArraySampler,
        DataLoader,
        DataLoaderCache,
        check_feed_dict,
        coerce_buffer,
        coerce_feed_dict,
    )
    from poly.compare.io.data_loader_script import (
        DEFAULT_DATA_LOADER_FUNC,
        DataLoaderFromScript,
        import_from_script,
        parse_script_and_func_name,
    )
    from poly.compare.io.iteration_files import (
        ITERATION_FILE_INDEX_WIDTH,
        IterationWriter,
        is_single_file,
        iterate_from_files,
        list_iteration_files,
    )
    from poly.compare.io.npz_codec import (
        META_KEY,
        decode_run_results,
        is_npz_file,
        load_feed_dicts_npz,
        load_npz,
        load_npz_file,
        run_results_to_npz,
        save_feed_dicts_npz,
        save_npz,
    )
    from poly.compare.io.saved_inputs import StreamingDataLoader, iterate_input_file, load_inputs, save_inputs

__all__ = [
    "DataLoader",
    "ArraySampler",
    "DataLoaderCache",
    "coerce_feed_dict",
    "coerce_buffer",
    "check_feed_dict",
    "DEFAULT_DATA_LOADER_FUNC",
    "parse_script_and_func_name",
    "import_from_script",
    "DataLoaderFromScript",
    "StreamingDataLoader",
    "load_inputs",
    "save_inputs",
    "iterate_input_file",
    "META_KEY",
    "is_npz_file",
    "save_npz",
    "load_npz",
    "load_npz_file",
    "save_feed_dicts_npz",
    "load_feed_dicts_npz",
    "run_results_to_npz",
    "decode_run_results",
    "ITERATION_FILE_INDEX_WIDTH",
    "is_single_file",
    "list_iteration_files",
    "iterate_from_files",
    "IterationWriter",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "DataLoader": "poly.compare.io.data_loader",
    "ArraySampler": "poly.compare.io.data_loader",
    "DataLoaderCache": "poly.compare.io.data_loader",
    "coerce_feed_dict": "poly.compare.io.data_loader",
    "coerce_buffer": "poly.compare.io.data_loader",
    "check_feed_dict": "poly.compare.io.data_loader",
    "DEFAULT_DATA_LOADER_FUNC": "poly.compare.io.data_loader_script",
    "parse_script_and_func_name": "poly.compare.io.data_loader_script",
    "import_from_script": "poly.compare.io.data_loader_script",
    "DataLoaderFromScript": "poly.compare.io.data_loader_script",
    "StreamingDataLoader": "poly.compare.io.saved_inputs",
    "load_inputs": "poly.compare.io.saved_inputs",
    "save_inputs": "poly.compare.io.saved_inputs",
    "iterate_input_file": "poly.compare.io.saved_inputs",
    "META_KEY": "poly.compare.io.npz_codec",
    "is_npz_file": "poly.compare.io.npz_codec",
    "save_npz": "poly.compare.io.npz_codec",
    "load_npz": "poly.compare.io.npz_codec",
    "load_npz_file": "poly.compare.io.npz_codec",
    "save_feed_dicts_npz": "poly.compare.io.npz_codec",
    "load_feed_dicts_npz": "poly.compare.io.npz_codec",
    "run_results_to_npz": "poly.compare.io.npz_codec",
    "decode_run_results": "poly.compare.io.npz_codec",
    "ITERATION_FILE_INDEX_WIDTH": "poly.compare.io.iteration_files",
    "is_single_file": "poly.compare.io.iteration_files",
    "list_iteration_files": "poly.compare.io.iteration_files",
    "iterate_from_files": "poly.compare.io.iteration_files",
    "IterationWriter": "poly.compare.io.iteration_files",
})
