"""
The on-device statistics' CUDA source as files (poly/compare/stats/gpu/kernels/): it is package
data the loader finds, no Python file holds CUDA source, and the two things the host shares with
the kernels are written once and checked against the host's side by the host's C compiler:

- the sizes of ``limits.cuh``, which ``kernel_source`` reads into its constants;
- the structures of ``layouts.cuh``, which device_run's ctypes layouts and predicted_ranges' and
  device_run's NumPy records mirror field by field (size and offset of each).

Needs no GPU and no NVRTC: only a C compiler (cc, gcc or clang), skipped where there is none.
"""

from __future__ import annotations

import ctypes
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

from poly.compare.stats.gpu import device_run, kernel_source, predicted_ranges

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELS = pathlib.Path(kernel_source.__file__).parent / kernel_source.KERNEL_DIR

# What only CUDA source holds: execution-space and memory-space specifiers, a kernel launch.
_CUDA_MARKERS = re.compile(r"__global__|__device__|__shared__|__constant__|__launch_bounds__|<<<")


def cuda_markers(text: str) -> list[str]:
    """The CUDA-only tokens found in ``text``."""
    return _CUDA_MARKERS.findall(text)


def _host_layouts() -> dict[str, object]:
    """Each structure of layouts.cuh -> the host's layout of it (a ctypes type or a NumPy dtype)."""
    params_fields = dict(device_run.LaunchParams._fields_)
    return {
        "View": params_fields["a"],
        "Group": params_fields["groups"]._type_,
        "Params": device_run.LaunchParams,
        "PlanAsk": predicted_ranges.PLAN_ASK,
        "RangeTable": predicted_ranges.RANGE_TABLE,
        "Acc": np.dtype(device_run.ACC_FIELDS),
        "Part": device_run.PART_RECORD,
        "SelTarget": device_run.SELECT_TARGET,
        "SelState": device_run.SELECT_STATE,
        "PlanState": predicted_ranges.PLAN_STATE,
        "RangeTarget": predicted_ranges.RANGE_TARGET,
        "RangeSelState": predicted_ranges.RANGE_SELECT_STATE,
    }


def _python_layout(layout) -> tuple[int, dict[str, tuple[int, int]]]:
    """(size, {field: (offset, size)}) of a ctypes structure type or a NumPy record dtype."""
    if isinstance(layout, np.dtype):
        return layout.itemsize, {name: (layout.fields[name][1], layout.fields[name][0].itemsize)
                                 for name in layout.names}
    return ctypes.sizeof(layout), {name: (getattr(layout, name).offset, getattr(layout, name).size)
                                   for name, *_ in layout._fields_}


def _declared_fields(header: str) -> dict[str, list[str]]:
    """Each ``typedef struct`` of ``header``'s text -> its field names in order (the compiler checks
    offsets and sizes; this catches a field the host layout leaves out, which padding can hide)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", header, flags=re.S)
    structs = {}
    for name, body in re.findall(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*\w+\s*;", text, re.S):
        names = []
        for declaration in filter(None, (d.strip() for d in body.split(";"))):
            declarators = re.sub(r"\[[^\]]*\]", "", declaration).split(None, 1)[1]  # drop the type and the extents
            names += [d.strip() for d in declarators.split(",")]
        structs[name] = names
    return structs


def _c_compiler() -> str:
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no C compiler (cc, gcc or clang) on this machine to compile kernels/layouts.cuh with")


def _run_c(tmp_path: pathlib.Path, body: str, header: str) -> str:
    """Compiles and runs a C99 program that includes kernels/``header`` and runs ``body``; its stdout."""
    src = tmp_path / "probe.c"
    src.write_text(f'#include <stddef.h>\n#include <stdio.h>\n#include "{header}"\n\n'
                   f"int main(void) {{\n{body}    return 0;\n}}\n")
    exe = tmp_path / "probe"
    build = subprocess.run([_c_compiler(), "-std=c99", "-Wall", "-Werror", "-I", str(KERNELS), str(src), "-o", str(exe)],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, f"{header} does not compile as C:\n{build.stderr}"
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True).stdout


def _c_layouts(tmp_path: pathlib.Path, layouts: dict[str, object]) -> tuple[dict[str, int], dict[str, dict]]:
    """The sizes of the structures of layouts.cuh, and the offset and size of each field the host
    layout names, as the C compiler lays them out."""
    lines = []
    for struct, layout in layouts.items():
        lines.append(f'    printf("size {struct} %zu\\n", sizeof({struct}));\n')
        for field in _python_layout(layout)[1]:
            lines.append(f'    printf("field {struct} {field} %zu %zu\\n", offsetof({struct}, {field}), '
                         f"sizeof((({struct} *)0)->{field}));\n")
    sizes: dict[str, int] = {}
    fields: dict[str, dict] = {name: {} for name in layouts}
    for line in _run_c(tmp_path, "".join(lines), "layouts.cuh").splitlines():
        kind, struct, *rest = line.split()
        if kind == "size":
            sizes[struct] = int(rest[0])
        else:
            fields[struct][rest[0]] = (int(rest[1]), int(rest[2]))
    return sizes, fields


def test_the_marker_scan_finds_cuda_source():
    assert cuda_markers('SRC = r"""extern "C" __global__ void k() { __shared__ int x; }"""') == ["__global__", "__shared__"]
    assert cuda_markers("def launch(kernel, grid): return kernel(grid)") == []


def test_no_python_file_under_packages_holds_cuda_source():
    offenders = {}
    for path in sorted((ROOT / "packages").rglob("*.py")):
        found = cuda_markers(path.read_text(encoding="utf-8", errors="replace"))
        if found:
            offenders[str(path.relative_to(ROOT))] = sorted(set(found))
    assert not offenders, f"CUDA source belongs in .cu/.cuh files (poly/compare/stats/gpu/kernels/): {offenders}"


def test_the_loader_hands_over_every_file_the_translation_unit_includes():
    source = kernel_source.kernel_source()
    headers = dict(source.headers)
    assert source.name == "error_stats.cu" and "__global__" in source.text
    assert {"limits.cuh", "layouts.cuh"} <= set(headers)
    on_disk = {p.name for p in KERNELS.iterdir() if p.suffix in (".cu", ".cuh")}
    assert on_disk == set(headers) | {source.name}
    for name, text in [(source.name, source.text), *source.headers]:
        for included in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            assert included in headers, f"{name} includes {included}, which the loader does not hand to NVRTC"


def test_the_kernel_names_looked_up_are_the_kernels_the_files_define():
    source = kernel_source.kernel_source()
    text = "\n".join([source.text, *(t for _, t in source.headers)])
    defined = re.findall(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(', text)
    assert sorted(defined) == sorted(kernel_source.KERNEL_NAMES)


def test_a_variant_defines_only_its_own_choices():
    variant = kernel_source.KernelVariant(code_a=11, code_b=9, f32=True, xor_mode=False, int_diff=0, den_wrap=False)
    options = kernel_source.kernel_options(variant)
    assert options == ["-DPOLY_DTA=11", "-DPOLY_DTB=9", "-DPOLY_F32=1", "-DPOLY_XOR=0", "-DPOLY_INT_DIFF=0",
                       "-DPOLY_DEN_WRAP=0"]
    # a size passed again on the command line would shadow limits.cuh's and let the two drift apart
    assert not {o.split("=")[0][2:] for o in options} & set(kernel_source.LIMITS)


def test_read_limits_evaluates_defines_as_c_does():
    text = """#ifndef POLY_X_CUH
#define POLY_X_CUH
#define POLY_A 7  /* seven */
#define POLY_B (POLY_A / 2)  // C truncates
#define POLY_C ((1 << POLY_B) - 3 * POLY_A)
#define OTHER 5
#endif"""
    assert kernel_source.read_limits(text) == {"POLY_A": 7, "POLY_B": 3, "POLY_C": -13}
    with pytest.raises(ValueError, match="POLY_D"):
        kernel_source.read_limits("#define POLY_D (POLY_UNKNOWN + 1)")


def test_the_host_sizes_are_limits_cuh_as_the_c_compiler_reads_it(tmp_path):
    limits = kernel_source.LIMITS
    body = "".join(f'    printf("{name} %lld\\n", (long long)({name}));\n' for name in limits)
    compiled = {name: int(value) for name, value in
                (line.split() for line in _run_c(tmp_path, body, "limits.cuh").splitlines())}
    assert compiled == limits
    assert kernel_source.STATS_HIST_BYTES == limits["POLY_STATS_HIST_BYTES"]
    assert kernel_source.RING_BYTES == limits["POLY_RING_BYTES"]
    assert kernel_source.GATHER_STAGE_BYTES == limits["POLY_GATHER_STAGE_BYTES"]
    assert kernel_source.SELECT_TARGETS == limits["POLY_SEL_TARGETS"]


def test_every_structure_of_layouts_cuh_has_a_host_layout_with_its_fields_in_order():
    declared = _declared_fields((KERNELS / "layouts.cuh").read_text())
    layouts = _host_layouts()
    assert set(declared) == set(layouts)
    for struct, layout in layouts.items():
        assert list(_python_layout(layout)[1]) == declared[struct], f"{struct}: fields differ from layouts.cuh"


def test_the_field_reader_reads_arrays_and_several_declarators():
    header = "typedef struct T {\n    u64 lo[2 * N], hi[2 * N];  // ends\n    int x; /* one */ View a, b;\n} T;"
    assert _declared_fields(header) == {"T": ["lo", "hi", "x", "a", "b"]}


def test_the_host_layouts_match_layouts_cuh_field_by_field(tmp_path):
    layouts = _host_layouts()
    sizes, fields = _c_layouts(tmp_path, layouts)
    for struct, layout in layouts.items():
        size, python_fields = _python_layout(layout)
        assert fields[struct] == python_fields, f"{struct}: the host layout's fields (offset, size) differ from layouts.cuh"
        assert sizes[struct] == size, f"{struct}: sizeof is {sizes[struct]} in layouts.cuh, {size} on the host"


def test_the_compiled_images_cache_key_covers_every_header():
    # a kernel edited only in a header must not load an image compiled from the old text
    source = kernel_source.kernel_source()
    (name, text), *rest = source.headers
    edited = kernel_source.KernelSource(source.name, source.text, ((name, text + "\n// edited\n"), *rest))
    assert edited.fingerprint() != source.fingerprint()
    assert all(t in source.fingerprint() for _, t in source.headers) and source.text in source.fingerprint()
